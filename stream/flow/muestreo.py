"""Which published fichas are copied to people (``fichas.muestra_revision``), and why (v1.6).

Two draws, both made when the outcome is written, before any label on it can exist:

- ``proporcion``: the first 8 bytes of the sha256 of the ``event_id`` below
  ``FICHAS_MUESTRA_PROPORCION`` (``sampled``); a redelivered event is sampled exactly when
  the first delivery was;
- ``minimo_diario``: every published ficha among the first ``FICHAS_MUESTRA_MINIMA_DIA`` of its
  family in the UTC day of its ``publicada_en``, counted by this worker replica
  (``MinimoDiario``), so a small family still gets verdicts every day. Each replica counts its
  own, so the minimum is per replica (N replicas sample up to N times as many); no replica
  shares a count because the choice needs none: it depends on arrival order alone.

The sample record names its draw in ``muestreo`` (``proporcion`` when the hash chose it, even
if it was among the first of its day), so a reader that needs a sample proportional to the
volume keeps the ``proporcion`` records. Why the minimum is safe for the gate's bounds:
docs/stream.md, "The sample and the blind shadow share".
"""

from __future__ import annotations

import hashlib
from datetime import UTC, date, datetime

from esquemas.constantes import MUESTREO_MINIMO_DIARIO, MUESTREO_PROPORCION, Muestreo


def sampled(event_id: str, proportion: float) -> bool:
    """Deterministic sampling: a redelivered event is sampled exactly when the first was."""
    digest = hashlib.sha256(event_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < proportion


def dia_utc(publicada_en: object) -> date:
    """The UTC day of an RFC 3339 timestamp (the outcome's ``publicada_en``); today's for a
    value that is not one (the sample's choice must never stop an outcome from being written)."""
    try:
        return datetime.fromisoformat(str(publicada_en)).astimezone(UTC).date()
    except ValueError:
        return datetime.now(UTC).date()


class MinimoDiario:
    """The first ``minimo`` published fichas of each family per UTC day, as one replica saw them.

    Remembers the chosen ``event_id`` of each (family, day), so an outcome written again by this
    replica (a redelivery, a replay of its stored record) is chosen again; only today's and
    yesterday's days are kept, so memory stays at most families × 2 × ``minimo`` ids.
    """

    def __init__(self, minimo: int) -> None:
        self.minimo = minimo
        self._elegidas: dict[tuple[str, date], set[str]] = {}

    def toma(self, familia: str, dia: date, event_id: str) -> bool:
        """Count one published ficha; True when it is among the first ``minimo`` of its day."""
        if self.minimo <= 0:
            return False
        elegidas = self._elegidas.get((familia, dia))
        if elegidas is None:
            self._olvidar_antes_de(dia)
            elegidas = self._elegidas.setdefault((familia, dia), set())
        if event_id in elegidas:
            return True
        if len(elegidas) >= self.minimo:
            return False
        elegidas.add(event_id)
        return True

    def _olvidar_antes_de(self, dia: date) -> None:
        """Drop the days before yesterday of ``dia`` (an outcome from a late clock still finds
        yesterday's count)."""
        for clave in [k for k in self._elegidas if (dia - k[1]).days > 1]:
            del self._elegidas[clave]


def muestreo(
    event_id: str, familia: str, publicada_en: object, proporcion: float, minimo: MinimoDiario
) -> Muestreo | None:
    """Why a published ficha is sampled (``proporcion`` first), or None: not sampled.

    Every published ficha is counted toward its family's daily minimum, whichever draw picks it.
    """
    primeras = minimo.toma(familia, dia_utc(publicada_en), event_id)
    if sampled(event_id, proporcion):
        return MUESTREO_PROPORCION
    return MUESTREO_MINIMO_DIARIO if primeras else None
