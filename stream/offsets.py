"""The commit ledger: which offset of each partition may be committed, and when to commit it.

Everything that feeds the commit rule lives here: the per-partition trackers, the commit
interval, the commit call, and forgetting a partition once it is revoked. The worker only
tells the ledger that a message was received or fully handled.

faust-streaming 0.15 commits past the head in-flight message under concurrency (upstream
issue 606, fix still open as PR 707): with the committed offset at N and N+1.. acked while N
is still processing, it commits past N, and a SIGKILL then loses N. This rule is the
worker's own, small enough to prove by tests: the committable offset of a partition is the
smallest offset still pending, or one past the highest offset seen when nothing is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

log = logging.getLogger(__name__)

COMMIT_INTERVAL_S = 1.0


@dataclass
class PartitionOffsets:
    """Offsets of one partition that were received and are not yet fully handled."""

    pending: set[int] = field(default_factory=set)
    highest_seen: int = -1
    committed: int | None = None
    timestamps: dict[int, float] = field(default_factory=dict)  # pending offset -> event time, s
    progress_at: float = field(default_factory=time.time)  # wall clock of the last ``done``

    def received(self, offset: int, timestamp_s: float | None = None) -> None:
        """A message was fetched; it stays pending until its outcome is acknowledged."""
        self.pending.add(offset)
        self.highest_seen = max(self.highest_seen, offset)
        self.timestamps[offset] = timestamp_s if timestamp_s is not None else time.time()

    def done(self, offset: int) -> None:
        """The message's outcome (or DLQ record, or obsolete mark) is safely written."""
        self.pending.discard(offset)
        self.timestamps.pop(offset, None)
        self.progress_at = time.time()

    def oldest_age_s(self, lag: int, now: float) -> float:
        """Age of the oldest event not yet handled: of the oldest pending message when one is
        fetched; while the partition has lag but nothing fetched (paused), the time since it
        last made progress; 0 when it is caught up."""
        if self.pending:
            return max(0.0, now - self.timestamps.get(min(self.pending), now))
        if lag > 0:
            return max(0.0, now - self.progress_at)
        return 0.0

    def committable(self) -> int | None:
        """The next offset to commit (Kafka's "next to read"), or None if nothing changed."""
        if self.highest_seen < 0:
            return None
        target = min(self.pending) if self.pending else self.highest_seen + 1
        if self.committed is not None and target <= self.committed:
            return None
        return target

    def mark_committed(self, offset: int) -> None:
        """Remember what the broker accepted, so the same offset is not committed twice."""
        self.committed = offset if self.committed is None else max(self.committed, offset)


class Ledger:
    """Offsets of every partition this worker holds, and the commits made from them."""

    def __init__(self, consumer: AIOKafkaConsumer, interval_s: float = COMMIT_INTERVAL_S) -> None:
        self._consumer = consumer
        self._interval_s = interval_s
        self._partitions: dict[TopicPartition, PartitionOffsets] = {}
        self._last_commit = time.monotonic()

    def received(self, tp: TopicPartition, offset: int, timestamp_s: float | None = None) -> None:
        """A message was fetched: it holds back its partition's commit until ``done``."""
        self.track(tp).received(offset, timestamp_s)

    def track(self, tp: TopicPartition) -> PartitionOffsets:
        """The tracker of ``tp``, created on first use (at assignment or first fetch)."""
        return self._partitions.setdefault(tp, PartitionOffsets())

    def done(self, tp: TopicPartition, offset: int) -> None:
        """A message is fully handled (ignored for a partition already forgotten)."""
        offsets = self._partitions.get(tp)
        if offsets is not None:
            offsets.done(offset)

    def partitions(self) -> set[TopicPartition]:
        """Partitions with tracked offsets."""
        return set(self._partitions)

    def committed(self, tp: TopicPartition) -> int | None:
        """The last offset this worker committed for ``tp``, if any."""
        offsets = self._partitions.get(tp)
        return offsets.committed if offsets is not None else None

    def due(self) -> bool:
        """The commit interval has passed since the last periodic commit."""
        return time.monotonic() - self._last_commit >= self._interval_s

    async def commit_if_due(self) -> bool:
        """Commit every partition once per interval; True when the interval had passed."""
        if not self.due():
            return False
        await self.commit()
        self._last_commit = time.monotonic()
        return True

    async def commit(self, only: Iterable[TopicPartition] | None = None) -> None:
        """Commit, per partition, up to the first offset still without an outcome."""
        wanted = set(only) if only is not None else None
        targets = {
            tp: offset
            for tp, offsets in self._partitions.items()
            if (wanted is None or tp in wanted) and (offset := offsets.committable()) is not None
        }
        if not targets:
            return
        try:
            await self._consumer.commit(targets)  # type: ignore[arg-type]
        except KafkaError as exc:
            log.warning("commit failed (%s); will retry", exc)
            return
        for tp, offset in targets.items():
            # A revoke may have forgotten the partition while the commit was on the wire.
            if (offsets := self._partitions.get(tp)) is not None:
                offsets.mark_committed(offset)

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop tracking revoked partitions: their new owner commits them from now on."""
        for tp in partitions:
            self._partitions.pop(tp, None)
