"""The opener's betting e-process at one threshold: how evidence against "precision below the
objective" grows with each decided approval.

The capital is the average of two test supermartingales under "the precision at λ is below
``objetivo``": a predictable plug-in, the Kelly bet at the shrunk running share of approvals
truncated at ``TRUNCAMIENTO`` / objetivo, and the mixture of the constant bets
``APUESTAS_APERTURA``, a function of the counts alone. By Ville's inequality it ever reaches
1/δ with probability at most δ under that null, however often one looks. ``ProcesoE`` is that
process, kept in logs, with ``faltan``: how many more consecutive approvals would cross a
level. Invariants: the bets define the guarantee and must not change silently; the state is
the counts, the plug-in's log-capital and the running maximum, so a stored state
(``puerta.secuencial.EstadoSecuencia``) restores it bit for bit. The walk over the grid that
uses one process per λ is ``puerta.secuencial``. Why this bet, the truncation and the
mixture: docs/puerta.md, "The bet".
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

from puerta.exclusion import APUESTAS_EXCLUSION

TRUNCAMIENTO = 0.75  # a bet never stakes more than 0.75 / objetivo: a rejection keeps >= 1/4
APUESTAS_APERTURA: tuple[float, ...] = APUESTAS_EXCLUSION
"""The mixture's constant bets, as fractions c of the largest bet 1 / objetivo: an approval
multiplies bet c's capital by 1 + c (1 - objetivo) / objetivo, a rejection by 1 - c."""
LIMITE_FALTAN = 100_000  # beyond this many approvals ``faltan`` says "cannot say" (None)


class ProcesoE:
    """The betting e-process of one threshold, one consumed ficha at a time.

    The e-value is the average of two test supermartingales under "precision at λ below the
    objective", so it is one too: the predictable plug-in (``apuesta``: Kelly at the shrunk
    running share, clipped) and the mixture of the constant bets ``APUESTAS_APERTURA``, whose
    value depends on the counts alone. Kept in logs (a product of hundreds of factors under- or
    overflows a float); ``e_valor`` and ``e_max`` give it back as a number (``inf`` past float
    range). Why the average: docs/puerta.md, "The bet".
    """

    def __init__(self, objetivo: float, delta: float) -> None:
        self.objetivo = objetivo
        self.limite_log = math.log(1.0 / delta)
        self.tope = TRUNCAMIENTO / objetivo
        self.n = 0
        self.aprobadas = 0
        self.log_plugin = 0.0
        self.log_maximo = 0.0
        self._si = [math.log1p(c * (1.0 - objetivo) / objetivo) for c in APUESTAS_APERTURA]
        self._no = [math.log1p(-c) for c in APUESTAS_APERTURA]

    def apuesta(self) -> float:
        """b for the next outcome: the Kelly bet at the shrunk running mean, clipped."""
        estimada = (self.aprobadas + 1) / (self.n + 1)
        q = self.objetivo
        return min(max((estimada - q) / (q * (1.0 - q)), 0.0), self.tope)

    @property
    def log_mezcla(self) -> float:
        """log of the constant bets' average capital: a function of the counts only."""
        rechazadas = self.n - self.aprobadas
        return _log_media(
            [
                self.aprobadas * si + rechazadas * no
                for si, no in zip(self._si, self._no, strict=True)
            ]
        )

    @property
    def log_capital(self) -> float:
        """log of the e-value now: the average of the plug-in's and the mixture's capitals."""
        return _log_media([self.log_plugin, self.log_mezcla])

    def actualizar(self, aprobada: bool) -> None:
        """Bet on one consumed ficha (True: people approved it as is)."""
        x = 1.0 if aprobada else 0.0
        self.log_plugin += math.log1p(self.apuesta() * (x - self.objetivo))
        self.n += 1
        self.aprobadas += aprobada
        self.log_maximo = max(self.log_maximo, self.log_capital)

    @property
    def e_valor(self) -> float:
        """The e-value now (``inf`` past float range)."""
        return exponencial(self.log_capital)

    @property
    def e_max(self) -> float:
        """The e-value's running maximum (``inf`` past float range)."""
        return exponencial(self.log_maximo)

    def cruza(self, limite_log: float) -> bool:
        """Whether the e-value ever reached exp(``limite_log``) (the walk's level for it)."""
        return self.log_maximo >= limite_log

    @property
    def cruzado(self) -> bool:
        """Whether the e-value ever reached 1/delta."""
        return self.cruza(self.limite_log)

    def faltan(self, limite_log: float | None = None) -> int | None:
        """How many more consecutive approvals would bring the e-value to its level from now.

        Plays the same betting rule forward on a copy; 0 when already crossed. None when
        more than ``LIMITE_FALTAN`` would be needed (a capital sunk by a long mixed history).
        For operators (metrics, logs), never for the people deciding the evidence.
        """
        limite = self.limite_log if limite_log is None else limite_log
        if self.cruza(limite):
            return 0
        copia = copy.copy(self)
        for i in range(1, LIMITE_FALTAN + 1):
            copia.actualizar(True)
            if copia.log_capital >= limite:
                return i
        return None


def _log_media(logs: Sequence[float]) -> float:
    """log of the average of exp(l) for l in ``logs``, without overflow."""
    mayor = max(logs)
    return mayor + math.log(math.fsum(math.exp(v - mayor) for v in logs)) - math.log(len(logs))


def exponencial(logaritmo: float) -> float:
    """exp, with ``inf`` instead of OverflowError for a capital beyond float range."""
    return math.exp(logaritmo) if logaritmo < 709.0 else math.inf
