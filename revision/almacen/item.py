"""``Item``: one thing to review, as the store keeps it and the decisions read it.

An item's id (``id_item``) is its record's ``event_id``, except for a candidate loop's item:
the candidate's record carries the live event's ``event_id`` (contract v1.5) and both items
must be kept, so its id adds the candidate's key id. The same record redelivered keeps its id
(one item). Why: docs/revision.md, "La vista candidata".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SEPARADOR_CANDIDATA = "~candidata~"


def es_candidata(datos: Mapping[str, Any]) -> bool:
    """Whether a review record is a candidate loop's ficha (v1.5 field ``candidata``, read
    from the record as it came: only ``true`` counts, absent or anything else is live)."""
    return datos.get("candidata") is True


def es_muestra_sombra(datos: Mapping[str, Any]) -> bool:
    """Whether a review record is of the blind shadow share (v1.6 ``muestra_sombra``): the
    worker held it back from an open gate by a hash of its id alone. Only ``true`` counts."""
    return datos.get("muestra_sombra") is True


def id_item(event_id: str, candidata: bool, clave_id: str | None) -> str:
    """The store's id of an item: the record's ``event_id``; for a candidate's item, with
    its key id (``sin-clave`` when the record carries no readable key). Pure."""
    if not candidata:
        return event_id
    return f"{event_id}{SEPARADOR_CANDIDATA}{clave_id or 'sin-clave'}"


@dataclass(frozen=True)
class Item:
    """One thing to review: a ficha the loop could not publish, a sampled published one, or
    a candidate loop's ficha (``candidata``: shadow evidence, never published)."""

    event_id: str  # the item's id (``id_item``): the record's own for every live item
    tipo: str
    motivo: str
    sku: str
    version: int
    familia: str
    criterios: list[str]
    datos: dict[str, Any]
    recibido_en: float
    estado: str
    cerrado_en: float | None
    # The ``Evidencia`` (JSON-ready) every decision on this item carries; None without a key
    # or a score (contract v1.3).
    evidencia: dict[str, Any] | None = None
    candidata: bool = False
    # Stored as shadow-mode evidence (``revision.almacen.cola.Llegada.sombra``: its gate was
    # closed, a candidate's, or the blind shadow share): its page is blind (no judge, no score).
    sombra: bool = False

    @property
    def id_evento(self) -> str:
        """The ``event_id`` of the record the item came from (the live event's, for a
        candidate item): what a decision record names."""
        return str(self.datos.get("event_id") or self.event_id)
