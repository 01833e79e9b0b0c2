"""What the metrics and the reports need of each attempt: approved, who rejected it and why.

Pure: reads an attempt history (the loop's own, or a review outcome's ``historial``) into
``ResumenIntento`` records and counts rejections by criterion. Apart from ``grafo.ejecucion``
so that ``fichas informe`` and ``fichas evaluar`` read histories without loading LangGraph.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from esquemas.constantes import CRITERIO_SALIDA_INVALIDA


@dataclass(frozen=True)
class Rechazo:
    """One criterion that rejected an attempt, and who rejected it (``codigo`` | ``evaluador``)."""

    criterio: str
    por: str


@dataclass(frozen=True)
class ResumenIntento:
    """What the metrics need of one attempt: approved, the rejections, an invalid answer.

    ``puntuacion`` is the evaluator's score of the attempt (None without one).
    """

    intento: int
    aprobada: bool
    rechazos: tuple[Rechazo, ...] = ()
    invalida: bool = False
    puntuacion: float | None = None

    @classmethod
    def de_dict(cls, datos: dict[str, Any]) -> ResumenIntento:
        """Back from ``dataclasses.asdict`` (``fichas evaluar`` caches its records as JSON)."""
        rechazos = tuple(Rechazo(str(x["criterio"]), str(x["por"])) for x in datos["rechazos"])
        return cls(
            intento=int(datos["intento"]),
            aprobada=bool(datos["aprobada"]),
            rechazos=rechazos,
            invalida=bool(datos.get("invalida", False)),
            puntuacion=datos.get("puntuacion"),
        )


def resumen_intentos(historial: list[dict[str, Any]]) -> tuple[ResumenIntento, ...]:
    """Per attempt: approved or not, and which criteria rejected it by whom (for metrics).

    Reads the loop's own history, whose records name who rejected (``rechazos``), and the
    contract's ``historial`` of a review outcome, which does not: there every problem of the
    verdict but an invalid answer is a rejection, by ``POR_DESCONOCIDO``.
    """
    return tuple(
        ResumenIntento(
            intento=int(r["intento"]),
            aprobada=bool(r["veredicto"]["aprobada"]),
            rechazos=_rechazos(r),
            invalida=any(
                p["criterio"] == CRITERIO_SALIDA_INVALIDA for p in r["veredicto"]["problemas"]
            ),
            puntuacion=r.get("puntuacion"),
        )
        for r in historial
    )


POR_DESCONOCIDO = "desconocido"  # who rejected, when the record does not say


def _rechazos(registro: dict[str, Any]) -> tuple[Rechazo, ...]:
    """The rejections of one attempt's record (see ``resumen_intentos``)."""
    if "rechazos" in registro:
        return tuple(
            Rechazo(criterio=str(x["criterio"]), por=str(x["por"])) for x in registro["rechazos"]
        )
    return tuple(
        Rechazo(criterio=str(p.get("criterio", "?")), por=POR_DESCONOCIDO)
        for p in registro["veredicto"].get("problemas") or []
        if p.get("criterio") != CRITERIO_SALIDA_INVALIDA
    )


def contar_rechazos(intentos: Iterable[ResumenIntento]) -> Counter[Rechazo]:
    """The one count of rejections by criterion, for the worker's metric, ``fichas informe``
    and ``fichas evaluar``: one per criterion an attempt's verdict named, with who named it.
    An invalid answer is not a rejection (``ResumenIntento.invalida`` counts it apart)."""
    return Counter(rechazo for intento in intentos for rechazo in intento.rechazos)
