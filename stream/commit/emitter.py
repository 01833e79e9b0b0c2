"""Every write of the worker and every offset it commits: what, in which transaction, when.

What: each consumed partition's commit point from ``stream.commit.ledger``. Which transaction:
always one of the input partition's producer (``stream.commit.producers``, the fence), which
carries the points of every partition mapped to it (``producer_partition``). When: at every
emit (``send``: the records, then the points, then the commit: both or neither); every
``COMMIT_INTERVAL_S`` for work that wrote nothing (``commit_if_due``); before partitions are
given up or the worker stops (``final_commit``). At ``claim`` the group's points are read and
restored into the ledger, and each claimed producer's sweep aborts what a dead epoch left open
(``Producers.sweep``). Why each rule: docs/stream.md, "Offsets inside the output transaction"
and "A single broker's crash mid-commit".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence

from aiokafka.errors import ProducerFenced
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from infra.fault_points import WORKER_CAIDA_EN_TRANSACCION, fault_point
from stream.commit.ledger import Ledger, Points
from stream.commit.producers import NotOwner, ProducerFactory, Producers, Record, failed_for_good

log = logging.getLogger(__name__)

# The group's committed points of some partitions, metadata included (``infra.kafka.clients``).
OffsetReader = Callable[[set[TopicPartition]], Awaitable[dict[TopicPartition, OffsetAndMetadata]]]
# A consumed partition -> the input partition whose producer writes (and commits) for it.
ProducerPartition = Callable[[TopicPartition], TopicPartition]

# T: how often finished work that wrote nothing is committed (an offsets-only transaction).
COMMIT_INTERVAL_S = 1.0
# How long a revoke or the stop waits for its offsets' commit: a transaction waits for the
# broker's coordinators without a limit of its own, and a revoke must not hold the group.
FINAL_COMMIT_WAIT_S = 15.0


def same_partition(tp: TopicPartition) -> TopicPartition:
    """The default mapping: every consumed partition has its own producer."""
    return tp


class Emitter:
    """The worker's writes and commits: the one place that checks a write is for a partition
    this worker owns (``send`` raises ``NotOwner``) and decides what each transaction commits."""

    def __init__(
        self,
        factory: ProducerFactory,
        prefix: str,
        reader: OffsetReader | None = None,
        producer_partition: ProducerPartition = same_partition,
        group_id: str | None = None,
        outputs: Sequence[str] = (),
    ) -> None:
        self._producers = Producers(factory, prefix)
        self._outputs = tuple(outputs)
        self._reader = reader
        self._producer_partition = producer_partition
        self._group_id = group_id or prefix
        self.ledger = Ledger()
        self.fenced = self._producers.fenced
        self._last_commit = time.monotonic()
        self._commit_task: asyncio.Task[None] | None = None

    def owns(self, tp: TopicPartition) -> bool:
        """True while this worker may write for the consumed partition ``tp``."""
        return self._producers.owns(self._producer_partition(tp))

    # ------------------------------------------------------------------ taking and giving up

    async def claim(self, consumed: set[TopicPartition]) -> dict[TopicPartition, int | None]:
        """Fence the old owners of newly assigned partitions, then restore the group's
        committed points into the ledger.

        Returns, per consumed partition, the offset to fetch from: the committed watermark, or
        None when nothing was committed (from the beginning). The points are read only once
        every producer's epoch is granted: the broker has then ended the old owner's
        transaction, committed or aborted, and the points read are final.
        """
        claimed = {self._producer_partition(tp) for tp in consumed}
        await self._producers.start(claimed)
        points = await self._reader(consumed) if self._reader is not None else {}
        if self._outputs:
            await self._sweep(claimed, consumed, points)
        positions: dict[TopicPartition, int | None] = {}
        for tp in sorted(consumed):
            point = points.get(tp)
            self.ledger.restore(tp, point)
            positions[tp] = point.offset if point is not None and point.offset >= 0 else None
        return positions

    async def _sweep(
        self,
        claimed: set[TopicPartition],
        consumed: set[TopicPartition],
        points: dict[TopicPartition, OffsetAndMetadata],
    ) -> None:
        """Each claimed producer aborts what its dead epochs left open in the outputs and the
        group's offsets (``Producers.sweep``), with the points just read (offset 0, which
        reads as "from the beginning", where none was committed)."""

        async def one(ptp: TopicPartition) -> None:
            offsets = {
                tp: _committed_or_start(points.get(tp))
                for tp in consumed
                if self._producer_partition(tp) == ptp
            }
            await self._producers.sweep(ptp, self._outputs, offsets, self._group_id)

        await asyncio.gather(*(one(ptp) for ptp in sorted(claimed)))

    async def release(self, consumed: set[TopicPartition]) -> None:
        """Stop the producers of partitions this worker gave up, and forget their offsets
        (commit first: ``final_commit``)."""
        await self._producers.release({self._producer_partition(tp) for tp in consumed})
        self.ledger.forget(consumed)

    async def close(self) -> None:
        """Stop every producer (shutdown)."""
        await self.release(set(self._producers.owned()) | self.ledger.partitions())

    # ------------------------------------------------------------------ transactions

    async def send(
        self, tp: TopicPartition, records: Sequence[Record], offset: int | None = None
    ) -> None:
        """Write ``records`` and finish ``offset`` of the consumed partition ``tp`` in one
        transaction of its producer, committed when this returns.

        Raises ``NotOwner`` if ``tp`` is not owned or the broker fenced its producer,
        ``ProducerNotStarted`` (transient) if its producer could not be started yet; any other
        failure aborts the transaction (outputs and offsets) and is raised for the caller's
        retry.
        """
        finishing = {tp: offset} if offset is not None else {}
        await self._transaction(self._producer_partition(tp), records, finishing)

    async def commit(self, only: Iterable[TopicPartition] | None = None) -> None:
        """Commit, in an offsets-only transaction per producer, the points that changed since
        the last transaction (work that wrote nothing). Failures are logged, never raised: it
        runs from the poll loop's timer, a revoke and the stop, and the next one retries."""
        wanted = {self._producer_partition(tp) for tp in only} if only is not None else None
        for ptp in self._producers.owned():
            if wanted is not None and ptp not in wanted:
                continue
            if not self.ledger.propose(self._consumed_by(ptp)):
                continue
            try:
                await self._transaction(ptp, (), {})
            except NotOwner:
                pass
            except Exception as exc:  # a timer's task: nobody would see what it raises
                log.warning("committing the offsets of %s failed (%s); will retry", ptp, exc)

    def _consumed_by(self, ptp: TopicPartition) -> list[TopicPartition]:
        """The consumed partitions whose offsets the producer of ``ptp`` commits."""
        return [tp for tp in self.ledger.partitions() if self._producer_partition(tp) == ptp]

    async def _transaction(
        self, ptp: TopicPartition, records: Sequence[Record], finishing: dict[TopicPartition, int]
    ) -> None:
        """One transaction of ``ptp``'s producer, run to its end even if the caller is
        cancelled (a revoke's grace period over): cancelled while aiokafka commits, the
        transaction still commits, and a ledger that never learnt of it would let the next
        transaction commit a point without its offset, which the next owner handles again (a
        duplicate). Shielded, the ledger learns of the commit before the lock is free."""
        task = asyncio.ensure_future(self._transaction_locked(ptp, records, finishing))
        task.add_done_callback(_retrieve)
        await asyncio.shield(task)

    async def _transaction_locked(
        self, ptp: TopicPartition, records: Sequence[Record], finishing: dict[TopicPartition, int]
    ) -> None:
        """The records, then the changed commit points of ``ptp``'s consumed partitions
        (computed under the partition's lock, so no other transaction of this producer is
        open), then the commit; the ledger learns of it only once committed, still under the
        lock."""
        async with self._producers.locked(ptp) as producer:
            points: Points = {}
            try:
                async with producer.transaction():
                    for record in records:
                        await producer.send_and_wait(
                            record.topic, record.value, key=record.key, headers=record.headers
                        )
                    points = self.ledger.propose(self._consumed_by(ptp), finishing)
                    if points:
                        await producer.send_offsets_to_transaction(points, self._group_id)
                    if records:
                        fault_point(WORKER_CAIDA_EN_TRANSACCION)
            except ProducerFenced as exc:
                raise self._producers.fence(ptp, producer) from exc
            except Exception as exc:
                if failed_for_good(producer):
                    raise self._producers.fence(ptp, producer, exc) from exc
                raise
            self.ledger.confirm(points, finishing)

    # ------------------------------------------------------------------ commits of no writes

    def commit_if_due(self) -> None:
        """Every ``COMMIT_INTERVAL_S``, commit finished work that wrote nothing (obsolete
        events, offsets skipped from the metadata) in offsets-only transactions, in a task of
        its own: a transaction waits for the partition's emit in flight, and a broker outage
        must not stop the poll loop's fetches and pauses."""
        if self._commit_task is not None:
            return
        if time.monotonic() - self._last_commit < COMMIT_INTERVAL_S:
            return
        self._last_commit = time.monotonic()

        async def commit() -> None:
            try:
                await self.commit()
            finally:
                self._commit_task = None

        self._commit_task = asyncio.create_task(commit())

    async def final_commit(self, partitions: set[TopicPartition] | None) -> None:
        """Commit what finished on these partitions (all, if None) before they are given up,
        after a periodic commit in flight; at most ``FINAL_COMMIT_WAIT_S`` in all. What is
        not committed by then is work that wrote nothing (every emit committed its own
        offset): the next owner handles it again, without a duplicate."""

        async def commit() -> None:
            if self._commit_task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._commit_task)
            await self.commit(only=partitions)

        task = asyncio.create_task(commit())
        done, _ = await asyncio.wait({task}, timeout=FINAL_COMMIT_WAIT_S)
        if not done:
            task.add_done_callback(lambda t: t.cancelled() or t.exception())
            log.warning(
                "the offsets of %s were not committed within %.0f s; their next owner "
                "handles again the finished events that wrote nothing",
                "every partition" if partitions is None else sorted(map(str, partitions)),
                FINAL_COMMIT_WAIT_S,
            )


def _committed_or_start(point: OffsetAndMetadata | None) -> OffsetAndMetadata:
    """A partition's committed point, or offset 0 (read back as "from the beginning") where
    nothing was committed."""
    return point if point is not None and point.offset >= 0 else OffsetAndMetadata(0, "")


def _retrieve(task: asyncio.Future[None]) -> None:
    """Mark the outcome of a transaction whose caller was cancelled as seen (its failure is
    the caller's retry to handle, and the caller is gone)."""
    if not task.cancelled():
        task.exception()
