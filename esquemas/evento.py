"""The input event of the contract: ``EventoCambio`` (schema version 1).

Every limit of ``contrato.md`` is a validator here, so that the stream layer can send
anything that fails to the DLQ with a precise field name instead of letting a bad value
reach the model. Unknown fields are ignored (``extra="ignore"``), as the contract promises
to the supplier feed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from esquemas.constantes import (
    MAX_ATRIBUTOS,
    MAX_CIFRA_ABS,
    MAX_CIFRA_TEXTO,
    MAX_DESCRIPCION_PROVEEDOR,
    MAX_EVENT_ID,
    MAX_TITULO_PROVEEDOR,
    MAX_VERSION,
    SKU_PATTERN,
)

Sku = Annotated[str, StringConstraints(pattern=SKU_PATTERN)]
# A figure is a bounded number or a short text. The bounds keep every accepted value exact
# through JSON, msgpack (the checkpoints) and the databases' integer and float columns: an
# unbounded integer once broke a checkpoint for good. ``allow_inf_nan=False`` refuses NaN and
# Infinity even when a caller builds the model from Python floats.
Cifra = (
    Annotated[int, Field(strict=True, ge=-MAX_CIFRA_ABS, le=MAX_CIFRA_ABS)]
    | Annotated[float, Field(strict=True, allow_inf_nan=False, ge=-MAX_CIFRA_ABS, le=MAX_CIFRA_ABS)]
    | Annotated[str, Field(max_length=MAX_CIFRA_TEXTO)]
)


class FichaProveedor(BaseModel):
    """The supplier's own product page: the origin every generated ficha must be faithful to."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    titulo: str = Field(max_length=MAX_TITULO_PROVEEDOR)
    descripcion: str = Field(max_length=MAX_DESCRIPCION_PROVEEDOR)
    atributos: dict[str, str] = Field(default_factory=dict)
    idioma: str | None = None

    @field_validator("atributos")
    @classmethod
    def _limit_atributos(cls, value: dict[str, str]) -> dict[str, str]:
        """The contract caps attributes at 100 entries: larger maps are feed bugs, not products."""
        if len(value) > MAX_ATRIBUTOS:
            raise ValueError(f"como máximo {MAX_ATRIBUTOS} atributos; hay {len(value)}")
        return value


class EventoCambio(BaseModel):
    """One change of one SKU, as the supplier feed writes it to ``proveedor.cambios``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    event_id: str = Field(min_length=1, max_length=MAX_EVENT_ID)
    sku: Sku
    version: int = Field(ge=1, le=MAX_VERSION, strict=True)
    proveedor: str = Field(min_length=1)
    familia: str = Field(min_length=1)
    ocurrido_en: datetime
    ficha_proveedor: FichaProveedor
    cifras: dict[str, Cifra] = Field(default_factory=dict)

    @field_validator("ocurrido_en")
    @classmethod
    def _require_timezone(cls, value: datetime) -> datetime:
        """RFC 3339 timestamps carry an offset; a naive time would be ambiguous across workers."""
        if value.tzinfo is None:
            raise ValueError("debe ser una fecha y hora RFC 3339 con zona horaria")
        return value
