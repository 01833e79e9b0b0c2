"""One lane per SKU: its events (and people's decisions on it) one after another, SKUs concurrently.

A lane is a queue and the task that empties it. For each item the lane notes the newest version
of the SKU queued behind it, hands both to the handler (which decides, with what the version
store knows, whether the item is obsolete: ``versiones``), and ends the item's ticket
through ``InFlight.settle``: finished whatever the handler's outcome (emitted, obsolete, DLQ),
abandoned when the partition was lost (``NotOwner``) or the lane was cancelled. The item's
event context (``grafo.contexto.sobre_evento``: its sku, event_id and version on every log
line) is entered here, once, around all of it. On a revoke, queued items of the lost partitions
are abandoned, running ones get the grace period, and the lanes still running one when it ends
are cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from aiokafka import TopicPartition

from esquemas import EventoCambio
from grafo.contexto import sobre_evento
from infra.tasks import await_chain
from stream.commit.inflight import InFlight, Ticket

log = logging.getLogger(__name__)


class LaneItem(Protocol):
    """What a lane needs of a piece of work: its ticket, and the SKU, version and id it is
    about. A supplier event (``Item``) and a person's decision (``stream.flow.decisiones``) both
    queue in their SKU's lane, so one SKU's outputs are written one after another."""

    @property
    def ticket(self) -> Ticket: ...

    @property
    def tp(self) -> TopicPartition: ...

    @property
    def sku(self) -> str: ...

    @property
    def version(self) -> int: ...

    @property
    def event_id(self) -> str: ...


@dataclass(eq=False)
class Item:
    """One valid event in its SKU's lane."""

    ticket: Ticket
    evento: EventoCambio

    @property
    def tp(self) -> TopicPartition:
        """The input partition the event came from."""
        return self.ticket.tp

    @property
    def sku(self) -> str:
        """The event's SKU: its lane."""
        return self.evento.sku

    @property
    def version(self) -> int:
        """The event's version of its SKU."""
        return self.evento.version

    @property
    def event_id(self) -> str:
        """The event's id."""
        return self.evento.event_id


@dataclass
class _Lane:
    """The queue of one SKU; ``task`` runs it while it is not empty."""

    items: deque[LaneItem] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    current: LaneItem | None = None


# The handler: (item, the newest version of its SKU queued behind it, or None) -> anything;
# raises NotOwner when the partition was lost. Its outcome is the handler's business; the
# lane finishes the item.
Handle = Callable[[LaneItem, int | None], Awaitable[object]]


class Lanes:
    """The per-SKU queues of one worker."""

    def __init__(self, inflight: InFlight, handle: Handle) -> None:
        self._inflight = inflight
        self._handle = handle
        self._lanes: dict[str, _Lane] = {}
        self._stopped = False

    def add(self, item: LaneItem) -> None:
        """Queue the item behind its SKU's earlier ones; start the lane if it is idle."""
        sku = item.sku
        lane = self._lanes.setdefault(sku, _Lane())
        lane.items.append(item)
        if lane.task is None:
            lane.task = asyncio.create_task(self._run(sku, lane))

    async def _run(self, sku: str, lane: _Lane) -> None:
        """Handle one SKU's events in order until its queue is empty."""
        try:
            while lane.items and not self._stopped:
                item = lane.items.popleft()
                lane.current = item
                try:
                    await self._step(item, _newest_waiting(lane))
                finally:
                    lane.current = None
        finally:
            lane.task = None
            if not lane.items and self._lanes.get(sku) is lane:
                del self._lanes[sku]

    async def _step(self, item: LaneItem, newest_waiting: int | None) -> None:
        """Run the item under its event context; its ticket ends in ``InFlight.settle``."""
        self._inflight.start(item.ticket)
        with sobre_evento(item.sku, item.event_id, item.version):
            await self._inflight.settle(item.ticket, self._handle(item, newest_waiting))

    def drop(self, partitions: set[TopicPartition] | None = None) -> None:
        """Abandon queued (not started) items of these partitions (all, if None)."""
        for lane in self._lanes.values():
            kept: deque[LaneItem] = deque()
            for item in lane.items:
                if partitions is None or item.tp in partitions:
                    self._inflight.abandon(item.ticket)
                else:
                    kept.append(item)
            lane.items = kept

    def stop(self) -> None:
        """Start no new item (draining); the running ones finish."""
        self._stopped = True
        self.drop()

    async def release(self, partitions: set[TopicPartition], grace_s: float) -> None:
        """A revoke: drop the queued items, let running ones finish within the grace period,
        then cancel the lanes still running one."""
        self.drop(partitions)
        running = self._inflight.running(partitions)
        if running:  # on-call reads how much a rebalance had to wait for (and tests assert it)
            log.info("revoked %d partitions with %d fichas running", len(partitions), running)
        deadline = time.monotonic() + grace_s
        while self._inflight.running(partitions) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if self._inflight.running(partitions):
            await self._cancel(partitions)

    async def _cancel(self, partitions: set[TopicPartition]) -> None:
        """Cancel the lanes still running an item of a lost partition, and wait for them."""
        tasks = []
        for lane in self._lanes.values():
            if lane.task is None or lane.current is None or lane.current.tp not in partitions:
                continue
            # where it waited, so a hang says where (docs/stream.md, «Two workers silent…»)
            log.warning(
                "cancelling %s (%s v%d) of %s, waiting at: %s",
                lane.current.event_id,
                lane.current.sku,
                lane.current.version,
                lane.current.tp,
                await_chain(lane.task),
            )
            tasks.append(lane.task)
        for task in tasks:
            task.cancel()
        if tasks:
            log.warning(
                "grace period over: cancelled %d running fichas of lost partitions", len(tasks)
            )
            await asyncio.gather(*tasks, return_exceptions=True)


def _newest_waiting(lane: _Lane) -> int | None:
    """The newest version of the lane's SKU queued behind the item taken (None: none queued)."""
    return max((other.version for other in lane.items), default=None)
