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

An emit is one transaction: the outcome and its sample, or one DLQ record, and the consumed
offset that they finish (``send_offsets_to_transaction``: the partition's watermark and, in the
metadata, the finished offsets above it; ``stream.offsets``) are committed together or not at
all. A crash before the commit leaves neither the outputs nor the offset; after it, both: a
read_committed reader sees every outcome once across crashes and rebalances. Work that writes
nothing (an obsolete event) is committed by an offsets-only transaction (``commit``), which
the worker runs every ``COMMIT_INTERVAL_S`` and before it gives a partition up. The consumer
never commits. On ``claim``, after the fence is up (so no old owner's transaction can still
commit offsets), the group's committed points are read with their metadata (``OffsetReader``;
aiokafka's ``consumer.committed()`` drops the metadata) and restored into the ledger.

One producer may carry the offsets of more than one consumed partition:
``producer_partition(tp)`` maps a consumed partition to the input partition whose producer
writes for it (identity by default). A transaction of that producer commits the points of
every consumed partition mapped to it, so a second topic consumed co-partitioned with the
input (partition p of both on one worker) is written through, and fenced with, the producer of
input partition p. Readers that must not see aborted records read with
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
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError, KafkaError, ProducerFenced
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from infra.fault_points import WORKER_CAIDA_EN_TRANSACCION, fault_point
from stream.offsets import Ledger, Points

log = logging.getLogger(__name__)

ProducerFactory = Callable[[str], AIOKafkaProducer]
# The group's committed points of some partitions, metadata included (``stream.kafka``).
OffsetReader = Callable[[set[TopicPartition]], Awaitable[dict[TopicPartition, OffsetAndMetadata]]]
# A consumed partition -> the input partition whose producer writes (and commits) for it.
ProducerPartition = Callable[[TopicPartition], TopicPartition]

# T: how often finished work that wrote nothing is committed (an offsets-only transaction).
COMMIT_INTERVAL_S = 1.0


