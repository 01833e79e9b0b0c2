"""An anytime-valid confidence bound on the precision of automatic publication, by betting.

Each verdict of the random sample of published fichas is an outcome x in [0, 1] (1 = the
person agreed the automatic publication was correct). The reviewer app looks at the bound after
every verdict, for as long as the gate is open, and closes the gate when the evidence says so.
A bound that is looked at that often must be valid at every look at once.

Why not a Wilson interval recomputed at every decision: Wilson's interval holds for one look at
a sample size fixed in advance. Recomputed after each verdict and acted on at the first look
where it crosses the objective, its error rate is not ``delta``: by the law of the iterated
logarithm a fixed-n interval around the true mean is eventually left with probability one when
it is checked forever, so a gate would be closed (or kept open) by chance. A confidence
sequence instead satisfies P(there is a time t at which the true mean is outside CS_t) <= delta.

Method (Waudby-Smith & Ramdas 2023, "Estimating means of bounded random variables by betting",
JRSS-B, arXiv 2010.09686, section 4 and its predictable plug-in bets): for each candidate mean
m, a gambler starts with capital 1 and bets a fraction λ_t on the next outcome being above m:

    K_t(m) = prod_{i<=t} (1 + λ_i(m) (x_i - m))

If the true mean is m, K_t(m) is a nonnegative martingale, so by Ville's inequality
P(exists t: K_t(m) >= 1/delta) <= delta. Every m whose capital ever reached 1/delta is rejected
for good; the lower bound is the largest rejected m (the rejected set is an interval [0, L):
each factor is nonincreasing in m, see ``_LadoInferior``). The bets are the paper's predictable
plug-in empirical-Bernstein ones ("PrPl"), fixed before x_t is seen:

    λ̇_t = sqrt(2 log(1/delta) / (σ̂²_{t-1} t log(1 + t))),   λ_t(m) = min(λ̇_t, c / m), c = 1/2
    μ̂_t = (1/2 + sum x_i) / (t + 1),   σ̂²_t = (1/4 + sum (x_i - μ̂_i)²) / (t + 1)

The truncation c/m keeps every factor >= 1 - c > 0. This is the positive half of the paper's
hedged capital process (θ = 1): a one-sided bound at level ``delta`` needs only it. The upper
bound is the same construction on 1 - x.

Which side closes a gate: the lower bound says "precision is at least L" (risk delta); it
starts at 0 and only rises, so right after a gate opens it is below the objective for lack of
samples, not for lack of precision. Evidence that the precision is *below* the objective is the
upper bound falling under it (risk delta of closing a gate whose precision is in truth at
least the objective). ``CotaEnLinea`` keeps both; docs/puerta.md says which the app uses.

The bounds are computed on a grid of ``puntos`` candidate means (1000 by default, a resolution
of 0.001), rounded in the safe direction: the lower bound is a grid point that was rejected, so
it never exceeds the exact bound.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from esquemas.constantes import DELTA_PUERTA

PUNTOS = 1000  # grid of candidate means: resolution 1/PUNTOS
TRUNCAMIENTO = 0.5  # c: a bet never risks more than half the capital


class _LadoInferior:
    """The lower bound alone, on outcomes x in [0, 1]: capital per grid mean, rejected prefix.

    Only means not yet rejected are tracked: once K(m) reached 1/delta, m stays rejected (the
    running intersection of the confidence sequence), and every lower m was rejected with it.
    """

    def __init__(self, delta: float, puntos: int, truncamiento: float) -> None:
        self.umbral_log = math.log(1.0 / delta)
        self.rejilla = [j / puntos for j in range(puntos)]
        self.tope = [math.inf if m == 0 else truncamiento / m for m in self.rejilla]
        self.log_capital = [0.0] * puntos
        self.rechazados = 0  # grid points 0 .. rechazados-1 are rejected
        self.t = 0
        self.suma = 0.0
        self.suma_cuadrados = 0.0  # sum of (x_i - μ̂_i)²

    def apuesta(self) -> float:
        """λ̇_{t+1}: the plug-in bet for the next outcome, from the outcomes seen so far."""
        t = self.t + 1
        varianza = (0.25 + self.suma_cuadrados) / t  # σ̂²_{t-1}
        return math.sqrt(2.0 * self.umbral_log / (varianza * t * math.log1p(t)))

    def actualizar(self, x: float) -> None:
        """Bet on ``x`` at every grid mean still standing; reject those that reached 1/delta."""
        lam = self.apuesta()
        for j in range(self.rechazados, len(self.rejilla)):
            m = self.rejilla[j]
            self.log_capital[j] += math.log1p(min(lam, self.tope[j]) * (x - m))
        while (
            self.rechazados < len(self.rejilla)
            and self.log_capital[self.rechazados] >= self.umbral_log
        ):
            self.rechazados += 1
        self.t += 1
        self.suma += x
        media = (0.5 + self.suma) / (self.t + 1)  # μ̂_t, with x_t
        self.suma_cuadrados += (x - media) ** 2

    @property
    def cota(self) -> float:
        """The largest rejected grid mean (0 while none is)."""
        return self.rejilla[self.rechazados - 1] if self.rechazados else 0.0


def _resultado(x: bool | float) -> float:
    """An outcome as a number in [0, 1]; anything else is a caller's bug."""
    valor = float(x)
    if not 0.0 <= valor <= 1.0:
        raise ValueError(f"an outcome must be in [0, 1], got {x!r}")
    return valor


