"""Summary statistics shared by the review app, the demo, the evaluation and the bench.

The nearest-rank percentile and the Wilson score interval of a proportion, one implementation
of each figure for every package that reports one. Imports nothing of the project; ``revision``
and ``herramientas`` import it (and ``bench``), so the review app never has to reach into the
command line for a figure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from statistics import NormalDist
from typing import TypeVar

N = TypeVar("N", int, float)

NIVEL_95 = 0.95


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


def z_bilateral(nivel: float) -> float:
    """The normal quantile of a two-sided interval at ``nivel`` (1.95996… at 0.95).

    Taken from ``statistics.NormalDist`` rather than written as a constant, so every interval
    of the project uses the same z and another level is one argument away.
    """
    return NormalDist().inv_cdf(1 - (1 - nivel) / 2)


def wilson(exitos: int, n: int, nivel: float = NIVEL_95) -> tuple[float, float] | None:
    """The Wilson score interval of ``exitos / n``; None without observations.

    Wilson's rather than the plain ±z·√(p(1−p)/n): the samples here are small (tens of reviewed
    fichas) and the plain interval is wrong near 0 and 1 and with few observations.
    """
    if n <= 0:
        return None
    z = z_bilateral(nivel)
    p = exitos / n
    z2 = z * z
    centro = (p + z2 / (2 * n)) / (1 + z2 / n)
    margen = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At k = 0 (k = n) the bound is exactly 0 (1); written so, not left to rounding (2.8e-17).
    bajo = 0.0 if exitos <= 0 else max(0.0, centro - margen)
    alto = 1.0 if exitos >= n else min(1.0, centro + margen)
    return bajo, alto
