"""Kafka headers of the records the worker writes: routing without parsing the value.

A subscriber can filter by SKU, skip versions it already has, deduplicate on ``event_id`` and
check the schema name and version from the headers alone (docs/contrato.md, "Headers"). Pure
functions: the same outcome always gives the same headers, so a redelivered outcome is
byte-identical, headers included.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from esquemas.constantes import (
    CABECERA_ESQUEMA,
    CABECERA_ESQUEMA_VERSION,
    CABECERA_EVENT_ID,
    CABECERA_SKU,
    CABECERA_VERSION,
    DESTINO_PUBLICADAS,
    ESQUEMA_EVENTO_RECHAZADO,
    ESQUEMA_FICHA_EN_REVISION,
    ESQUEMA_FICHA_PUBLICADA,
    ESQUEMA_VERSION,
)

Cabeceras = list[tuple[str, bytes]]


def cabeceras_esquema(nombre: str) -> Cabeceras:
    """The schema name and version: on every record the processor writes."""
    return [
        (CABECERA_ESQUEMA, nombre.encode("utf-8")),
        (CABECERA_ESQUEMA_VERSION, ESQUEMA_VERSION.encode("utf-8")),
    ]


def cabeceras_resultado(destino: str, evento: Mapping[str, Any]) -> Cabeceras:
    """Headers of an outcome (published, sampled or sent to review): SKU, version, id, schema.

    The sample on ``fichas.muestra_revision`` is a ``FichaPublicada`` and gets the same headers.
    """
    nombre = ESQUEMA_FICHA_PUBLICADA if destino == DESTINO_PUBLICADAS else ESQUEMA_FICHA_EN_REVISION
    return [
        (CABECERA_SKU, str(evento["sku"]).encode("utf-8")),
        (CABECERA_VERSION, str(evento["version"]).encode("utf-8")),
        (CABECERA_EVENT_ID, str(evento["event_id"]).encode("utf-8")),
        *cabeceras_esquema(nombre),
    ]


def cabeceras_rechazo(originales: Iterable[tuple[str, bytes]] | None) -> Cabeceras:
    """Headers of a DLQ record: the original message's, then the DLQ schema's.

    An original header that uses one of the schema's names is dropped, so ``esquema`` always
    names the DLQ record, never what the supplier claimed its message was.
    """
    propias = cabeceras_esquema(ESQUEMA_EVENTO_RECHAZADO)
    nombres = {nombre for nombre, _ in propias}
    reenviadas = [(k, bytes(v or b"")) for k, v in originales or () if k not in nombres]
    return reenviadas + propias
