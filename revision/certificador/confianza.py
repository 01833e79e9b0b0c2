"""How far the evaluator can be trusted, measured against people.

Precision of the evaluator: of the fichas it approved (the published sample that people
reviewed), the share that people call correct. With a Wilson score interval, because the
samples are small (``estadistica.wilson``, shared with ``fichas evaluar``). Overall, by
family, and by criterion (of the approved fichas, the share that people did not mark as failing
that criterion).

From review decisions, the other side: of the fichas the evaluator rejected, the share that
people approved unchanged (the evaluator was too strict there).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from criterios import cargar_criterios
from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_INCORRECTA,
    DECISION_RECHAZADA,
    TIPO_MUESTRA,
    TIPO_REVISION,
)
from estadistica import wilson

if TYPE_CHECKING:
    from infra.config import Settings

# The alert's window: precision over the last N sample decisions (docs/revision.md).
VENTANA_MUESTRA = 50


@dataclass(frozen=True)
class Proporcion:
    """k successes out of n, with its 95 % Wilson interval."""

    aciertos: int
    total: int

    @property
    def valor(self) -> float | None:
        return self.aciertos / self.total if self.total else None

    @property
    def intervalo(self) -> tuple[float, float] | None:
        return wilson(self.aciertos, self.total)


@dataclass(frozen=True)
class DecisionResumen:
    """What the figures need of one decision."""

    tipo: str
    decision: str
    familia: str
    criterios: Sequence[str]


@dataclass
class Confianza:
    """The figures ``fichas informe`` prints and ``/metrics`` exports."""

    precision: Proporcion
    por_familia: dict[str, Proporcion] = field(default_factory=dict)
    por_criterio: dict[str, Proporcion] = field(default_factory=dict)
    ventana: Proporcion = field(default_factory=lambda: Proporcion(0, 0))
    rechazos_confirmados: Proporcion = field(default_factory=lambda: Proporcion(0, 0))


def calcular(decisiones: Iterable[DecisionResumen], ventana: int = VENTANA_MUESTRA) -> Confianza:
    """Trust figures from decisions in the order they were taken (oldest first)."""
    todas = list(decisiones)
    muestra = [
        d
        for d in todas
        if d.tipo == TIPO_MUESTRA and d.decision in (DECISION_CORRECTA, DECISION_INCORRECTA)
    ]
    revision = [
        d
        for d in todas
        if d.tipo == TIPO_REVISION
        and d.decision in (DECISION_APROBADA, DECISION_EDITADA, DECISION_RECHAZADA)
    ]
    confianza = Confianza(precision=_correctas(muestra), ventana=_correctas(muestra[-ventana:]))
    for familia in sorted({d.familia for d in muestra}):
        confianza.por_familia[familia] = _correctas([d for d in muestra if d.familia == familia])
    ids = [c.id for c in cargar_criterios()]
    for criterio in ids:
        fallan = sum(
            1 for d in muestra if d.decision == DECISION_INCORRECTA and criterio in d.criterios
        )
        confianza.por_criterio[criterio] = Proporcion(len(muestra) - fallan, len(muestra))
    # A rejection is confirmed when the person did not approve the ficha as it was.
    confirmados = sum(1 for d in revision if d.decision != DECISION_APROBADA)
    confianza.rechazos_confirmados = Proporcion(confirmados, len(revision))
    return confianza


def _correctas(decisiones: Sequence[DecisionResumen]) -> Proporcion:
    return Proporcion(
        sum(1 for d in decisiones if d.decision == DECISION_CORRECTA), len(decisiones)
    )


def formato(p: Proporcion) -> str:
    """``0.83 [0.66, 0.93] (n=24)``, or ``— (n=0)``."""
    if p.valor is None or p.intervalo is None:
        return "— (n=0)"
    bajo, alto = p.intervalo
    return f"{p.valor:.2f} [{bajo:.2f}, {alto:.2f}] (n={p.total})"


def render_texto(c: Confianza) -> str:
    """The section ``fichas informe --revision`` prints."""
    lineas = [
        "Confianza en el evaluador (decisiones de personas)",
        "  precisión (muestra de publicadas que las personas dan por correctas, IC 95 % Wilson):",
        f"    global:                 {formato(c.precision)}",
        f"    últimas {VENTANA_MUESTRA} de la muestra: {formato(c.ventana)}",
    ]
    for familia, p in c.por_familia.items():
        lineas.append(f"    familia {familia:<15} {formato(p)}")
    for criterio, p in c.por_criterio.items():
        lineas.append(f"    criterio {criterio:<14} {formato(p)}")
    lineas.append(
        "  rechazos confirmados (revisión manual no aprobada tal cual): "
        + formato(c.rechazos_confirmados)
    )
    return "\n".join(lineas) + "\n"


def informe_desde_almacen(settings: Settings) -> str:
    """``fichas informe --revision``: the figures from the app's store, as text."""
    from revision.almacen.cola import Almacen
    from revision.almacen.database import exists

    if not exists(settings.postgres_dsn, settings.data_dir):
        raise FileNotFoundError(f"no reviewer store in {settings.data_dir}")
    from revision.certificador import retenidas, vigilancia

    async def leer() -> tuple[
        list[DecisionResumen],
        tuple[dict[Any, vigilancia.Seguimiento], dict[str, int]],
        list[tuple[str, str, str | None]],
    ]:
        almacen = await Almacen.abrir(settings.postgres_dsn, settings.data_dir)
        try:
            decisiones = [
                DecisionResumen(d.tipo, d.decision, d.familia, d.criterios)
                for d in await almacen.decisiones()
            ]
            seguidas = await vigilancia.leer_seguimientos(almacen)
            return decisiones, seguidas, await almacen.retenidas()
        finally:
            await almacen.cerrar()

    decisiones, (seguimientos, correctas), retenidos = asyncio.run(leer())
    return (
        render_texto(calcular(decisiones))
        + vigilancia.render_texto(seguimientos)
        + retenidas.render_texto(
            retenidas.calcular(
                correctas,
                retenidos,
                settings.muestra_proporcion,
                settings.sombra_proporcion,
            )
        )
    )
