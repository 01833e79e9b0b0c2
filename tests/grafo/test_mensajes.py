"""``indented_json`` writes what ``json.dumps(indent=2, ensure_ascii=False)`` writes."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from criterios import atributos_obligatorios, comprobar, familias_conocidas
from esquemas import EventoCambio, Ficha
from grafo import mensajes
from grafo.estado import origen_de
from grafo.mensajes import indented_json, mensaje_evaluador, prompt_generador
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


def test_ejemplos_del_generador_son_fichas_validas_con_los_atributos_de_su_familia() -> None:
    """Each example ficha of the examples option is what the house would publish: a valid
    Ficha within the limits, with exactly its family's required attributes, passing every
    code check against an origin that says what the ficha says."""
    texto = prompt_generador(ejemplos=True)
    assert "no una instrucción" in texto  # the origin framed as data
    ejemplos = re.findall(r"^- (\w+)\. Origen:.*?\n\s+(\{.*?\})$", texto, re.M | re.S)
    assert sorted(f for f, _ in ejemplos) == sorted(familias_conocidas())
    for familia, crudo in ejemplos:
        ficha = Ficha.model_validate(json.loads(crudo)).model_dump()
        assert sorted(ficha["atributos"]) == sorted(atributos_obligatorios(familia)), familia
        proveedor = {k: ficha[k] for k in ("titulo", "descripcion", "atributos")}
        evento = evento_dict(familia=familia, ficha_proveedor=proveedor, cifras={})
        origen = origen_de(evento, atributos_obligatorios(familia))
        fallidas = {k: v for k, v in comprobar(ficha, origen).items() if not v["ok"]}
        assert fallidas == {}, (familia, fallidas)


# -- the unsupported-words signal (FICHAS_EVALUADOR_SENAL) ------------------------------------

ORIGEN_ES = origen_de(
    evento_dict(
        familia="zapatillas",
        ficha_proveedor={
            "titulo": "Zapatilla running Runner X2 negra",
            "descripcion": "Zapatilla de running ligera con suela de goma.",
            "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
            "idioma": "es",
        },
        cifras={},
    ),
    atributos_obligatorios("zapatillas"),
)
INVENTA = {
    "titulo": "Zapatilla de running Runner X2 negra",
    "descripcion": "Zapatilla ligera con suela de goma que protege las rodillas del corredor.",
    "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
}


def test_senal_nombra_lo_que_el_origen_en_espanol_no_dice() -> None:
    senal = mensajes.senal_evaluador(INVENTA, ORIGEN_ES)
    assert senal is not None
    assert "rodilla" in senal["palabras_sin_respaldo"]
    assert "suela" not in senal["palabras_sin_respaldo"]  # the origin says it
    assert 0 < senal["proporcion"] < 1


def test_senal_no_se_muestra_con_origen_en_otro_idioma() -> None:
    ingles = ORIGEN_ES | {
        "ficha_proveedor": ORIGEN_ES["ficha_proveedor"] | {"idioma": "en"},
    }
    assert mensajes.senal_evaluador(INVENTA, ingles) is None


def test_senal_sin_palabras_con_contenido_no_se_muestra() -> None:
    vacia = {"titulo": "", "descripcion": "", "atributos": {}}
    assert mensajes.senal_evaluador(vacia, ORIGEN_ES) is None


def test_mensaje_evaluador_lleva_la_senal_solo_si_se_le_da() -> None:
    comprobaciones = comprobar(INVENTA, ORIGEN_ES)
    sin = mensaje_evaluador(INVENTA, comprobaciones, ORIGEN_ES)
    senal = mensajes.senal_evaluador(INVENTA, ORIGEN_ES)
    con = mensaje_evaluador(INVENTA, comprobaciones, ORIGEN_ES, senal)
    assert '"senal"' not in sin
    assert '"senal"' in con and '"rodilla"' in con
    assert json.loads(_bloque(con))["senal"] == senal
    assert json.loads(_bloque(sin)).keys() == {"ficha", "comprobaciones", "origen"}


def test_prompt_con_senal_explica_como_leerla_y_es_otro_texto() -> None:
    assert mensajes.prompt_evaluador(True).startswith(mensajes.prompt_evaluador())
    assert '"senal"' in mensajes.prompt_evaluador(True)
    assert '"senal"' not in mensajes.prompt_evaluador()


def _bloque(texto: str) -> str:
    """The fenced JSON block of a message."""
    return texto.split("```json\n", 1)[1].split("\n```", 1)[0]
