"""One lane per SKU: its events one after another in offset order, SKUs concurrently.

A lane is a queue and the task that empties it. For each item the lane asks whether a newer
version of the SKU waits behind it (``stream.versiones.obsoleta``), hands the item to the
handler, and ends the item's ticket in one place: ``finish`` whatever the handler's outcome
(emitted, obsolete, DLQ), ``abandon`` when the partition was lost (``NotOwner``) or the lane
was cancelled. On a revoke, queued items of the lost partitions are abandoned, running ones
get the grace period, and the lanes still running one when it ends are cancelled.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiokafka import TopicPartition

from esquemas import EventoCambio
from stream.emitter import NotOwner
from stream.inflight import InFlight, Ticket
from stream.versiones import obsoleta

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Item:
    """One valid event in its SKU's lane."""

    ticket: Ticket
    evento: EventoCambio

    @property
    def tp(self) -> TopicPartition:
        """The input partition the event came from."""
        return self.ticket.tp


@dataclass
class _Lane:
    """The queue of one SKU; ``task`` runs it while it is not empty."""

    items: deque[Item] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    current: Item | None = None


# The handler: (item, a newer version waits behind it) -> anything; raises NotOwner when the
# partition was lost. Its outcome is the handler's business; the lane finishes the item.
Handle = Callable[[Item, bool], Awaitable[object]]


class Lanes:
    """The per-SKU queues of one worker."""

    def __init__(self, inflight: InFlight, handle: Handle) -> None:
        self._inflight = inflight
        self._handle = handle
        self._lanes: dict[str, _Lane] = {}
        self._stopped = False

    def add(self, item: Item) -> None:
        """Queue the item behind its SKU's earlier ones; start the lane if it is idle."""
        sku = item.evento.sku
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
                    await self._step(item, _newer_waiting(lane, item))
                finally:
                    lane.current = None
        finally:
            lane.task = None
            if not lane.items and self._lanes.get(sku) is lane:
                del self._lanes[sku]

    async def _step(self, item: Item, newer_waiting: bool) -> None:
        """The one place an item's ticket ends: finished, or abandoned with its partition."""
        self._inflight.start(item.ticket)
        try:
            await self._handle(item, newer_waiting)
        except NotOwner:
            self._inflight.abandon(item.ticket)
            return
        except BaseException:  # cancelled at the end of the grace period, or a bug
            self._inflight.abandon(item.ticket)
            raise
        self._inflight.finish(item.ticket)

    def drop(self, partitions: set[TopicPartition] | None = None) -> None:
        """Abandon queued (not started) items of these partitions (all, if None)."""
        for lane in self._lanes.values():
            kept: deque[Item] = deque()
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
        tasks = [
            lane.task
            for lane in self._lanes.values()
            if lane.task is not None and lane.current is not None and lane.current.tp in partitions
        ]
        for task in tasks:
            task.cancel()
        if tasks:
            log.warning(
                "grace period over: cancelled %d running fichas of lost partitions", len(tasks)
            )
            await asyncio.gather(*tasks, return_exceptions=True)


def _newer_waiting(lane: _Lane, item: Item) -> bool:
    """A newer version of the same SKU is queued behind: this one would be overwritten."""
    newest = max((other.evento.version for other in lane.items), default=None)
    return obsoleta(item.evento.version, newest)
