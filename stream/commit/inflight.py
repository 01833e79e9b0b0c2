"""What the worker fetched and has not finished: the one owner of the commit ledger's calls.

Every fetched message gets a ``Ticket`` at ``accept`` and leaves in exactly one of two ways:

* ``finish``: its outcome or DLQ record is written (its transaction committed the offset too),
  or it writes nothing (obsolete); the ledger may commit past its offset.
* ``abandon``: its partition was lost (revoked, or cancelled at the end of the grace period);
  it leaves the buffer but stays pending in the ledger, so this worker never commits past it
  and the partition's new owner handles it.

Whichever comes first wins; a second end of the same ticket changes nothing. Between the two,
``start`` marks it running, which is what a revoke waits for. The count of pending tickets is
the buffer that flow control caps. ``settle`` is the one way a piece of work ends its ticket:
the SKU lanes and the worker's DLQ writes for invalid messages both finish through it.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable
from dataclasses import dataclass

from aiokafka import ConsumerRecord, TopicPartition

from stream.commit.ledger import Ledger
from stream.commit.producers import NotOwner
from stream.metricas.sensor import WorkerSensor


@dataclass(eq=False)
class Ticket:
    """One fetched message, from ``accept`` until ``finish`` or ``abandon``."""

    tp: TopicPartition
    record: ConsumerRecord
    received: float  # time.monotonic() at accept
    running: bool = False
    closed: bool = False

    @property
    def offset(self) -> int:
        """The message's offset in its partition."""
        return int(self.record.offset)


class InFlight:
    """Pending and running tickets, and the ledger calls they cause."""

    def __init__(self, ledger: Ledger, sensor: WorkerSensor) -> None:
        self._ledger = ledger
        self._sensor = sensor
        self._pending = 0
        self._running: dict[TopicPartition, int] = {}

    @property
    def pending(self) -> int:
        """Fetched messages neither finished nor abandoned."""
        return self._pending

    def accept(self, tp: TopicPartition, record: ConsumerRecord) -> Ticket | None:
        """A message was fetched: it holds back its partition's commit until ``finish``.

        None when it must not be handled: the committed metadata lists it as finished (the
        previous owner committed its outputs), or it was fetched before the assignment's seek.
        """
        if not self._ledger.received(tp, record.offset, record.timestamp / 1000):
            return None
        self._count(+1)
        return Ticket(tp, record, time.monotonic())

    def start(self, ticket: Ticket) -> None:
        """The ticket's lane began handling it."""
        ticket.running = True
        self._running[ticket.tp] = self._running.get(ticket.tp, 0) + 1

    def finish(self, ticket: Ticket) -> None:
        """Handled (emitted, obsolete or in the DLQ): the commit may pass its offset. An emit's
        transaction has committed the offset already; one that wrote nothing is committed by
        the next offsets-only transaction."""
        if self._close(ticket):
            self._ledger.done(ticket.tp, ticket.offset)

    def abandon(self, ticket: Ticket) -> None:
        """Not handled here (partition lost): it stays pending in the ledger."""
        self._close(ticket)

    async def settle(self, ticket: Ticket, work: Awaitable[object]) -> None:
        """Await the ticket's work, then end the ticket by how it went.

        Whatever the work returned (emitted, obsolete, in the DLQ), the ticket is finished.
        ``NotOwner`` (the partition was lost, nothing was written) abandons it; so does a
        cancellation at the end of a revoke's grace period or a bug, which is raised again.
        """
        try:
            await work
        except NotOwner:
            self.abandon(ticket)
            return
        except BaseException:
            self.abandon(ticket)
            raise
        self.finish(ticket)

    def running(self, partitions: set[TopicPartition] | None = None) -> int:
        """Started tickets of these partitions (of all, if None) still running."""
        return sum(
            count for tp, count in self._running.items() if partitions is None or tp in partitions
        )

    def _close(self, ticket: Ticket) -> bool:
        """End a ticket once; False when it had already ended."""
        if ticket.closed:
            return False
        ticket.closed = True
        if ticket.running:
            ticket.running = False
            self._running[ticket.tp] -= 1
        self._count(-1)
        return True

    def _count(self, delta: int) -> None:
        self._pending += delta
        self._sensor.set_in_flight(self._pending)
