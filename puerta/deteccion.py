"""The gate that notices a drop: a Shiryaev-Roberts e-detector on the sampled verdicts (pure).

The online bound (``puerta.cota``) bounds the mean precision since certification, so after a
long good run a drop takes thousands of verdicts to pull the mean under the objective. The
detector looks only at what came lately: with x = 1 a correct sampled verdict, 0 otherwise, each
verdict's e-factor ``L = 1 + b (objetivo - x)`` has expectation at most 1 while the precision is
at least the objective, and the Shiryaev-Roberts statistic ``R_t = (R_{t-1} + 1) L_t`` restarts
the bet at every verdict at once. It alarms when R reaches the threshold of its block: block k
holds verdicts (N(2^k - 1), N(2^(k+1) - 1)], threshold N(2^(k+1) - 1) 2^(k+1) / δ, so a gate
whose precision never falls below the objective is closed by it with probability at most δ,
ever. Invariants: b is fixed before any data (Kelly for ``ALTERNATIVA`` against the objective);
the state is (t, log R) and advances one verdict at a time, in publication order. The proof, the
delays and the false alarms measured: docs/puerta.md, "Closing: a change detector".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

ALTERNATIVA = 0.8
"""The drop the bet is tuned for (Kelly for 0.8 against an objective of 0.9); a drop to 0.7 is
caught sooner, one to 0.85 later (docs/puerta.md has the delays)."""

BLOQUE = 2000
"""N: the first block's length in sampled verdicts; each later block is twice the one before."""


def apuesta_kelly(objetivo: float, alternativa: float = ALTERNATIVA) -> float:
    """The b maximising E[log(1 + b (objetivo - x))] when x is 1 with probability ``alternativa``.

    Positive only for an alternative below the objective; capped below 1 / (1 - objetivo) so
    a correct verdict never zeroes the statistic.
    """
    if not 0.0 < alternativa < objetivo < 1.0:
        raise ValueError(f"need 0 < alternativa < objetivo < 1, got {alternativa}, {objetivo}")
    b = (objetivo - alternativa) / (objetivo * (1.0 - objetivo))
    return min(b, 0.9 / (1.0 - objetivo))


def umbral_log(t: int, delta: float, bloque: int = BLOQUE) -> float:
    """log of the alarm threshold for the t-th verdict (1-based): the threshold of its block.

    Block k ends at T_k = N(2^(k+1) - 1); its threshold is T_k 2^(k+1) / δ, so the sum over
    blocks of T_k / threshold_k is δ (each block's false-alarm chance is at most
    T_k / threshold_k by Ville's inequality on R_t + T_k - t).
    """
    if t < 1:
        raise ValueError("verdicts are counted from 1")
    k = max(0, math.ceil(math.log2(t / bloque + 1.0)) - 1)
    fin = bloque * (2 ** (k + 1) - 1)
    return math.log(fin) + (k + 1) * math.log(2.0) - math.log(delta)


@dataclass(frozen=True)
class EstadoDetector:
    """The detector after ``t`` verdicts: log R (``-inf`` before any), whether it alarmed."""

    objetivo: float
    delta: float
    apuesta: float
    t: int = 0
    log_r: float = -math.inf
    alarma: bool = False
    bloque: int = BLOQUE

    @property
    def r(self) -> float:
        """R itself (0 before any verdict; ``inf`` beyond float range)."""
        return 0.0 if self.log_r == -math.inf else math.exp(min(self.log_r, 709.0))

    def umbral(self) -> float:
        """log of the threshold the next verdict would be compared with."""
        return umbral_log(self.t + 1, self.delta, self.bloque)


def detector(objetivo: float, delta: float, alternativa: float = ALTERNATIVA) -> EstadoDetector:
    """A detector that has seen nothing, betting for a drop to ``alternativa``."""
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    return EstadoDetector(objetivo, delta, apuesta_kelly(objetivo, alternativa))


def observar(estado: EstadoDetector, correcta: bool) -> EstadoDetector:
    """The detector after one more sampled verdict, in publication order.

    ``R_t = (R_{t-1} + 1) (1 + b (objetivo - x))``, kept in logs; once it alarms it stays so.
    """
    factor = 1.0 + estado.apuesta * (estado.objetivo - (1.0 if correcta else 0.0))
    log_r = math.log(factor) + (_log_suma_uno(estado.log_r) if estado.t else 0.0)
    t = estado.t + 1
    alarma = estado.alarma or log_r >= umbral_log(t, estado.delta, estado.bloque)
    return EstadoDetector(
        estado.objetivo, estado.delta, estado.apuesta, t, log_r, alarma, estado.bloque
    )


def _log_suma_uno(log_x: float) -> float:
    """log(exp(log_x) + 1) without overflow."""
    return log_x + math.log1p(math.exp(-log_x)) if log_x > 0 else math.log1p(math.exp(log_x))
