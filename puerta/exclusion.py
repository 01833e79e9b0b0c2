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

    The bets are fixed, so each bet's log-capital is ``aprobadas·log(1 - c) + rechazadas·log(1 +
    c·objetivo/(1 - objetivo))``: the counts are the whole state, plus whether the mixture ever
    reached 1/δ. An approval only lowers every capital, so the running maximum can only be
    reached right after a rejection: checking there alone gives exactly "ever crossed".
    """

    def __init__(
        self,
        objetivo: float,
        delta: float,
        apuestas: Sequence[float] = APUESTAS_EXCLUSION,
        aprobadas: int = 0,
        rechazadas: int = 0,
        cruzado: bool = False,
    ) -> None:
        comprobar_apuestas(apuestas)
        if aprobadas < 0 or rechazadas < 0:
            raise ValueError("the exclusion's counts cannot be negative")
        self.limite_log = math.log(1.0 / delta)
        self._si = [math.log1p(-c) for c in apuestas]  # an approval: 1 - c
        self._no = [math.log1p(c * objetivo / (1.0 - objetivo)) for c in apuestas]
        self.aprobadas = aprobadas
        self.rechazadas = rechazadas
        self.cruzado = cruzado

    def actualizar(self, aprobada: bool) -> None:
        """One decided approval at this threshold (True: people approved it as is)."""
        if aprobada:
            self.aprobadas += 1
            return
        self.rechazadas += 1
        self.cruzado = self.cruzado or self.log_valor >= self.limite_log

    @property
    def log_valor(self) -> float:
        """The mixture's log now: log of the average of the bets' capitals."""
        logs = [
            self.aprobadas * si + self.rechazadas * no
            for si, no in zip(self._si, self._no, strict=True)
        ]
        mayor = max(logs)
        suma = math.fsum(math.exp(log - mayor) for log in logs)
        return mayor + math.log(suma) - math.log(len(logs))