class CotaEnLinea:
    """The confidence sequence of one gate's precision, updated one verdict at a time.

    ``cota_inferior``: with probability at least 1 - delta, at every time at once, the true
    precision is >= it. ``cota_superior``: the same from above. Each side holds at ``delta``
    on its own (both at once: 1 - 2 delta).
    """

    def __init__(
        self, delta: float = DELTA_PUERTA, puntos: int = PUNTOS, truncamiento: float = TRUNCAMIENTO
    ) -> None:
        if not 0.0 < delta < 1.0:
            raise ValueError(f"delta must be in (0, 1), got {delta}")
        if puntos < 2:
            raise ValueError("the grid needs at least two points")
        if not 0.0 < truncamiento < 1.0:
            raise ValueError(f"truncamiento must be in (0, 1), got {truncamiento}")
        self.delta = delta
        self._inferior = _LadoInferior(delta, puntos, truncamiento)
        self._superior = _LadoInferior(delta, puntos, truncamiento)  # on 1 - x
        self.n = 0
        self.correctos = 0.0

    def actualizar(self, x: bool | float) -> None:
        """Add one verdict (True / 1.0 = the automatic publication was correct)."""
        valor = _resultado(x)
        self._inferior.actualizar(valor)
        self._superior.actualizar(1.0 - valor)
        self.n += 1
        self.correctos += valor

    @property
    def cota_inferior(self) -> float:
        """The anytime-valid lower confidence bound on the mean so far (0 before any data)."""
        return self._inferior.cota

    @property
    def cota_superior(self) -> float:
        """The anytime-valid upper confidence bound on the mean so far (1 before any data)."""
        return 1.0 - self._superior.cota

    @property
    def media(self) -> float | None:
        """The observed share of correct outcomes (None before any)."""
        return self.correctos / self.n if self.n else None


def cota_inferior(
    resultados: Iterable[bool | float], delta: float = DELTA_PUERTA, puntos: int = PUNTOS
) -> float:
    """The lower bound after all of ``resultados``, as ``CotaEnLinea`` gives it."""
    cota = CotaEnLinea(delta, puntos)
    for x in resultados:
        cota.actualizar(x)
    return cota.cota_inferior


def cota_superior(
    resultados: Iterable[bool | float], delta: float = DELTA_PUERTA, puntos: int = PUNTOS
) -> float:
    """The upper bound after all of ``resultados``, as ``CotaEnLinea`` gives it."""
    cota = CotaEnLinea(delta, puntos)
    for x in resultados:
        cota.actualizar(x)
    return cota.cota_superior
