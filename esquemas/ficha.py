"""What the two agents answer: ``Ficha`` (generator) and ``Veredicto`` (evaluator).

The schemas stay flat on purpose: vLLM's guided decoding handles three plain fields well,
and nested per-family models would slow the first token. ``max_length`` is enforced by
pydantic after generation, not by the server, which is why the code checks in
``criterios`` repeat the length rules: the schema is the second barrier, not the first.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from esquemas.constantes import MAX_DESCRIPCION, MAX_DETALLE, MAX_TITULO


class Ficha(BaseModel):
    """A product page ready to publish: title, description and attributes."""

    model_config = ConfigDict(extra="ignore")

    titulo: str = Field(
        max_length=MAX_TITULO, description=f"Título, como mucho {MAX_TITULO} caracteres"
    )
    descripcion: str = Field(
        max_length=MAX_DESCRIPCION,
        description=f"Descripción, como mucho {MAX_DESCRIPCION} caracteres",
    )
    atributos: dict[str, str] = Field(description="Atributos de la familia, nombre -> valor")


class Problema(BaseModel):
    """One reason for a rejection, tied to a criterion id so it can be counted and fixed."""

    model_config = ConfigDict(extra="ignore")

    criterio: str = Field(description="Identificador del criterio, por ejemplo C04")
    detalle: str = Field(max_length=MAX_DETALLE, description="Qué falla, en una frase")

    @field_validator("detalle", mode="before")
    @classmethod
    def _truncate(cls, value: Any) -> Any:
        """A long explanation is still a valid rejection: cut it instead of failing the verdict."""
        if isinstance(value, str) and len(value) > MAX_DETALLE:
            return value[: MAX_DETALLE - 1] + "…"
        return value


class Veredicto(BaseModel):
    """The evaluator's yes or no, with the problems that justify a no."""

    model_config = ConfigDict(extra="ignore")

    aprobada: bool = Field(description="true si la ficha cumple todos los criterios")
    problemas: list[Problema] = Field(
        default_factory=list, description="Un elemento por cada criterio incumplido"
    )
