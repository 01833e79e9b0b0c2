"""The labelled set (ejemplos/evaluacion): size, variety, and references that pass every check."""

from __future__ import annotations

import json
import runpy
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from criterios import comprobar, fallos, familias_conocidas
from esquemas import EventoCambio
from herramientas.evaluar.casos import origen_de_caso, texto_inyectado

CARPETA = Path(__file__).parents[2] / "ejemplos" / "evaluacion"
CASOS: list[dict[str, Any]] = [
    json.loads(linea) for linea in (CARPETA / "casos.jsonl").read_text().splitlines() if linea
]
RASGOS_PEDIDOS = {
    "ingles",
    "portugues",
    "frances",
    "gritos",
    "precio",
    "promocion",
    "plazo_entrega",
    "atributos_en_titulo",
    "otras_unidades",
    "falta_atributo",
    "contradiccion",
    "emoji",
    "url",
    "inyeccion",
}


def test_jsonl_al_dia_con_sus_fuentes() -> None:
    modulo = runpy.run_path(str(CARPETA / "construir.py"))
    assert (CARPETA / "casos.jsonl").read_text(encoding="utf-8") == modulo["texto"]()


def test_tamano_y_variedad() -> None:
    assert len(CASOS) >= 80
    assert len({c["id"] for c in CASOS}) == len(CASOS)
    familias = Counter(c["evento"]["familia"] for c in CASOS)
    assert set(familias) == set(familias_conocidas())
    assert min(familias.values()) >= 16
    rasgos = Counter(r for c in CASOS for r in c["rasgos"])
    assert RASGOS_PEDIDOS <= set(rasgos), RASGOS_PEDIDOS - set(rasgos)
    con_candidatas = [c for c in CASOS if len(c["candidatas"]) >= 2]
    assert len(con_candidatas) >= 40
    candidatas = [x for c in CASOS for x in c["candidatas"]]
    # issue 48: enough candidates for intervals that mean something, good ones in every
    # origin language (a judge of translations is measured on translations)
    assert len(candidatas) >= 400
    buenas = Counter(
        c["evento"]["ficha_proveedor"]["idioma"]
        for c in CASOS
        for x in c["candidatas"]
        if x["aprobada"]
    )
    assert sum(buenas.values()) >= 150 and min(buenas[i] for i in ("es", "en", "pt", "fr")) >= 10
    tipos = Counter(x["tipo"] for c in CASOS for x in c["candidatas"])
    # Subtle failures only a reader catches, and good fichas to approve.
    assert tipos["inventa"] >= 10 and tipos["superlativo"] >= 10 and tipos["vacia"] >= 10
    assert tipos["buena"] >= 40


@pytest.mark.parametrize("caso", CASOS, ids=[c["id"] for c in CASOS])
def test_evento_valido_y_referencia_pasa_todas_las_comprobaciones(caso: dict[str, Any]) -> None:
    EventoCambio.model_validate(caso["evento"])
    origen = origen_de_caso(caso)
    assert fallos(comprobar(caso["referencia"], origen)) == []
    assert texto_inyectado(caso["referencia"], caso["inyeccion"]) == []
    if "inyeccion" in caso["rasgos"]:
        assert caso["inyeccion"], "an injection case names the fragments to watch for"


CRITERIOS_V2 = {"C08", "C09", "C10", "C11"}


@pytest.mark.parametrize("caso", CASOS, ids=[c["id"] for c in CASOS])
def test_veredictos_humanos_coherentes_con_el_codigo(caso: dict[str, Any]) -> None:
    """A candidate the code vetoes is rejected by people too. The checks of criteria v1 name
    at least the criteria people name; C08–C11 (criteria v2, issue 22) catch in code part of
    what people file under C04, C06 or C07, so for them the veto rule is what holds: nothing
    they flag is approved by people. Each superlative or call to buy of the set is caught by
    C05's code part (``reglas_casa.superlativos``) and by nothing else; an empty description
    is caught by C10 at most."""
    origen = origen_de_caso(caso)
    for candidata in caso["candidatas"]:
        codigo = {f["criterio"] for f in fallos(comprobar(candidata["ficha"], origen))}
        if candidata["aprobada"]:
            assert not codigo and not candidata["criterios"], candidata["id"]
        else:
            assert candidata["criterios"], candidata["id"]
            de_v1 = codigo - CRITERIOS_V2
            assert de_v1 <= set(candidata["criterios"]), (candidata["id"], codigo)
        if candidata["tipo"] == "superlativo":
            assert codigo == {"C05"}, candidata["id"]
        if candidata["tipo"] == "vacia":
            assert codigo <= {"C10"}, candidata["id"]
        assert candidata["ficha"] != caso["referencia"] or candidata["aprobada"]
