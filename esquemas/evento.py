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

SKU_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
MAX_ATRIBUTOS = 100
MAX_MESSAGE_BYTES = 64 * 1024

Sku = Annotated[str, StringConstraints(pattern=SKU_PATTERN)]
Cifra = float | int | str


class FichaProveedor(BaseModel):
    """The supplier's own product page: the origin every generated ficha must be faithful to."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    titulo: str = Field(max_length=500)
    descripcion: str = Field(max_length=10_000)
    atributos: dict[str, str] = Field(default_factory=dict)
    idioma: str | None = None

    @field_validator("atributos")
    @classmethod
    def _limit_atributos(cls, value: dict[str, str]) -> dict[str, str]:
        """The contract caps attributes at 100 entries: larger maps are feed bugs, not products."""
        if len(value) > MAX_ATRIBUTOS:
            raise ValueError(f"at most {MAX_ATRIBUTOS} attributes, got {len(value)}")
        return value


class EventoCambio(BaseModel):
    """One change of one SKU, as the supplier feed writes it to ``proveedor.cambios``."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    event_id: str = Field(min_length=1, max_length=128)
    sku: Sku
    version: int = Field(ge=1, strict=True)
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
            raise ValueError("ocurrido_en must be RFC 3339 with a time zone offset")
        return value