def same_partition(tp: TopicPartition) -> TopicPartition:
    """The default mapping: every consumed partition has its own producer."""
    return tp


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

    def __init__(
        self,
        factory: ProducerFactory,
        prefix: str,
        reader: OffsetReader | None = None,
        producer_partition: ProducerPartition = same_partition,
        group_id: str | None = None,
    ) -> None:
        self._factory = factory
        self._prefix = prefix
        self._reader = reader
        self._producer_partition = producer_partition
        self._group_id = group_id or prefix
        self.ledger = Ledger()
        # An owned partition maps to its producer, or to None while that producer starts.
        self._producers: dict[TopicPartition, AIOKafkaProducer | None] = {}
        self._locks: dict[TopicPartition, asyncio.Lock] = {}
        self.fenced = asyncio.Event()

    def owns(self, tp: TopicPartition) -> bool:
        """True while this worker may write for the consumed partition ``tp``."""
        return self._producer_partition(tp) in self._producers

    async def claim(self, consumed: set[TopicPartition]) -> dict[TopicPartition, int | None]:
        """Start the producers of newly assigned partitions (this fences their old owners),
        then restore the group's committed points into the ledger.

        Returns, per consumed partition, the offset to fetch from: the committed watermark, or
        None when nothing was committed (from the beginning). The partitions count as owned at
        once: a write for one whose producer is still starting waits for it. An empty
        transaction waits until the broker gave the producer its id and epoch, so the fence is
        up before the first write, and before the committed points are read: the broker has
        then ended the old owner's transaction, committed or aborted, and the points read are
        final. A failure leaves the partition owned without a producer: writes fail as
        transient until a retried ``claim`` starts it.
        """
        await self._start_producers({self._producer_partition(tp) for tp in consumed})
        points = await self._reader(consumed) if self._reader is not None else {}
        positions: dict[TopicPartition, int | None] = {}
        for tp in sorted(consumed):
            point = points.get(tp)
            self.ledger.restore(tp, point)
            positions[tp] = point.offset if point is not None and point.offset >= 0 else None
        return positions

    async def _start_producers(self, partitions: set[TopicPartition]) -> None:
        """Start (fence) the producers of these input partitions, each once, concurrently.

        Concurrently because each start waits for the broker to end the old owner's
        transaction (about a second under load): eight in a row took 8 s, which is how long
        a newly assigned worker could not fetch (``Worker._claim``).
        """
        starting = [tp for tp in sorted(partitions) if self._producers.get(tp) is None]
        locks = [self._locks.setdefault(tp, asyncio.Lock()) for tp in starting]
        for tp in starting:
            self._producers[tp] = None
        await asyncio.gather(
            *(self._start_owned(tp, lock) for tp, lock in zip(starting, locks, strict=True))
        )

    async def _start_owned(self, tp: TopicPartition, lock: asyncio.Lock) -> None:
        """Start ``tp``'s producer unless it was released or started meanwhile."""
        async with lock:
            if not self._starting(tp):
                return  # released meanwhile, or started by a concurrent claim
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

    async def release(self, consumed: set[TopicPartition]) -> None:
        """Stop the producers of partitions this worker gave up, and forget their offsets
        (commit first: ``commit(only=...)``)."""
        for tp in {self._producer_partition(tp) for tp in consumed}:
            producer = self._producers.pop(tp, None)
            if producer is not None:
                await _stop(producer)
        self.ledger.forget(consumed)

    async def close(self) -> None:
        """Stop every producer (shutdown)."""
        await self.release(set(self._producers) | self.ledger.partitions())

    async def send(
        self, tp: TopicPartition, records: Sequence[Record], offset: int | None = None
    ) -> None:
        """Write ``records`` and finish ``offset`` of the consumed partition ``tp`` in one
        transaction of its producer, committed when this returns.

        The transaction carries the commit points of every consumed partition of that
        producer, ``tp``'s counting ``offset`` as finished; the ledger marks it finished once
        the transaction is committed. Raises ``NotOwner`` if ``tp`` is not owned or the broker
        fenced its producer, ``ProducerNotStarted`` (transient) if its producer could not be
        started yet; any other failure aborts the transaction (outputs and offsets) and is
        raised for the caller's retry.
        """
        finishing = {tp: offset} if offset is not None else {}
        await self._transaction(self._producer_partition(tp), records, finishing)

    async def commit(self, only: Iterable[TopicPartition] | None = None) -> None:
        """Commit, in an offsets-only transaction per producer, the points that changed since
        the last transaction (work that wrote nothing). Failures are logged, never raised: it
        runs from the poll loop's timer, a revoke and the stop, and the next one retries."""
        wanted = {self._producer_partition(tp) for tp in only} if only is not None else None
        for ptp in sorted(self._producers):
            if wanted is not None and ptp not in wanted:
                continue
            if not self.ledger.propose(self._consumed_by(ptp)):
                continue
            try:
                await self._transaction(ptp, (), {})
            except NotOwner:
                pass
            except KafkaError as exc:
                log.warning("committing the offsets of %s failed (%s); will retry", ptp, exc)

    def _consumed_by(self, ptp: TopicPartition) -> list[TopicPartition]:
        """The consumed partitions whose offsets the producer of ``ptp`` commits."""
        return [tp for tp in self.ledger.partitions() if self._producer_partition(tp) == ptp]

    async def _transaction(
        self, ptp: TopicPartition, records: Sequence[Record], finishing: dict[TopicPartition, int]
    ) -> None:
        """One transaction of ``ptp``'s producer: the records, then the changed commit points
        of its consumed partitions (computed under the partition's lock, so no other
        transaction of this producer is open), then the commit; the ledger learns of it only
        once committed."""
        if ptp not in self._producers:
            raise _not_owner(ptp)
        async with self._locks[ptp]:
            if ptp not in self._producers:
                raise _not_owner(ptp)
            producer = self._producers[ptp]
            if producer is None:
                raise ProducerNotStarted(f"the producer of {ptp} is not started yet")
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
                self._fence(ptp, producer)
                raise NotOwner(ptp) from exc
            self.ledger.confirm(points, finishing)

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
