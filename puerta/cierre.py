"""When what people say of published fichas closes a gate: the bound and the detector (pure).

One certification of one gate is watched by two tests over its sampled verdicts, in
publication order (x = 1 a ficha people call publishable as generated, 0 otherwise), each at
half the gate's δ: the online bound (``puerta.cota``: its upper bound below the objective shows
the mean precision since certification below it) and the change detector
(``puerta.deteccion``: a drop seen whatever came before it). Either closes the gate; a gate
whose precision never falls below the objective is closed by one of them with probability at
most δ, ever. Invariants: both see the same verdicts in the same order; the motivo names which
one closed it. Why two and how δ is split: docs/puerta.md, "Closing".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from esquemas.constantes import MOTIVO_PUERTA_CAMBIO, MOTIVO_PUERTA_COTA_BAJA
from puerta.cota import CotaEnLinea
from puerta.deteccion import EstadoDetector, detector, observar


@dataclass
class Cierre:
    """The closing tests of one certification, fed one sampled verdict at a time (mutable)."""

    objetivo: float
    delta: float
    cota: CotaEnLinea = field(init=False)
    detector: EstadoDetector = field(init=False)

    def __post_init__(self) -> None:
        self.cota = CotaEnLinea(delta=self.delta / 2.0)
        self.detector = detector(self.objetivo, self.delta / 2.0)

    def anotar(self, correcta: bool) -> None:
        """One more sampled verdict, in publication order."""
        self.cota.actualizar(correcta)
        self.detector = observar(self.detector, correcta)

    @property
    def n(self) -> int:
        """How many verdicts were seen."""
        return self.detector.t

    def motivo(self) -> str | None:
        """Why the gate must close now (the bound first: it says more), or None."""
        if self.n and self.cota.cota_superior < self.objetivo:
            return MOTIVO_PUERTA_COTA_BAJA
        if self.detector.alarma:
            return MOTIVO_PUERTA_CAMBIO
        return None
