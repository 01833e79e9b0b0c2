"""An anytime-valid confidence bound on the precision of automatic publication, by betting.

Each verdict of the random sample of published fichas is an outcome x in [0, 1] (1 = the person
agreed the automatic publication was correct). The reviewer app looks at the bound after every
verdict, so it must hold at every look at once: a confidence sequence, P(some t has the true
mean outside CS_t) <= delta, which a Wilson interval recomputed at every verdict is not. For each
candidate mean m on a grid, the capital K_t(m) = prod (1 + λ_i(m) (x_i - m)) with the predictable
plug-in empirical-Bernstein bets of Waudby-Smith & Ramdas 2023 ("Estimating means of bounded
random variables by betting", truncated at c/m, c = 1/2) is a nonnegative martingale when m is
the mean, so by Ville's inequality m is rejected for good once K_t(m) reaches 1/delta. The lower
bound is the largest rejected m; the upper bound is the same construction on 1 - x.
Invariants: a bet is fixed before its outcome is seen; the grid rounds in the safe direction
(the lower bound never exceeds the exact one); which side closes a gate is the caller's (the
upper bound below the objective). The formulas, why the rejected set is an interval, and the
measured comparison with Wilson: docs/puerta.md, "The online bound".
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
