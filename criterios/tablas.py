"""The versioned criteria and families tables, read from ``criterios/datos/``.

The criteria live in data, not in a prompt: the generator and the evaluator read their own
text of each row, the code checks read the families, and every outcome carries
``CRITERIOS_VERSION`` so a change of any text can be traced to the fichas it produced.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from esquemas.canonico import sha256_canonico

ARCHIVO_CRITERIOS = "criterios_v1.json"
ARCHIVO_FAMILIAS = "familias_v1.json"
ARCHIVO_VOCABULARIO = "vocabulario_v1.json"  # criterios.vocabulario
DATA_DIR = "datos"


class FamiliaDesconocida(KeyError):
    """A family that is not in the table: the event cannot be checked, so it must be rejected."""

    def __init__(self, familia: str, conocidas: tuple[str, ...] = ()) -> None:
        super().__init__(familia)
        self.familia = familia
        self.conocidas = conocidas

    def __str__(self) -> str:
        """KeyError would print only the quoted key; say what is wrong and what is accepted."""
        lista = ", ".join(self.conocidas) or "ninguna"
        return f"familia desconocida: {self.familia!r} (conocidas: {lista})"


class Criterio(BaseModel):
    """One row of the criteria table: each agent gets its own text, code may check it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^C\d{2}$")
    regla: str = Field(min_length=1)
    texto_evaluador: str = Field(min_length=1)
    texto_generador: str = Field(min_length=1)
    comprobado_por: Literal["codigo", "evaluador", "codigo+evaluador"]

    @property
    def comprobado_en_codigo(self) -> bool:
        """Code-checked criteria veto publication whatever the evaluator says."""
        return self.comprobado_por != "evaluador"


class Familia(BaseModel):
    """A product family and the attributes every ficha of it must carry (C03)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    nombre: str = Field(min_length=1)
    atributos_obligatorios: tuple[str, ...] = Field(min_length=1)

    @field_validator("atributos_obligatorios")
    @classmethod
    def _distinct(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        """An empty or repeated attribute name is a typo in the table, not a rule."""
        if any(not a.strip() for a in value) or len(set(value)) != len(value):
            raise ValueError("atributos vacíos o repetidos")
        return value


class _TablaCriterios(BaseModel):
    """Shape of the criteria file, validated once when it is loaded."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(ge=1)
    criterios: tuple[Criterio, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> _TablaCriterios:
        """Two rows with one id would make problems and metrics ambiguous."""
        ids = [c.id for c in self.criterios]
        if len(set(ids)) != len(ids):
            raise ValueError(f"ids de criterio repetidos: {ids}")
        return self


class _TablaFamilias(BaseModel):
    """Shape of the families file: familia -> required attributes."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = Field(ge=1)
    familias: dict[str, tuple[str, ...]] = Field(min_length=1)


@dataclass(frozen=True)
class Tablas:
    """Both tables as loaded together, with the version string derived from their content."""

    criterios: tuple[Criterio, ...]
    familias: Mapping[str, Familia]
    version: str


def calcular_version(
    datos_criterios: Mapping[str, Any],
    datos_familias: Mapping[str, Any],
    datos_vocabulario: Mapping[str, Any] | None = None,
) -> str:
    """Declared version plus a content hash, so editing any text yields a new version string.

    The hash is over canonical JSON (sorted keys, no whitespace) of the tables, the house
    vocabulary included (it changes what the checks compare), so reformatting a file does
    not change it but changing a word does.
    """
    tablas: dict[str, Any] = {"criterios": datos_criterios, "familias": datos_familias}
    if datos_vocabulario is not None:
        tablas["vocabulario"] = datos_vocabulario
    return f"{datos_criterios['version']}-{sha256_canonico(tablas)[:10]}"


def tablas_desde_datos(
    datos_criterios: Mapping[str, Any],
    datos_familias: Mapping[str, Any],
    datos_vocabulario: Mapping[str, Any] | None = None,
) -> Tablas:
    """Validate raw table data; separate from file reading so tests can feed edited copies."""
    criterios = _TablaCriterios.model_validate(datos_criterios)
    familias = _TablaFamilias.model_validate(datos_familias)
    por_nombre = {
        nombre: Familia(nombre=nombre, atributos_obligatorios=atributos)
        for nombre, atributos in familias.familias.items()
    }
    return Tablas(
        criterios=criterios.criterios,
        familias=MappingProxyType(por_nombre),
        version=calcular_version(datos_criterios, datos_familias, datos_vocabulario),
    )


def read_json(folder: Traversable | Path, name: str) -> dict[str, Any]:
    """Read one table file as UTF-8 JSON; the tables must be objects at the top level."""
    data = json.loads(folder.joinpath(name).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise ValueError(f"{name}: se esperaba un objeto JSON")
    return data


def cargar_tablas(directorio: Traversable | Path | None = None) -> Tablas:
    """Load both tables; without a directory, the packaged ones (cached, read once)."""
    if directorio is None:
        return _tablas_empaquetadas()
    vocabulario = (
        read_json(directorio, ARCHIVO_VOCABULARIO)
        if directorio.joinpath(ARCHIVO_VOCABULARIO).is_file()
        else None
    )
    return tablas_desde_datos(
        read_json(directorio, ARCHIVO_CRITERIOS),
        read_json(directorio, ARCHIVO_FAMILIAS),
        vocabulario,
    )


@cache
def _tablas_empaquetadas() -> Tablas:
    """The packaged tables never change while the process runs, so read them only once."""
    return cargar_tablas(files("criterios").joinpath(DATA_DIR))


def cargar_criterios() -> tuple[Criterio, ...]:
    """All criteria rows in table order (C01..C07), for the prompts and the checks."""
    return _tablas_empaquetadas().criterios


def cargar_familias() -> Mapping[str, Familia]:
    """Families by name, read-only: the table is shared by every caller."""
    return _tablas_empaquetadas().familias


def familias_conocidas() -> tuple[str, ...]:
    """Family names accepted on input; anything else goes to the DLQ."""
    return tuple(cargar_familias())


def atributos_obligatorios(familia: str) -> tuple[str, ...]:
    """Required attributes of a family (C03); an unknown family is an error, never empty."""
    familias = cargar_familias()
    if familia not in familias:
        raise FamiliaDesconocida(familia, tuple(familias))
    return familias[familia].atributos_obligatorios


def criterios_comprobados_en_codigo() -> tuple[str, ...]:
    """Ids whose code check vetoes publication, as the table declares them."""
    return tuple(c.id for c in cargar_criterios() if c.comprobado_en_codigo)


CRITERIOS_VERSION: str = _tablas_empaquetadas().version
