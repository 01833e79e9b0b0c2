"""Whether a family's own evidence shows it below the objective: the exclusion e-process (pure).

At one threshold λ, a family's decided approvals in arrival order give x = 1 (people approved
it as is) or 0. The null H0: "the family's precision at λ is at least ``objetivo``". Each bet b
of a fixed grid (``APUESTAS_EXCLUSION``, fractions of the largest bet 1 / (1 - objetivo)) has the
capital prod (1 + b (objetivo - x_i)), a nonnegative supermartingale under H0; their average,
the mixture, is one too, so by Ville's inequality it ever reaches 1/δ with probability at most
δ. A family whose mixture did is excluded from the pooled gate at λ for good (until its
sequence restarts). Invariants: the bets are fixed before any data, so the mixture's value
depends on the counts of approvals and rejections only, not on their order; the maths must stay
bit-for-bit reproducible from a stored state (``puerta.secuencial``). Why the grid is what it
is, and how fast it reacts: docs/puerta.md, "Coverage: the exclusion e-process".
"""

from __future__ import annotations

import math
from collections.abc import Sequence

APUESTAS_EXCLUSION: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8)
"""The fixed bets, as fractions c of the largest admissible bet 1 / (1 - objetivo): a rejection
multiplies bet c's capital by 1 + c objetivo / (1 - objetivo), an approval by 1 - c."""


def comprobar_apuestas(apuestas: Sequence[float]) -> None:
    """Refuse an empty grid or a bet outside (0, 1): it would not be a test supermartingale."""
    if not apuestas:
        raise ValueError("the exclusion's grid of bets is empty")
    for apuesta in apuestas:
        if not 0.0 < apuesta < 1.0:
            raise ValueError(f"an exclusion bet must be in (0, 1), got {apuesta!r}")


class ProcesoExclusion:
    """The exclusion mixture of one threshold, one decided approval at a time (mutable).

    Keeps each bet's log-capital (a product of hundreds of factors under- or overflows) and
    whether the mixture ever reached 1/δ; ``logs`` and ``cruzado`` restore a stored state.
    """

    def __init__(
        self,
        objetivo: float,
        delta: float,
        apuestas: Sequence[float] = APUESTAS_EXCLUSION,
        logs: Sequence[float] | None = None,
        cruzado: bool = False,
    ) -> None:
        comprobar_apuestas(apuestas)
        self.limite_log = math.log(1.0 / delta)
        self._si = [math.log1p(-c) for c in apuestas]  # an approval: 1 - c
        self._no = [math.log1p(c * objetivo / (1.0 - objetivo)) for c in apuestas]
        self.logs = list(logs) if logs is not None else [0.0] * len(apuestas)
        if len(self.logs) != len(apuestas):
            raise ValueError("one log-capital per exclusion bet")
        self.cruzado = cruzado

    def actualizar(self, aprobada: bool) -> None:
        """One decided approval at this threshold (True: people approved it as is)."""
        factores = self._si if aprobada else self._no
        self.logs = [log + f for log, f in zip(self.logs, factores, strict=True)]
        # The average is at most the largest capital: the mixture is only worth computing once
        # some bet's capital alone reaches 1/δ (the answer is the same, the cost far lower).
        if not self.cruzado and max(self.logs) >= self.limite_log:
            self.cruzado = self.log_valor >= self.limite_log

    @property
    def log_valor(self) -> float:
        """The mixture's log now: log of the average of the bets' capitals."""
        mayor = max(self.logs)
        suma = math.fsum(math.exp(log - mayor) for log in self.logs)
        return mayor + math.log(suma) - math.log(len(self.logs))
