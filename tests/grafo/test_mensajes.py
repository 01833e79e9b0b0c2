"""``indented_json`` writes what ``json.dumps(indent=2, ensure_ascii=False)`` writes."""

from __future__ import annotations

import json
from typing import Any

import pytest

from criterios import atributos_obligatorios, comprobar
from esquemas import EventoCambio
from grafo.estado import origen_de
from grafo.mensajes import indented_json, mensaje_evaluador
from harness.eventos import evento_dict


def _stdlib(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _origen(sku: str) -> dict[str, Any]:
    evento = EventoCambio.model_validate(evento_dict(sku)).model_dump(mode="json")
    return origen_de(evento, atributos_obligatorios(evento["familia"]))


@pytest.mark.parametrize(
    "value",
    [
        {"vacío": {}, "lista": [], "nada": None, "sí": True, "no": False},
        {"texto": 'año «x» "y" \\ \n \t \x00 \x1f \u2028 😀 ™ ° ½'},
        {"números": [0, -3, 2**62, 12.0, 0.1, -0.0, 49.99, 1234567.891, 3.141592653589793]},
        [{"a": [{"b": []}, {}]}, "fin"],
    ],
)
def test_same_text_as_the_standard_library(value: Any) -> None:
    assert indented_json(value) == _stdlib(value)


def test_same_text_for_the_messages_the_agents_get() -> None:
    origen = _origen("MSG-1")
    ficha = {"titulo": "Zapatilla", "descripcion": "Ligera.", "atributos": {"talla": "42"}}
    cuerpo = {"ficha": ficha, "comprobaciones": comprobar(ficha, origen), "origen": origen}
    assert indented_json(cuerpo) == _stdlib(cuerpo)
    assert _stdlib(cuerpo) in mensaje_evaluador(ficha, cuerpo["comprobaciones"], origen)


def test_values_orjson_refuses_fall_back_to_the_standard_library() -> None:
    assert indented_json({"ean": 2**70}) == _stdlib({"ean": 2**70})
    assert indented_json({1: "clave entera"}) == _stdlib({1: "clave entera"})


def test_small_floats_differ_only_in_the_exponent() -> None:
    assert json.loads(indented_json({"x": 1e-7})) == {"x": 1e-7}
