"""Definitions shared by ``fichas informe`` and ``fichas evaluar``: one place says what
"approval rate at attempt k" means, so the report on live outcomes and the evaluation on the
labelled set can never count it in two ways; the report's figures (``Informe``), which the
report, its chart and the demo's summary read; and the labels the reports print (a
criterion's short name, a rate as a percentage).

What each outcome tells: a ``FichaEnRevision`` carries its whole ``historial`` (every attempt
and its verdict), while a ``FichaPublicada`` carries only ``intentos`` = k, which still means
it reached attempts 1..k, was approved at k and rejected before. ``leer_salida`` is how the
tools read an outcome record off its topic: through the contract's decode, as every reader does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from esquemas import EventoRechazado, FichaEnRevision, FichaPublicada
from esquemas.constantes import DESTINO_DLQ, DESTINO_PUBLICADAS, DESTINO_REVISION
from esquemas.decode import decode_json

Salida = tuple[str, dict[str, Any]]
MODELOS: Mapping[str, type[BaseModel]] = {
    DESTINO_PUBLICADAS: FichaPublicada,
    DESTINO_REVISION: FichaEnRevision,
    DESTINO_DLQ: EventoRechazado,
}


def leer_salida(destino: str, valor: bytes | None) -> dict[str, Any] | None:
    """An outcome record's value as this version reads it (``esquemas.decode``: a later
    version's fields dropped at every level, its new values kept as written); None when it is
    not an outcome of ``destino`` (counted as ignored by the caller)."""
    modelo = MODELOS.get(destino)
    if modelo is None or valor is None:
        return None
    try:
        datos = decode_json(modelo, valor).data
    except ValueError:  # not JSON, not UTF-8, or not the contract's record
        return None
    return datos if isinstance(datos, dict) else None


@dataclass(frozen=True)
class TasaIntento:
    """Of the fichas that reached attempt ``intento``, how many were approved at it."""

    intento: int
    llegaron: int
    aprobadas: int

    @property
    def tasa(self) -> float | None:
        """Approval rate at this attempt; None when no ficha reached it."""
        return self.aprobadas / self.llegaron if self.llegaron else None


def intentos_de(evento: Mapping[str, Any]) -> int:
    """The ``intentos`` field as an int (0 when missing or malformed)."""
    valor = evento.get("intentos")
    return valor if isinstance(valor, int) and valor > 0 else 0


def historial_de(evento: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The well-formed records of a review outcome's ``historial``."""
    return [r for r in evento.get("historial") or [] if isinstance(r, dict)]


def llegadas_y_aprobadas(destino: str, evento: Mapping[str, Any]) -> tuple[list[int], list[int]]:
    """The attempts one outcome reached, and those at which it was approved.

    A published ficha with ``intentos`` = k reached 1..k and was approved at k. A review
    outcome reached the attempts of its ``historial`` (or 1..k when it has none) and is
    approved at none of them, unless an attempt says so (an approval vetoed later).
    """
    if destino == DESTINO_PUBLICADAS:
        k = intentos_de(evento)
        return list(range(1, k + 1)), [k] if k else []
    if destino != DESTINO_REVISION:
        return [], []
    historial = historial_de(evento)
    if not historial:
        return list(range(1, intentos_de(evento) + 1)), []
    llegadas = [int(r.get("intento", 0)) for r in historial]
    aprobadas = [
        int(r.get("intento", 0)) for r in historial if (r.get("veredicto") or {}).get("aprobada")
    ]
    return llegadas, aprobadas


def tasas_por_intento(salidas: Iterable[Salida]) -> list[TasaIntento]:
    """Approval rate at each attempt over a set of outcomes (see ``llegadas_y_aprobadas``)."""
    llegaron: Counter[int] = Counter()
    aprobadas: Counter[int] = Counter()
    for destino, evento in salidas:
        llegadas, aprobadas_en = llegadas_y_aprobadas(destino, evento)
        llegaron.update(llegadas)
        aprobadas.update(aprobadas_en)
    return [TasaIntento(n, llegaron[n], aprobadas[n]) for n in sorted(k for k in llegaron if k > 0)]


@dataclass
class Informe:
    """Everything ``render_text`` and ``render_png`` show; built by ``calcular_informe``."""

    destinos: dict[str, int]
    por_intento: list[TasaIntento]
    rechazos: dict[str, int]
    rechazos_sin_detalle: int
    salidas_invalidas: int
    motivos: dict[str, int]
    umbral: float
    ultimo: TasaIntento | None
    compensa: bool | None
    conclusion: str
    duplicadas: int = 0
    ignoradas: int = 0
    avisos: list[str] = field(default_factory=list)


# -- labels every report prints ----------------------------------------------------------


def nombres_criterios() -> dict[str, str]:
    """Criterion id -> its rule, from the criteria table (never repeated here)."""
    from criterios.tablas import cargar_criterios

    return {c.id: c.regla for c in cargar_criterios()}


def nombre_corto(regla: str, ancho: int = 26) -> str:
    """The rule's name: the part before a colon, else its first words up to ``ancho``."""
    nombre = regla.split(":", 1)[0].rstrip(".")
    if len(nombre) <= ancho:
        return nombre
    corto = nombre[:ancho].rsplit(" ", 1)[0]
    return corto + "…"


def etiqueta_criterio(criterio: str, nombres: Mapping[str, str]) -> str:
    """``C04 Fiel al origen`` when the table knows the id, else the id alone."""
    regla = nombres.get(criterio)
    return f"{criterio} {nombre_corto(regla)}" if regla else criterio


def porcentaje(valor: float | None) -> str:
    """A rate as a percentage with one decimal, or a dash when undefined."""
    return "-" if valor is None else f"{valor:.1%}"
