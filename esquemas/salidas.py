"""The processor's output events, in the exact shape ``contrato.md`` gives other teams.

They are built once, inside the graph (``publicar``/``enviar_a_revision``), and stored in the
checkpoint as plain dicts. A redelivered event therefore re-emits the byte-identical
outcome, timestamps included, which is what lets consumers deduplicate on ``event_id``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from esquemas.constantes import (
    CodigoRechazo,
    DecisionHumana,
    DecisionPublicacion,
    Motivo,
    Muestreo,
    PayloadCodificacion,
    TipoRevision,
)
from esquemas.estado_puerta import ClavePuerta, PuertaAplicada
from esquemas.ficha import Ficha, Problema, Veredicto


class Intento(BaseModel):
    """One turn of the loop, kept so that approval per attempt can be measured afterwards."""

    model_config = ConfigDict(extra="forbid")

    intento: int
    ficha: Ficha | None
    veredicto: Veredicto
    # v1.2: the evaluator's P(approvable), null when the server gave no usable logprobs.
    puntuacion: float | None = Field(default=None, ge=0.0, le=1.0)


class Origen(BaseModel):
    """What the supplier sent: the reference a reviewer compares a ficha against (v1.1)."""

    model_config = ConfigDict(extra="forbid")

    ficha_proveedor: dict[str, Any]
    cifras: dict[str, Any] = Field(default_factory=dict)


class RevisionHumana(BaseModel):
    """Who published a ficha by hand, and how (v1.1); null when the loop published it."""

    model_config = ConfigDict(extra="forbid")

    revisor: str
    decision: DecisionPublicacion
    decidida_en: datetime


class FichaPublicada(BaseModel):
    """Written to ``fichas.publicadas`` (and, sampled, ``fichas.muestra_revision``).

    ``revision`` is null when the loop published the ficha. ``origen`` and (v1.6) ``muestreo``
    are filled only on the sample topic, where a reviewer needs them (``SOLO_MUESTRA``); the
    published topic stays as subscribers know it.
    """

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
    revision: RevisionHumana | None = None
    origen: Origen | None = None
    # v1.2: the gate that let the loop publish (null when a person published, or under the
    # uncertified ``FICHAS_PUERTA=veredicto``), and the ficha's score.
    puerta: PuertaAplicada | None = None
    puntuacion: float | None = Field(default=None, ge=0.0, le=1.0)
    # v1.3: the key of the loop that wrote the ficha (for a person's publication, the loop that
    # drafted it); null only on records written before v1.3.
    clave: ClavePuerta | None = None
    # v1.6: on the sample topic only, like ``origen``: why this ficha was sampled.
    muestreo: Muestreo | None = Field(
        default=None,
        description="v1.6, sample topic only: 'proporcion' (the hash of event_id under "
        "FICHAS_MUESTRA_PROPORCION) or 'minimo_diario' (among the first "
        "FICHAS_MUESTRA_MINIMA_DIA published fichas of its family that UTC day, on its "
        "worker); absent on fichas.publicadas",
    )


# The fields of a ``FichaPublicada`` that belong to the sample topic alone: the published topic
# (and a person's publication) leaves them out, so it stays as subscribers know it.
SOLO_MUESTRA = frozenset({"origen", "muestreo"})


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
    origen: Origen | None = None
    # v1.3: the key of the loop that wrote the ficha; null only on records written before v1.3.
    clave: ClavePuerta | None = None
    # v1.5 (issue 41): true on a candidate loop's shadow evidence, under the candidate's
    # ``clave``: a label for that key's gate, never a ficha to publish. Absent (false) on every
    # record of the live loop; the same ``event_id`` may then have two items (told apart by
    # ``candidata`` and ``clave``).
    candidata: bool = False
    # v1.6 (issue 47): true when the gate of the ficha's family under ``clave`` was open and
    # the event fell in the blind shadow share (``FICHAS_SOMBRA_PROPORCION``): not published,
    # whatever its score, so people see an unselected share of the open gate's final fichas.
    # Absent (false) on every other record.
    muestra_sombra: bool = Field(
        default=False,
        description="v1.6: held back from an open gate for the blind shadow share; people "
        "decide it as shadow-mode evidence (absent: false)",
    )


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
    """Written to ``proveedor.cambios.dlq``: the error and the raw payload, nothing lost.

    ``payload`` may be cut so that the record always fits the producer's maximum;
    ``payload_sha256`` is of the full original value and ``truncado`` says whether it was cut.
    """

    model_config = ConfigDict(extra="forbid")

    error: ErrorRechazo
    payload: str
    payload_codificacion: PayloadCodificacion = "texto"
    payload_sha256: str | None = None
    truncado: bool = False
    origen: OrigenMensaje
    recibido_en: datetime


class Evidencia(BaseModel):
    """What a decision proves about a gate, on its own (v1.3): no join with another topic.

    The certifier reads decisions in ``llegada`` order (the ficha's arrival position in its
    gate's sequence), never in the order people decided them, so reviewers who decide the easy
    fichas first cannot open a gate early.
    """

    model_config = ConfigDict(extra="forbid")

    familia: str
    clave: ClavePuerta
    puntuacion: float = Field(ge=0.0, le=1.0, description="the decided attempt's score")
    codigo_ok: bool = Field(description="the decided attempt passed every code check")
    llegada: int = Field(ge=0, description="arrival position in the gate's sequence")


class DecisionRevision(BaseModel):
    """Written to ``fichas.decisiones`` by the reviewer app: one person's verdict (v1.1)."""

    model_config = ConfigDict(extra="forbid")

    event_id: str
    sku: str
    version: int
    tipo: TipoRevision
    decision: DecisionHumana
    criterios: list[str] = Field(default_factory=list)
    nota: str = ""
    campos_editados: list[str] = Field(default_factory=list)
    revisor: str
    decidida_en: datetime
    # v1.3: null when the decided ficha carries no score (or predates v1.3).
    evidencia: Evidencia | None = None
    # v1.3, one writer per SKU (docs/contrato.md): for ``aprobada``/``editada``, the ficha as the
    # person approved it; the worker that owns the SKU's partition publishes it on
    # ``fichas.publicadas`` unless a newer version of the SKU was handled. Null for every other
    # decision, and on decisions written before this addition (the app then published itself).
    publicacion: FichaPublicada | None = None
