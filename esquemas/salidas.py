"""The processor's output events, in the exact shape ``contrato.md`` gives other teams.

They are built once, inside the graph (``publicar``/``descartar``), and stored in the
checkpoint as plain dicts. A redelivered event therefore re-emits the byte-identical
outcome, timestamps included, which is what lets consumers deduplicate on ``event_id``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from esquemas.ficha import Ficha, Problema, Veredicto

Motivo = Literal["rechazada", "salida_invalida"]
CodigoRechazo = Literal[
    "json_invalido", "esquema_invalido", "familia_desconocida", "demasiado_grande"
]


class Intento(BaseModel):
    """One turn of the loop, kept so that approval per attempt can be measured afterwards."""

    model_config = ConfigDict(extra="forbid")

    intento: int
    ficha: Ficha | None
    veredicto: Veredicto


class FichaPublicada(BaseModel):
    """Written to ``fichas.publicadas`` (and, sampled, ``fichas.muestra_revision``)."""

    model_config = ConfigDict(extra="forbid")

    event_id: str
    sku: str
    version: int
    familia: str
    ficha: Ficha
    intentos: int
    criterios_version: str
    modelo: str
    publicada_en: datetime


class FichaEnRevision(BaseModel):
    """Written to ``fichas.revision_manual``: the last ficha, why, and the whole history."""

    model_config = ConfigDict(extra="forbid")

    event_id: str
    sku: str
    version: int
    familia: str
    ficha: Ficha | None
    intentos: int
    motivo: Motivo
    problemas: list[Problema]
    historial: list[Intento]
    criterios_version: str
    enviada_en: datetime


class ErrorRechazo(BaseModel):
    """Why an input message was rejected, precise enough for the feed owner to fix it."""

    model_config = ConfigDict(extra="forbid")

    codigo: CodigoRechazo
    mensaje: str
    campo: str | None = None


class OrigenMensaje(BaseModel):
    """Where the rejected message came from, so it can be found and replayed."""

    model_config = ConfigDict(extra="forbid")

    topic: str
    particion: int
    offset: int


class EventoRechazado(BaseModel):
    """Written to ``proveedor.cambios.dlq``: the error and the raw payload, nothing lost."""

    model_config = ConfigDict(extra="forbid")

    error: ErrorRechazo
    payload: str
    origen: OrigenMensaje
    recibido_en: datetime
