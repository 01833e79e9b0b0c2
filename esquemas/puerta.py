"""The publication gate's state (contract v1.2, topic ``fichas.puerta``).

A gate says, for one family (or ``*`` pooled) and one configuration of the evaluator, whether
fichas may be published without a person, and from which score on. The configuration is the
``ClavePuerta``: a threshold certified for one model, prompt, criteria version and evaluator
mode says nothing about another, so a worker whose running configuration has another key treats
the gate as closed. ``PuertaAplicada`` is what a ``FichaPublicada`` carries of the gate that let
it through.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from esquemas.constantes import FAMILIA_TODAS, ModoEvaluador, MotivoPuerta


class ClavePuerta(BaseModel):
    """What a gate was measured on; a gate applies only where all four match."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    modelo: str
    prompt_evaluador_sha256: str
    criterios_version: str
    modo_evaluador: ModoEvaluador

    def texto(self) -> str:
        """A short stable id of the key: the first 16 hex digits of its canonical JSON's sha256.

        Not the fields joined with a separator: a model name may contain any character.
        """
        canonico = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonico.encode()).hexdigest()[:16]


def id_puerta(familia: str, clave: ClavePuerta) -> str:
    """The record key on ``fichas.puerta``: ``<familia or *>|<key id>``."""
    return f"{familia}|{clave.texto()}"


class EstadoPuerta(BaseModel):
    """One gate's state, the value on ``fichas.puerta``; the newest record per key wins."""

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

    @property
    def id(self) -> str:
        """This state's record key."""
        return id_puerta(self.familia, self.clave)


class PuertaAplicada(BaseModel):
    """On a ``FichaPublicada`` the loop published: the gate that let it through."""

    # Frozen (hashable): one certification (family, key, threshold, ``certificada_en``) keys the
    # sequence of people's verdicts that ``revision.vigilancia`` keeps for it.
    model_config = ConfigDict(extra="forbid", frozen=True)

    umbral: float
    objetivo: float
    clave: ClavePuerta
    familia: str
    certificada_en: datetime
    n: int
    k: int

    @property
    def id(self) -> str:
        """The record key on ``fichas.puerta`` of the gate that let the ficha through."""
        return id_puerta(self.familia, self.clave)
