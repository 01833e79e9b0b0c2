"""The contract on the wire: how a record's value is encoded, and its headers per kind.

Every writer of the project uses these functions and nothing else encodes a record, so a change
here changes every topic at once. Invariants: ``encode_value``'s bytes never change for a given
value (a redelivered outcome is re-emitted from its stored bytes;
``tests/esquemas/test_wire.py`` pins a sample); headers are pure functions of the record;
writing is strict, reading tolerant (``esquemas.decode``). docs/contrato.md, "Headers";
docs/stream.md, "Offsets inside the output transaction".
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel

from esquemas.constantes import (
    CABECERA_ESQUEMA,
    CABECERA_ESQUEMA_VERSION,
    CABECERA_EVENT_ID,
    CABECERA_SKU,
    CABECERA_VERSION,
    DESTINO_PUBLICADAS,
    ESQUEMA_DECISION_REVISION,
    ESQUEMA_ESTADO_PUERTA,
    ESQUEMA_EVENTO_RECHAZADO,
    ESQUEMA_FICHA_EN_REVISION,
    ESQUEMA_FICHA_PUBLICADA,
    ESQUEMA_VERSION,
)

Cabeceras = list[tuple[str, bytes]]


def encode_value(value: Mapping[str, Any] | BaseModel) -> bytes:
    """A record's value as compact UTF-8 JSON: no spaces, non-ASCII text as is, keys in order.

    A model is written as pydantic writes it (``model_dump_json``: the gate topic's records
    since they exist); a dict, e.g. an outcome as stored, with ``json.dumps``. The two agree
    except in how they write a float's exponent (``1e-09`` against ``1e-9``), so each kind of
    record keeps the bytes it always had.
    """
    if isinstance(value, BaseModel):
        return value.model_dump_json().encode("utf-8")
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def cabeceras_esquema(nombre: str) -> Cabeceras:
    """The schema name and version: on every record the project writes."""
    return [
        (CABECERA_ESQUEMA, nombre.encode("utf-8")),
        (CABECERA_ESQUEMA_VERSION, ESQUEMA_VERSION.encode("utf-8")),
    ]


def cabeceras_resultado(destino: str, registro: Mapping[str, Any]) -> Cabeceras:
    """Headers of an outcome (published, sampled or sent to review): SKU, version, id, schema.

    The sample on ``fichas.muestra_revision`` is a ``FichaPublicada`` and gets the same headers,
    as does a person's ficha the worker publishes.
    """
    nombre = ESQUEMA_FICHA_PUBLICADA if destino == DESTINO_PUBLICADAS else ESQUEMA_FICHA_EN_REVISION
    return _cabeceras_de_ficha(registro, nombre)


def cabeceras_decision(registro: Mapping[str, Any]) -> Cabeceras:
    """Headers of a ``DecisionRevision`` on ``fichas.decisiones``, as an outcome's: SKU,
    version, ``event_id`` (the decided ficha's) and the schema."""
    return _cabeceras_de_ficha(registro, ESQUEMA_DECISION_REVISION)


def cabeceras_rechazo(originales: Iterable[tuple[str, bytes | None]] | None) -> Cabeceras:
    """Headers of a DLQ record: the original message's, then the DLQ schema's.

    An original header that uses one of the schema's names is dropped, so ``esquema`` always
    names the DLQ record, never what the supplier claimed its message was.
    """
    propias = cabeceras_esquema(ESQUEMA_EVENTO_RECHAZADO)
    nombres = {nombre for nombre, _ in propias}
    reenviadas = [(k, bytes(v or b"")) for k, v in originales or () if k not in nombres]
    return reenviadas + propias


def cabeceras_estado() -> Cabeceras:
    """Headers of a gate state on ``fichas.puerta``: the schema alone (its key is the gate id)."""
    return cabeceras_esquema(ESQUEMA_ESTADO_PUERTA)


def _cabeceras_de_ficha(registro: Mapping[str, Any], esquema: str) -> Cabeceras:
    """SKU, version and ``event_id`` from the value, then the schema."""
    return [
        (CABECERA_SKU, str(registro["sku"]).encode("utf-8")),
        (CABECERA_VERSION, str(registro["version"]).encode("utf-8")),
        (CABECERA_EVENT_ID, str(registro["event_id"]).encode("utf-8")),
        *cabeceras_esquema(esquema),
    ]
