"""The commit ledger: which offsets of each partition are finished, and the commit point that
says so (watermark + metadata, ``stream.commit.metadata``). It makes no Kafka call.

Invariants: the watermark never passes a pending offset; the metadata lists every finished
offset above it, those the previous owner listed and this worker has not fetched yet
included; an offset is finished only once its outputs' transaction committed (``confirm``) or,
for work that writes nothing, at ``done``. Why each rule, and the upstream bugs they avoid:
docs/stream.md, "Why aiokafka directly" and "Offsets inside the output transaction".
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from aiokafka import TopicPartition
from aiokafka.structs import OffsetAndMetadata

from stream.commit.metadata import WINDOW, decode, encode


@dataclass
class PartitionOffsets:
    """Offsets of one partition: pending, finished above the watermark, last committed point."""

    pending: set[int] = field(default_factory=set)
    highest_seen: int = -1
    # finished per the committed metadata, not fetched yet
    inherited: set[int] = field(default_factory=set)
    committed: OffsetAndMetadata | None = None
    timestamps: dict[int, float] = field(default_factory=dict)  # pending offset -> event time, s
    progress_at: float = field(default_factory=time.time)  # wall clock of the last ``done``

    def restore(self, point: OffsetAndMetadata | None) -> None:
        """Start from the group's committed point (None or offset -1: nothing committed)."""
        if point is None or point.offset < 0:
            return
        self.committed = point
        self.highest_seen = max(self.highest_seen, point.offset - 1)
        self.inherited = {o for o in decode(point.offset, point.metadata) if o > self.highest_seen}

    def received(self, offset: int, timestamp_s: float | None = None) -> bool:
        """A message was fetched: pending until finished. False when the committed metadata
        lists it as finished already, or it was seen already (fetches are sequential, so an
        offset at or below the highest seen comes from a position the assignment's seek
        replaced): it must be skipped, not handled."""
        if offset <= self.highest_seen:
            return False  # seen already: a batch fetched before the assignment's seek
        self.highest_seen = offset
        if offset in self.inherited:
            self.inherited.discard(offset)
            return False
        self.pending.add(offset)
        self.timestamps[offset] = timestamp_s if timestamp_s is not None else time.time()
        return True

    def done(self, offset: int) -> None:
        """The message is finished (its outputs committed, or it writes nothing)."""
        if offset in self.pending:
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

    def watermark(self, finishing: int | None = None) -> int:
        """The next offset to commit (Kafka's "next to read"), counting ``finishing`` as done."""
        pending = self.pending - {finishing} if finishing is not None else self.pending
        if pending:
            return min(pending)
        mark = self.highest_seen + 1
        while mark in self.inherited:
            mark += 1
        return mark

    def point(self, finishing: int | None = None) -> OffsetAndMetadata | None:
        """The commit point, counting ``finishing`` as done; None while nothing is known."""
        if self.highest_seen < 0 and self.committed is None:
            return None
        mark = self.watermark(finishing)
        finished = [
            o
            for o in range(mark + 1, self.highest_seen + 1)
            if o not in self.pending or o == finishing
        ]
        finished += [o for o in self.inherited if o > mark]
        return OffsetAndMetadata(mark, encode(mark, finished))

    def changed(self, point: OffsetAndMetadata | None) -> bool:
        """``point`` says more than the last committed one."""
        return point is not None and point != self.committed

    def window_full(self) -> bool:
        """The span of fetched offsets above the watermark reached ``WINDOW``: pause the
        partition, or the metadata could outgrow the broker's limit."""
        return self.highest_seen - self.watermark() >= WINDOW

    def mark_committed(self, point: OffsetAndMetadata) -> None:
        """Remember what the broker accepted (points of one partition only grow)."""
        if self.committed is None or point.offset >= self.committed.offset:
            self.committed = point


# A proposal: the commit points of a transaction, and the offsets it finishes.
Points = dict[TopicPartition, OffsetAndMetadata]


class Ledger:
    """Offsets of every partition this worker holds; the points its transactions commit."""

    def __init__(self) -> None:
        self._partitions: dict[TopicPartition, PartitionOffsets] = {}

    def restore(self, tp: TopicPartition, point: OffsetAndMetadata | None) -> None:
        """The partition is assigned: track it from the group's committed point."""
        offsets = PartitionOffsets()
        offsets.restore(point)
        self._partitions[tp] = offsets

    def received(self, tp: TopicPartition, offset: int, timestamp_s: float | None = None) -> bool:
        """A message was fetched. False when it must not be handled: its partition is not
        restored yet (a fetch before the assignment's seek), or it is finished already."""
        offsets = self._partitions.get(tp)
        return offsets is not None and offsets.received(offset, timestamp_s)

    def track(self, tp: TopicPartition) -> PartitionOffsets:
        """The tracker of ``tp`` (an empty one for a partition not tracked: no lag data)."""
        return self._partitions.get(tp) or PartitionOffsets()

    def done(self, tp: TopicPartition, offset: int) -> None:
        """A message that wrote nothing (or whose outputs are committed) is finished."""
        offsets = self._partitions.get(tp)
        if offsets is not None:
            offsets.done(offset)

    def partitions(self) -> set[TopicPartition]:
        """Partitions with tracked offsets."""
        return set(self._partitions)

    def committed(self, tp: TopicPartition) -> OffsetAndMetadata | None:
        """The last point committed for ``tp`` (by this worker or restored), if any."""
        offsets = self._partitions.get(tp)
        return offsets.committed if offsets is not None else None

    def to_skip(self, tp: TopicPartition) -> int:
        """How many offsets of ``tp`` the committed metadata listed as finished and this
        worker has not fetched yet (they will be skipped)."""
        offsets = self._partitions.get(tp)
        return len(offsets.inherited) if offsets is not None else 0

    def window_full(self, tp: TopicPartition) -> bool:
        """``tp`` must be paused until its watermark moves."""
        offsets = self._partitions.get(tp)
        return offsets is not None and offsets.window_full()

    def propose(
        self, tps: Iterable[TopicPartition], finishing: Mapping[TopicPartition, int] | None = None
    ) -> Points:
        """The points to commit for ``tps``: those that changed, counting ``finishing``
        (partition -> offset whose outputs are in the same transaction) as done."""
        finishing = finishing or {}
        points: Points = {}
        for tp in tps:
            offsets = self._partitions.get(tp)
            if offsets is None:
                continue
            point = offsets.point(finishing.get(tp))
            if tp in finishing or offsets.changed(point):
                assert point is not None
                points[tp] = point
        return points

    def confirm(
        self, points: Points, finishing: Mapping[TopicPartition, int] | None = None
    ) -> None:
        """The transaction carrying ``points`` committed: its offsets are finished."""
        for tp, offset in (finishing or {}).items():
            self.done(tp, offset)
        for tp, point in points.items():
            # A revoke may have forgotten the partition while the commit was on the wire.
            if (offsets := self._partitions.get(tp)) is not None:
                offsets.mark_committed(point)

    def forget(self, partitions: Iterable[TopicPartition]) -> None:
        """Stop tracking revoked partitions: their new owner commits them from now on."""
        for tp in partitions:
            self._partitions.pop(tp, None)
