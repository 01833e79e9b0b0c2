"""Criteria of a publishable ficha: the versioned tables and the checks done in code.

Depends only on the standard library and pydantic, and works on plain dicts, so the graph,
the stream and the tests can all use it without the event schemas.
"""

from criterios.comprobaciones import (
    CRITERIOS_EN_CODIGO,
    comprobar,
    comprobar_atributos,
    comprobar_cifras,
    comprobar_descripcion,
    comprobar_reglas_casa,
    comprobar_titulo,
    fallos,
)
from criterios.fidelidad import palabras_sin_respaldo
from criterios.tablas import (
    CRITERIOS_VERSION,
    Criterio,
    Familia,
    FamiliaDesconocida,
    Tablas,
    atributos_obligatorios,
    calcular_version,
    cargar_criterios,
    cargar_familias,
    cargar_tablas,
    criterios_comprobados_en_codigo,
    familias_conocidas,
    tablas_desde_datos,
)
from criterios.vocabulario import mapear_origen

__all__ = [
    "CRITERIOS_EN_CODIGO",
    "CRITERIOS_VERSION",
    "Criterio",
    "Familia",
    "FamiliaDesconocida",
    "Tablas",
    "atributos_obligatorios",
    "calcular_version",
    "cargar_criterios",
    "cargar_familias",
    "cargar_tablas",
    "comprobar",
    "comprobar_atributos",
    "comprobar_cifras",
    "comprobar_descripcion",
    "comprobar_reglas_casa",
    "comprobar_titulo",
    "criterios_comprobados_en_codigo",
    "fallos",
    "familias_conocidas",
    "mapear_origen",
    "palabras_sin_respaldo",
    "tablas_desde_datos",
]
