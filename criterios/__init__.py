"""Criteria of a publishable ficha: the versioned tables and the checks done in code.

``tablas`` reads the criteria and families tables of ``criterios/datos/`` (their content is
``CRITERIOS_VERSION``), ``vocabulario`` maps the origin to the house vocabulary, ``limpieza``
cleans it; ``comprobaciones`` runs the code checks, with ``reglas_casa`` (C05), ``cifras``
(C07), ``fidelidad`` and ``idiomas`` (C08-C11), ``_comun`` their helpers, and ``recursos``
loads their language data once at start-up; ``respaldo`` splits a ficha into claims and
judges whether a quoted fragment of the origin supports each (the quoting evaluator), on
what of the origin may back a claim (``citable``: no gifts, no title value its own data
contradict) and with a reader of translations (``lector``: multilingual embeddings), which
``clausulas`` asks about each clause of a claim (a fact added inside a sentence).

Imports only ``esquemas.constantes`` of the project (the contract's length limits); it
works on plain dicts, so the graph, the worker, the review app, the tools and the tests all
use it without building the event models. Pure functions: no I/O after the first load of a
table or a dictionary. Why each check reads what it reads: docs/calidad.md (Spanish).
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
