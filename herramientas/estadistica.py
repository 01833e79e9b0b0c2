"""Summary statistics shared by the demo, the report, the evaluation and the benchmarks."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TypeVar

N = TypeVar("N", int, float)


def percentile(values: Iterable[N], q: float) -> N | None:
    """Nearest-rank percentile (``q`` in 0..1): always one of the measured values, or None.

    Nearest rank rather than interpolation: with tens of samples an interpolated p95 is a
    latency nobody measured.
    """
    ordered = sorted(values)
    if not ordered:
        return None
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]
