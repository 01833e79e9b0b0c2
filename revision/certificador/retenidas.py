"""Recall of the publication gate: of the fichas people would publish, the share it published.

Precision alone can be bought by publishing nothing; recall needs the fichas the gate held back
(motivo ``sin_garantia``) that people would have published as they were. The review queue is
no random draw of them (people choose what to open; a newer version closes an item
``obsoleta``), so the app draws its own sample: an item is in it when a hash of its
``event_id`` falls below ``FICHAS_MUESTRA_PROPORCION``, the share the worker samples
publications with. The queue marks these items so reviewers decide all of them.

Invariants: the draw depends on nothing a person, the score or the family can influence, and
is the same in every replica and restart; both samples use the same rate p, so with C correct
verdicts in the sample of gate publications and A held-back sample items approved unchanged,
recall ≈ C / (C + A) without knowing p or the volumes (an edited or rejected held-back ficha
was rightly held back; a closed gate's recall is 0); pending sample items are counted on
``/metrics``. v1.6: both sides leave out what is not drawn at rate p of its population: C the
publications sampled by the daily minimum (``muestreo: minimo_diario``), A the events of the
blind shadow share (``esquemas.sombra``, ``FICHAS_SOMBRA_PROPORCION``: an open gate held them
back whatever their score, so they are not what it held back). The reasoning and its limits:
docs/puerta.md, "Recall: la muestra de retenidas".
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_OBSOLETA,
    DECISION_RECHAZADA,
    MUESTREO_MINIMO_DIARIO,
)
from esquemas.sombra import en_muestra_sombra

PENDIENTE = "pendiente"
# The states a held-back sample item is counted in on /metrics.
ESTADOS = (DECISION_APROBADA, DECISION_EDITADA, DECISION_RECHAZADA, DECISION_OBSOLETA, PENDIENTE)
SAL = b"fichas.retenidas:"  # a draw of its own, independent of the publications' sample


def en_muestra(event_id: str, proporcion: float, sombra: float = 0.0) -> bool:
    """Whether a held-back ficha is in the app's random sample: a hash of its id below the
    share, so every replica and every restart draws the same items; never an event of the
    blind shadow share (``sombra``: the workers' ``FICHAS_SOMBRA_PROPORCION``)."""
    digest = hashlib.sha256(SAL + event_id.encode()).digest()
    dentro = int.from_bytes(digest[:8], "big") / 2**64 < proporcion
    return dentro and not en_muestra_sombra(event_id, sombra)


@dataclass(frozen=True)
class Recall:
    """One family's figures (or every family's, ``todas``)."""

    correctas_publicadas: int  # C: correct verdicts on gate publications in the sample
    retenidas: Mapping[str, int]  # held-back sample items per state (ESTADOS)

    @property
    def retenidas_aprobadas(self) -> int:
        """A: held-back sample items people published as they were."""
        return self.retenidas.get(DECISION_APROBADA, 0)

    @property
    def valor(self) -> float | None:
        """C / (C + A); None with nothing to divide."""
        total = self.correctas_publicadas + self.retenidas_aprobadas
        return self.correctas_publicadas / total if total else None


def contar_correcta(correctas: dict[str, int], decision: str, publicada: Mapping[str, Any]) -> None:
    """Count one sample verdict into C per family, if it is a correct one on a publication
    made through a gate (people's and uncertified publications do not measure the gate) and
    drawn at the sample's rate (v1.6: not by the daily minimum, which over-samples small
    families)."""
    if (
        decision == DECISION_CORRECTA
        and isinstance(publicada.get("puerta"), dict)
        and publicada.get("muestreo") != MUESTREO_MINIMO_DIARIO
    ):
        familia = str(publicada.get("familia"))
        correctas[familia] = correctas.get(familia, 0) + 1


def correctas_publicadas(veredictos: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, int]:
    """C per family from (decision, published record) sample verdicts."""
    correctas: dict[str, int] = {}
    for decision, publicada in veredictos:
        contar_correcta(correctas, decision, publicada)
    return correctas


def calcular(
    correctas: Mapping[str, int],
    retenidas: Iterable[tuple[str, str, str | None]],
    proporcion: float,
    sombra: float = 0.0,
) -> dict[str, Recall]:
    """Recall per family and for ``todas``.

    ``correctas``: C per family (``correctas_publicadas``). ``retenidas``: (event_id, family,
    decision or None) of the held-back items; only those in the app's draw count (``en_muestra``,
    outside the blind shadow share ``sombra``).
    """
    estados: dict[str, dict[str, int]] = {}
    for event_id, familia, decidida in retenidas:
        if not en_muestra(event_id, proporcion, sombra):
            continue
        estado = decidida if decidida is not None and decidida in ESTADOS else PENDIENTE
        cuentas = estados.setdefault(familia, {})
        cuentas[estado] = cuentas.get(estado, 0) + 1
    familias = sorted(set(correctas) | set(estados))
    resultado = {f: Recall(correctas.get(f, 0), estados.get(f, {})) for f in familias}
    resultado["todas"] = Recall(
        sum(correctas.values()), _sumar([estados.get(f, {}) for f in familias])
    )
    return resultado


def _sumar(cuentas: Sequence[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for c in cuentas:
        for estado, n in c.items():
            total[estado] = total.get(estado, 0) + n
    return total


def render_texto(recall: Mapping[str, Recall]) -> str:
    """The section ``fichas informe --revision`` prints."""
    lineas = [
        "Recall de la puerta (muestra de publicadas por la puerta y muestra de retenidas)",
    ]
    for familia, r in recall.items():
        valor = "—" if r.valor is None else f"{r.valor:.2f}"
        pendientes = r.retenidas.get(PENDIENTE, 0)
        lineas.append(
            f"  {familia:<15} {valor}  (correctas publicadas {r.correctas_publicadas}, "
            f"retenidas aprobadas {r.retenidas_aprobadas} de "
            f"{sum(r.retenidas.values()) - pendientes} decididas, {pendientes} pendientes)"
        )
    return "\n".join(lineas) + "\n"
