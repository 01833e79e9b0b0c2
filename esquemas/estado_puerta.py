"""The publication gate's state (contract v1.2, topic ``fichas.puerta``; v1.3 and v1.5 add fields).

A gate says, for one family (or ``*`` pooled) and one configuration of the loop (the
``ClavePuerta``), whether fichas may be published without a person, and from which score on. A
worker whose running configuration has another key treats the gate as closed. Invariants a
change must keep: a null key field is left out of the key's id (so an older record keeps its
id and is simply another key); a record's topic key is ``EstadoPuerta.id``, which is the gate id
for a gate's state and the hold id (``id_retencion``) for a person's hold or release, so no
opening can ever overwrite a hold; the new motivo values carry the fields that make them mean
something (checked on construction and on reading). ``PuertaAplicada`` is what a
``FichaPublicada`` carries of the gate that let it through. Why each field is what it is:
docs/puerta.md ("The key", "Holds", "Coverage") and docs/contrato.md ("Additions of v1.5").
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from esquemas.constantes import (
    FAMILIA_TODAS,
    MAX_NOTA_RETENCION,
    MAX_RETENIDA_POR,
    MOTIVO_PUERTA_CUBIERTA,
    MOTIVOS_RETENCION,
    SUFIJO_RETENCION,
    ModoEvaluador,
    MotivoPuerta,
)


class ClavePuerta(BaseModel):
    """What a gate was measured on; a gate applies only where every field matches.

    ``prompt_generador_sha256`` (v1.3) is null only on records written under v1.2, and the three
    v1.5 fields are null on records written before v1.5: such a key never equals a running key
    that has them, so the gate it describes is closed. They are optional rather than required
    so that those records still parse and keep their id (``texto`` leaves a null out).

    v1.5: ``modelo_servido`` is the identity the model server reports for the name the loop
    calls (``grafo.fuente_puerta.modelo_servido``: vLLM's ``root`` and ``max_model_len``,
    llama.cpp's model file and metadata), not the configured name; ``muestreo_generador`` and
    ``muestreo_evaluador`` are the canonical text of every request setting that changes the answers
    of each side (``grafo.fuente_puerta.texto_muestreo``: sorted ``name=value`` pairs).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    modelo: str
    prompt_evaluador_sha256: str
    criterios_version: str
    modo_evaluador: ModoEvaluador
    prompt_generador_sha256: str | None = None
    modelo_servido: str | None = Field(
        default=None,
        description="v1.5: the served model's identity as its server reports it, e.g. "
        "'max_model_len=32768 owned_by=vllm root=Qwen/Qwen3-30B-A3B'",
    )
    muestreo_generador: str | None = Field(
        default=None,
        description="v1.5: the generator's request settings that change answers, sorted "
        "name=value pairs, e.g. 'max_tokens=1024 temperature=0.2'",
    )
    muestreo_evaluador: str | None = Field(
        default=None,
        description="v1.5: the evaluator's request settings that change answers, sorted "
        "name=value pairs",
    )

    def texto(self) -> str:
        """A short stable id of the key: the first 16 hex digits of its canonical JSON's sha256.

        Not the fields joined with a separator: a model name may contain any character. A null
        field is left out, so a record written before a field existed keeps its id.
        """
        campos = self.model_dump(mode="json", exclude_none=True)
        canonico = json.dumps(campos, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonico.encode()).hexdigest()[:16]


def id_puerta(familia: str, clave: ClavePuerta) -> str:
    """The record key of a gate's state on ``fichas.puerta``: ``<familia or *>|<key id>``."""
    return f"{familia}|{clave.texto()}"


def id_retencion(familia: str, clave: ClavePuerta) -> str:
    """v1.5: the record key of a gate's hold or release: ``<gate id>|retencion``.

    A key of its own, so that the topic's "newest record per key" can never let an opening
    written a moment after a hold (by a writer that had not read the hold yet) replace it.
    """
    return f"{id_puerta(familia, clave)}|{SUFIJO_RETENCION}"


class EstadoPuerta(BaseModel):
    """One gate's state, or a person's hold or release of it; the value on ``fichas.puerta``."""

    model_config = ConfigDict(extra="forbid")

    familia: str = Field(description=f"the family, or {FAMILIA_TODAS!r} for the pooled gate")
    clave: ClavePuerta
    abierta: bool
    umbral: float | None = Field(description="λ: the lowest score published; null when closed")
    objetivo: float
    delta: float
    n: int = Field(description="approvals at λ in the calibration data")
    k: int = Field(description="of those, how many people rejected")
    origen_datos: str = Field(description="what the gate was certified on")
    motivo: MotivoPuerta
    cota_inferior: float | None = Field(
        default=None, description="the online lower confidence bound on precision, if any"
    )
    actualizada_en: datetime
    abierta_por: str | None = Field(
        default=None,
        description="v1.3: 'automatico' (the reviewer app's certifier), 'calibrar' (the command "
        "line) or the reviewer who opened it by hand; null when closed",
    )
    retenida_por: str | None = Field(
        default=None,
        min_length=1,
        max_length=MAX_RETENIDA_POR,
        description="v1.5, hold records only (motivo 'retenida' or 'liberada'): the person who "
        "held or released the gate",
    )
    nota: str | None = Field(
        default=None,
        max_length=MAX_NOTA_RETENCION,
        description="v1.5, hold records only: the reason the person gave, free text",
    )
    conjunta_actualizada_en: datetime | None = Field(
        default=None,
        description="v1.5, motivo 'cubierta_por_conjunta' only: the 'actualizada_en' of the "
        "pooled gate's open record this coverage rests on; it governs only while that record "
        "is the pooled gate's current one",
    )

    @model_validator(mode="after")
    def _campos_del_motivo(self) -> Self:
        """Refuse a hold or a coverage without the fields that make it mean something."""
        retencion = self.motivo in MOTIVOS_RETENCION
        if retencion and (self.abierta or self.umbral is not None or self.retenida_por is None):
            raise ValueError(
                f"a {self.motivo!r} record is closed, has no umbral and names retenida_por"
            )
        if not retencion and (self.retenida_por is not None or self.nota is not None):
            raise ValueError("retenida_por and nota belong to hold records only")
        cubierta = self.motivo == MOTIVO_PUERTA_CUBIERTA
        if cubierta and (
            not self.abierta
            or self.umbral is None
            or self.conjunta_actualizada_en is None
            or self.familia == FAMILIA_TODAS
        ):
            raise ValueError(
                "a 'cubierta_por_conjunta' record is a family's, open, with umbral and "
                "conjunta_actualizada_en"
            )
        if not cubierta and self.conjunta_actualizada_en is not None:
            raise ValueError("conjunta_actualizada_en belongs to covered records only")
        return self

    @property
    def retencion(self) -> bool:
        """Whether this is a person's hold or release rather than the gate's state."""
        return self.motivo in MOTIVOS_RETENCION

    @property
    def id(self) -> str:
        """This record's key: the hold id for a hold or release, else the gate id."""
        if self.retencion:
            return id_retencion(self.familia, self.clave)
        return id_puerta(self.familia, self.clave)


class PuertaAplicada(BaseModel):
    """On a ``FichaPublicada`` the loop published: the gate that let it through."""

    # Frozen (hashable): one certification (family, key, threshold, ``certificada_en``) keys the
    # sequence of people's verdicts that ``revision.certificador.vigilancia`` keeps for it.
    model_config = ConfigDict(extra="forbid", frozen=True)

    umbral: float
    objetivo: float
    clave: ClavePuerta
    familia: str
    certificada_en: datetime
    n: int
    k: int
    conjunta_certificada_en: datetime | None = Field(
        default=None,
        description="v1.5: for a family covered by the pooled gate, the 'actualizada_en' of the "
        "pooled certification its coverage rests on; null for a gate certified on its own data",
    )

    @property
    def id(self) -> str:
        """The record key on ``fichas.puerta`` of the gate that let the ficha through."""
        return id_puerta(self.familia, self.clave)
