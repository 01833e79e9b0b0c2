"""Every write of the worker goes through the transactional producer of its input partition.

Why: a worker that lost a partition (stopped past its session, stalled, partitioned away) may
still be holding a finished ficha, or be half-way through writing it. The outcome record and
the per-SKU compare-and-set in the version store decide *what* may be written; they cannot stop
a write that was decided before the partition moved and reaches the broker after the new owner
wrote something newer. The broker can: each input partition has one transactional id,
``<group>.<topic>.<partition>``; the worker that takes the partition starts a producer with that
id, and the broker bumps the id's epoch, aborts the old owner's open transaction and refuses
every later write of the old producer (``ProducerFenced``). So a zombie's record is either in
the log before the new owner's first write, or aborted, or never written.

An emit is one transaction: the outcome and its sample, or one DLQ record, are committed
together or not at all. Readers that must not see aborted records read with
``isolation_level="read_committed"`` (docs/contrato.md).

A fenced producer is never replaced by this worker on its own: doing so would fence the new
owner in turn. The partition counts as lost (``NotOwner``) until the group assigns it again,
and ``fenced`` tells the worker to rejoin the group, which also recovers the one case where
nobody else took the partition (a transaction left open past ``transaction_timeout_ms``, which
the broker aborts by bumping the epoch itself).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, ProducerFenced
from aiokafka.structs import TopicPartition

log = logging.getLogger(__name__)

ProducerFactory = Callable[[str], AIOKafkaProducer]


class NotOwner(Exception):
    """The partition is not (or no longer) this worker's: nothing was written for it."""


class ProducerNotStarted(KafkaConnectionError):
    """An owned partition's producer could not be started yet (a transient broker failure)."""


@dataclass(frozen=True)
class Record:
    """One message to write."""

    topic: str
    value: bytes
    key: bytes | None
    headers: list[tuple[str, bytes]]


def transactional_id(prefix: str, tp: TopicPartition) -> str:
    """The one transactional id of an input partition, the same on every worker of the group."""
    return f"{prefix}.{tp.topic}.{tp.partition}"


class Emitter:
    """One transactional producer per owned input partition; the one place that checks a
    write is for a partition this worker owns (``send`` raises ``NotOwner``)."""

    def __init__(self, factory: ProducerFactory, prefix: str) -> None:
        self._factory = factory
        self._prefix = prefix
        # An owned partition maps to its producer, or to None while that producer starts.
        self._producers: dict[TopicPartition, AIOKafkaProducer | None] = {}
        self._locks: dict[TopicPartition, asyncio.Lock] = {}
        self.fenced = asyncio.Event()

    def owns(self, tp: TopicPartition) -> bool:
        """True while this worker may write for ``tp``."""
        return tp in self._producers

    async def claim(self, partitions: set[TopicPartition]) -> None:
        """Start the producers of newly assigned partitions; this fences their old owners.

        The partitions count as owned at once: a write for one whose producer is still
        starting waits for it (events are fetched while this runs). An empty transaction waits
        until the broker gave the producer its id and epoch, so the fence is up before the
        first write. A failure leaves the partition owned without a producer: writes fail as
        transient until a retried ``claim`` starts it.
        """
        starting = [tp for tp in sorted(partitions) if self._producers.get(tp) is None]
        locks = [self._locks.setdefault(tp, asyncio.Lock()) for tp in starting]
        for tp in starting:
            self._producers[tp] = None
        for tp, lock in zip(starting, locks, strict=True):
            async with lock:
                if not self._starting(tp):
                    continue  # released meanwhile, or started by a concurrent claim
                producer = await self._start(tp)
                if self._starting(tp):
                    self._producers[tp] = producer
                else:
                    await _stop(producer)

    def _starting(self, tp: TopicPartition) -> bool:
        """``tp`` is owned and its producer is not started."""
        return tp in self._producers and self._producers[tp] is None

    async def _start(self, tp: TopicPartition) -> AIOKafkaProducer:
        """A started producer of ``tp``'s transactional id, its epoch granted by the broker."""
        producer = self._factory(transactional_id(self._prefix, tp))
        try:
            await producer.start()
            await producer.begin_transaction()
            await producer.commit_transaction()
        except BaseException:
            await _stop(producer)
            raise
        return producer

    async def release(self, partitions: set[TopicPartition]) -> None:
        """Stop the producers of partitions this worker gave up."""
        for tp in partitions:
            producer = self._producers.pop(tp, None)
            if producer is not None:
                await _stop(producer)

    async def close(self) -> None:
        """Stop every producer (shutdown)."""
        await self.release(set(self._producers))

    async def send(self, tp: TopicPartition, records: Sequence[Record]) -> None:
        """Write ``records`` in one transaction of ``tp``'s producer, acknowledged by the broker.

        Raises ``NotOwner`` if ``tp`` is not owned or the broker fenced its producer,
        ``ProducerNotStarted`` (transient) if its producer could not be started yet; any other
        failure aborts the transaction and is raised for the caller's retry.
        """
        if tp not in self._producers:
            raise _not_owner(tp)
        async with self._locks[tp]:
            if tp not in self._producers:
                raise _not_owner(tp)
            producer = self._producers[tp]
            if producer is None:
                raise ProducerNotStarted(f"the producer of {tp} is not started yet")
            try:
                async with producer.transaction():
                    for record in records:
                        await producer.send_and_wait(
                            record.topic, record.value, key=record.key, headers=record.headers
                        )
            except ProducerFenced as exc:
                self._fence(tp, producer)
                raise NotOwner(tp) from exc

    def _fence(self, tp: TopicPartition, producer: AIOKafkaProducer) -> None:
        """Another producer took ``tp``'s transactional id: drop ours, ask for a rejoin."""
        log.warning(
            "the broker fenced the producer of %s: another worker owns it now; "
            "nothing more is written for it until the group assigns it again",
            tp,
        )
        if self._producers.get(tp) is producer:
            del self._producers[tp]
        task = asyncio.ensure_future(_stop(producer))
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        self.fenced.set()


def _not_owner(tp: TopicPartition) -> NotOwner:
    """The refusal of a write for a partition this worker does not own, said once in the log
    (the event's fields come from its log context)."""
    log.warning("not writing for %s: the partition is not this worker's (revoked)", tp)
    return NotOwner(tp)


async def _stop(producer: AIOKafkaProducer) -> None:
    """Stop a producer; an open transaction is aborted by the broker or by the next owner."""
    with contextlib.suppress(Exception):
        await producer.stop()
