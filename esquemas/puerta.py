"""The publication gate's state (contract v1.2, topic ``fichas.puerta``).

A gate says, for one family (or ``*`` pooled) and one configuration of the loop, whether
fichas may be published without a person, and from which score on. The configuration is the
``ClavePuerta``: a threshold certifies P(people approve | code checks pass, score >= λ), which
depends on the fichas the generator writes as much as on the judge that scores them, so the key
is the whole loop's (v1.3): model, generator prompt, evaluator prompt, criteria version and
evaluator mode. A worker whose running configuration has another key treats the gate as
closed. ``PuertaAplicada`` is what a ``FichaPublicada`` carries of the gate that let it through.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from esquemas.constantes import FAMILIA_TODAS, ModoEvaluador, MotivoPuerta


class ClavePuerta(BaseModel):
    """What a gate was measured on; a gate applies only where every field matches.

    ``prompt_generador_sha256`` (v1.3) is null only on records written under v1.2: such a key
    never equals a running v1.3 key, so the gate it describes is closed, as the contract says.
    It is optional rather than required so that those records still parse and keep their id
    (``texto`` leaves a null out) instead of being logged as invalid.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    modelo: str
    prompt_evaluador_sha256: str
    criterios_version: str
    modo_evaluador: ModoEvaluador
    prompt_generador_sha256: str | None = None

    def texto(self) -> str:
        """A short stable id of the key: the first 16 hex digits of its canonical JSON's sha256.

        Not the fields joined with a separator: a model name may contain any character. A null
        field is left out, so a v1.2 record keeps the id it was written under.
        """
        campos = self.model_dump(mode="json", exclude_none=True)
        canonico = json.dumps(campos, sort_keys=True, separators=(",", ":"))
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
    abierta_por: str | None = Field(
        default=None,
        description="v1.3: 'automatico' (the reviewer app's certifier), 'calibrar' (the command "
        "line) or the reviewer who opened it by hand; null when closed",
    )

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
