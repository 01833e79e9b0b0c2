"""The transactional producers of the input partitions this worker owns: the fence.

One transactional id per input partition, ``<group>.<topic>.<partition>``, the same on every
worker: the next owner's producer makes the broker refuse the old one (``ProducerFenced``).
Invariants: a write for a partition not owned raises ``NotOwner`` and writes nothing; ``start``
returns once the broker granted the epoch; a fenced producer is never replaced (the worker
rejoins); ``locked`` keeps one transaction open per producer; ``sweep`` aborts what a dead epoch
left open. What the transactions carry is ``stream.commit.emitter``'s. Why: docs/stream.md,
"Fencing".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass

from aiokafka import AIOKafkaProducer
from aiokafka.errors import KafkaConnectionError
from aiokafka.structs import OffsetAndMetadata, TopicPartition

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


class Producers:
    """One transactional producer per owned input partition, each behind its own lock."""

    def __init__(self, factory: ProducerFactory, prefix: str) -> None:
        self._factory = factory
        self._prefix = prefix
        # An owned partition maps to its producer, or to None while that producer starts.
        self._producers: dict[TopicPartition, AIOKafkaProducer | None] = {}
        self._locks: dict[TopicPartition, asyncio.Lock] = {}
        self.fenced = asyncio.Event()

    def owns(self, tp: TopicPartition) -> bool:
        """True while this worker may write for the input partition ``tp``."""
        return tp in self._producers

    def owned(self) -> list[TopicPartition]:
        """The owned input partitions, in order."""
        return sorted(self._producers)

    async def start(self, partitions: set[TopicPartition]) -> None:
        """Start (fence) the producers of these input partitions, each once, concurrently.

        The partitions count as owned at once: a write for one whose producer is still
        starting waits for it. Concurrently because each start waits for the broker to end the
        old owner's transaction (about a second under load): eight in a row took 8 s, which is
        how long a newly assigned worker could not fetch (``Worker._claim``). A failure leaves
        the partition owned without a producer: writes fail as transient until a retried
        ``start`` starts it.
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

    async def sweep(
        self,
        tp: TopicPartition,
        outputs: Sequence[str],
        offsets: Mapping[TopicPartition, OffsetAndMetadata],
        group_id: str,
    ) -> None:
        """Abort whatever a dead epoch of ``tp``'s producer left open: one transaction that
        adds every partition of ``outputs`` and the group's offsets (``offsets``: the points
        just read, so an accident that commits them changes nothing), writes no record, and
        is aborted. The broker's ABORT markers end a leftover of the same producer id in each
        of those partitions and drop its pending offset commits (docs/stream.md, "A single
        broker's crash mid-commit"). Raises ``NotOwner`` as ``locked`` does."""
        async with self.locked(tp) as producer:
            partitions = [
                TopicPartition(topic, number)
                for topic in outputs
                for number in sorted(await producer.partitions_for(topic))
            ]
            await producer.begin_transaction()
            try:
                for output in partitions:
                    _add_partition(producer, output)
                if offsets:
                    await producer.send_offsets_to_transaction(dict(offsets), group_id)
            finally:
                await producer.abort_transaction()

    async def release(self, partitions: set[TopicPartition]) -> None:
        """Stop the producers of input partitions this worker gave up."""
        for tp in partitions:
            producer = self._producers.pop(tp, None)
            if producer is not None:
                await _stop(producer)

    @contextlib.asynccontextmanager
    async def locked(self, tp: TopicPartition) -> AsyncIterator[AIOKafkaProducer]:
        """The producer of the owned input partition ``tp``, under its lock for one transaction.

        Raises ``NotOwner`` if ``tp`` is not owned (checked again once the lock is held),
        ``ProducerNotStarted`` if its producer could not be started yet.
        """
        if tp not in self._producers:
            raise _not_owner(tp)
        async with self._locks[tp]:
            if tp not in self._producers:
                raise _not_owner(tp)
            producer = self._producers[tp]
            if producer is None:
                raise ProducerNotStarted(f"the producer of {tp} is not started yet")
            yield producer

    def fence(
        self, tp: TopicPartition, producer: AIOKafkaProducer, failure: BaseException | None = None
    ) -> NotOwner:
        """Another producer took ``tp``'s transactional id, or ours failed for good
        (``failure``): drop ours, ask for a rejoin; the ``NotOwner`` to raise. The rejoin's
        claim starts a new producer if the partition comes back to this worker."""
        if failure is None:
            log.warning(
                "the broker fenced the producer of %s: another worker owns it now; "
                "nothing more is written for it until the group assigns it again",
                tp,
            )
        else:
            log.warning(
                "the producer of %s failed for good (%s: %s); the worker gives its partitions "
                "back and takes them again with a new producer",
                tp,
                type(failure).__name__,
                failure,
            )
        if self._producers.get(tp) is producer:
            del self._producers[tp]
        task = asyncio.ensure_future(_stop(producer))
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)
        self.fenced.set()
        return NotOwner(tp)


def failed_for_good(producer: AIOKafkaProducer) -> bool:
    """aiokafka's producer is unusable: its sender task died (an error no handler expected,
    after a broker outage), every later transaction fails, and only a new producer (a new
    epoch for the same transactional id) writes again."""
    manager = producer._txn_manager  # aiokafka keeps the state there and shows no public flag
    return manager is not None and bool(manager.is_fatal_error())


def _add_partition(producer: AIOKafkaProducer, tp: TopicPartition) -> None:
    """Put ``tp`` in the open transaction without a record: aiokafka 0.14 adds a partition
    only at a send, and its sender sends the pending AddPartitionsToTxn before EndTxn, so an
    abort then reaches ``tp`` as a marker (tests/stream/commit/test_barrido.py keeps this)."""
    producer._txn_manager.maybe_add_partition_to_txn(tp)


def _not_owner(tp: TopicPartition) -> NotOwner:
    """The refusal of a write for a partition this worker does not own, said once in the log
    (the event's fields come from its log context)."""
    log.warning("not writing for %s: the partition is not this worker's (revoked)", tp)
    return NotOwner(tp)


async def _stop(producer: AIOKafkaProducer) -> None:
    """Stop a producer; an open transaction is aborted by the broker or by the next owner."""
    with contextlib.suppress(Exception):
        await producer.stop()
