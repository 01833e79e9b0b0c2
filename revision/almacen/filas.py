"""The review store's rows by name: the columns an item and a decision are read with, and
what the store takes and gives back (``revision.almacen.cola``, ``revision.almacen.evidencia``).

A statement's row is read through a ``NamedTuple`` of its columns, never by position; what the
store returns for the figures is a ``NamedTuple`` too (a tuple, so callers that unpack it keep
working). docs/revision.md, "La base de datos".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from revision.almacen.item import Item

ABIERTA = "abierta"
DECIDIDA = "decidida"
OBSOLETA = "obsoleta"

# An item with its evidence (if any), which every decision on it carries (``Evidencia``).
ITEM_SELECT = (
    "select i.event_id, i.tipo, i.motivo, i.sku, i.version, i.familia, i.criterios, i.datos, "
    "i.recibido_en, i.estado, i.cerrado_en, i.candidata, e.clave, e.puntuacion, e.codigo_ok, "
    "e.llegada, e.sombra "
    "from revision_items i left join revision_evidencias e on e.event_id = i.event_id"
)
DECISION_COLUMNS = (
    "event_id, tipo, decision, familia, criterios, revisor, decidida_en, segundos, registro, "
    "publicacion, enviada"
)


class FilaItem(NamedTuple):
    """A row of ``ITEM_SELECT``: the item's columns, then its evidence's (None without)."""

    event_id: str
    tipo: str
    motivo: str
    sku: str
    version: int
    familia: str
    criterios: str  # JSON
    datos: str  # JSON
    recibido_en: float
    estado: str
    cerrado_en: float | None
    candidata: int
    clave: str | None  # JSON of the loop's key
    puntuacion: float | None
    codigo_ok: int | None
    llegada: int | None
    sombra: int | None  # shadow-mode evidence (the blind share included, v1.6)


class FilaDecision(NamedTuple):
    """A row of ``DECISION_COLUMNS``."""

    event_id: str
    tipo: str
    decision: str
    familia: str
    criterios: str  # JSON
    revisor: str
    decidida_en: float
    segundos: float
    registro: str  # JSON
    publicacion: str | None  # JSON
    enviada: int


@dataclass(frozen=True)
class ItemNuevo:
    """An arriving item as ``Almacen.guardar_item`` stores it. ``candidata``: a candidate
    loop's item (``event_id`` is then its id, ``revision.almacen.item.id_item``)."""

    event_id: str
    tipo: str
    motivo: str
    sku: str
    version: int
    familia: str
    criterios: list[str]
    datos: dict[str, Any]
    candidata: bool = False

    @classmethod
    def de_registro(
        cls,
        datos: dict[str, Any],
        tipo: str,
        motivo: str,
        criterios: list[str],
        *,
        event_id: str | None = None,
        candidata: bool = False,
    ) -> ItemNuevo:
        """The item of a review or sample record as it came: its SKU, version and family;
        its ``event_id`` unless the item's id differs (a candidate's)."""
        return cls(
            event_id=datos["event_id"] if event_id is None else event_id,
            tipo=tipo,
            motivo=motivo,
            sku=datos["sku"],
            version=int(datos["version"]),
            familia=datos["familia"],
            criterios=criterios,
            datos=datos,
            candidata=candidata,
        )


@dataclass(frozen=True)
class Decision:
    """A stored decision: its record for ``fichas.decisiones`` and the publication it implies."""

    event_id: str
    tipo: str
    decision: str
    familia: str
    criterios: list[str]
    revisor: str
    decidida_en: float
    segundos: float
    registro: dict[str, Any]
    publicacion: dict[str, Any] | None
    enviada: bool


@dataclass(frozen=True)
class Cierre:
    """What the store needs to close an item: the decision record and its publication."""

    decision: str
    criterios: list[str]
    revisor: str
    decidida_en: float
    registro: dict[str, Any]
    publicacion: dict[str, Any] | None


class ResumenAbiertos(NamedTuple):
    """Open live items per reason, and the arrival time of the oldest (None: none open)."""

    cuentas: dict[str, int]
    primero: float | None


class DecisionResumida(NamedTuple):
    """A live decision without its stored records: what the metrics need."""

    tipo: str
    decision: str
    familia: str
    criterios: list[str]
    revisor: str
    segundos: float


class VeredictoMuestra(NamedTuple):
    """A ``correcta``/``incorrecta`` verdict on a sampled ficha, with the published record."""

    event_id: str
    decision: str
    publicada: dict[str, Any]


def item_de_fila(row: Sequence[Any]) -> Item:
    """The ``Item`` of a row whose first columns are ``ITEM_SELECT``'s."""
    fila = FilaItem._make(row[: len(FilaItem._fields)])
    return Item(
        event_id=str(fila.event_id),
        tipo=str(fila.tipo),
        motivo=str(fila.motivo),
        sku=str(fila.sku),
        version=int(fila.version),
        familia=str(fila.familia),
        criterios=list(json.loads(fila.criterios)),
        datos=dict(json.loads(fila.datos)),
        recibido_en=float(fila.recibido_en),
        estado=str(fila.estado),
        cerrado_en=None if fila.cerrado_en is None else float(fila.cerrado_en),
        evidencia=_evidencia(fila),
        candidata=bool(fila.candidata),
        sombra=bool(fila.sombra),
    )


def _evidencia(fila: FilaItem) -> dict[str, Any] | None:
    """The ``Evidencia`` of an item (JSON-ready), or None: no key, or no score (contract v1.3:
    a decision on a ficha without a score is evidence of nothing)."""
    if fila.clave is None or fila.puntuacion is None or fila.llegada is None:
        return None  # ``llegada`` is set wherever an evidence row is
    return {
        "familia": str(fila.familia),
        "clave": json.loads(fila.clave),
        "puntuacion": float(fila.puntuacion),
        "codigo_ok": bool(fila.codigo_ok),
        "llegada": int(fila.llegada),
    }


def decision_de_fila(row: Sequence[Any]) -> Decision:
    """The ``Decision`` of a row of ``DECISION_COLUMNS``."""
    fila = FilaDecision._make(row)
    return Decision(
        event_id=str(fila.event_id),
        tipo=str(fila.tipo),
        decision=str(fila.decision),
        familia=str(fila.familia),
        criterios=list(json.loads(fila.criterios)),
        revisor=str(fila.revisor),
        decidida_en=float(fila.decidida_en),
        segundos=float(fila.segundos),
        registro=dict(json.loads(fila.registro)),
        publicacion=None if fila.publicacion is None else dict(json.loads(fila.publicacion)),
        enviada=bool(fila.enviada),
    )
