"""Which offset of a partition may be committed: never one past a message still in flight.

faust-streaming 0.15 commits past the head in-flight message under concurrency (upstream
issue 606, fix still open as PR 707): with the committed offset at N and N+1.. acked while N
is still processing, it commits past N, and a SIGKILL then loses N. This tracker is the
worker's own rule, small enough to prove by tests: the committable offset of a partition is
the smallest offset still pending, or one past the highest offset seen when nothing is.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PartitionOffsets:
    """Offsets of one partition that were received and are not yet fully handled."""

    pending: set[int] = field(default_factory=set)
    highest_seen: int = -1
    committed: int | None = None

    def received(self, offset: int) -> None:
        """A message was fetched; it stays pending until its outcome is acknowledged."""
        self.pending.add(offset)
        self.highest_seen = max(self.highest_seen, offset)

    def done(self, offset: int) -> None:
        """The message's outcome (or DLQ record, or obsolete mark) is safely written."""
        self.pending.discard(offset)

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
