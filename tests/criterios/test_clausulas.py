"""A fact added inside a sentence (issue 48): the clause check of the model-free evaluator,
with the real reader, on the cases of the labelled set it was measured on.

A claim that says what the origin says plus a clause it never says is caught on the clause;
a translation or a rewording of the origin keeps every clause (docs/calidad.md, «El juez que
lee traducciones»).
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from criterios import clausulas, lector
from criterios.clausulas import Lectura, anadido, lecturas, partir, sin_respaldo, trozos
from criterios.fidelidad import leer_origen
from criterios.respaldo import afirmaciones, descripcion_sin_nada_propio
from criterios.vocabulario import mapear_origen
from herramientas.evaluar.casos import origen_de_caso

CASOS = Path(__file__).parents[2] / "ejemplos" / "evaluacion" / "casos.jsonl"


@cache
def _casos() -> dict[str, dict[str, Any]]:
    lineas = CASOS.read_text(encoding="utf-8").splitlines()
    return {c["id"]: c for c in (json.loads(linea) for linea in lineas)}


def _candidata(ident: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ficha of a labelled candidate and its case's origin, mapped as the graph maps it."""
    caso = _casos()[ident.split("/")[0]]
    ficha = next(c for c in caso["candidatas"] if c["id"] == ident)
    return ficha, mapear_origen(origen_de_caso(caso)).origen


def _anadidos(ident: str) -> list[Lectura]:
    ficha, origen = _candidata(ident)
    espanol = leer_origen(origen).idioma is None
    hallados = [anadido(a, origen, espanol) for a in afirmaciones(ficha["ficha"])]
    return [h for h in hallados if h is not None]


# -- the split ----------------------------------------------------------------------------------


def test_una_afirmacion_se_parte_en_comas_y_conectores() -> None:
    assert partir("Zapatilla urbana de piel con suela de goma antideslizante y forro.") == [
        "Zapatilla urbana de piel",
        "con suela de goma antideslizante",
        "y forro",
    ]


def test_una_coma_decimal_no_parte_la_clausula() -> None:
    assert partir("Pesa 1,4 kg, apta para inducción") == ["Pesa 1,4 kg", "apta", "para inducción"]
    assert partir("con Bluetooth 5.3, micrófono") == ["con Bluetooth 5.3", "micrófono"]


def test_el_origen_se_parte_en_los_conectores_de_sus_idiomas() -> None:
    _, origen = _candidata("EV-BOT-01/1")
    piezas = trozos(origen)
    assert "Keeps drinks cold 24 h" in piezas and "and hot 12 h" in piezas


def test_una_palabra_sin_respaldo_es_la_que_el_origen_no_escribe_en_ninguna_forma() -> None:
    _, origen = _candidata("EV-ZAP-05/4")  # «Zapatilla urbana de piel con suela de goma»
    assert sin_respaldo("con suela de goma antideslizante", origen) == ["antideslizante"]
    assert sin_respaldo("y forro transpirable", origen) == ["forro", "transpirable"]
    assert sin_respaldo("Zapatilla urbana de piel", origen) == []


# -- what it catches, what it keeps -------------------------------------------------------------


@pytest.mark.parametrize(
    ("ident", "inventado"),
    [
        ("EV-ZAP-05/4", "forro transpirable"),  # es: «…suela de goma antideslizante y forro…»
        ("EV-ZAP-13/6", "cordones elásticos"),
        ("EV-CAM-06/5", "absorbe la humedad"),
        ("EV-SAR-02/6", "asa auxiliar"),
        ("EV-BOT-09/4", "taza incorporada"),
        ("EV-AUR-16/4", "control táctil"),
        ("EV-AUR-13/5", "orejeras lavables"),  # fr: «volume limité à 85 dB, 15 h d'autonomie»
        ("EV-AUR-07/5", "sin cables"),  # «El estuche se carga sin cables»: a charging case
    ],
)
def test_una_clausula_que_el_origen_no_dice_se_encuentra(ident: str, inventado: str) -> None:
    (hallado,) = _anadidos(ident)
    assert inventado in hallado.clausula
    assert hallado.parecido < hallado.umbral and 0.0 <= hallado.grado() < 1.0


@pytest.mark.parametrize(
    "ident",
    [
        "EV-ZAP-01/4",  # en: «Zapatilla de running ligera, con empeine de malla y suela de goma»
        "EV-BOT-01/2",  # en: doble pared, aislamiento al vacío, frías 24 h y calientes 12 h
        "EV-CAM-04/2",  # fr: «col V en lin lavé, coupe ample»
        "EV-BOT-03/2",  # pt: «capa protetora de silicone e tampa de bambu»
        "EV-BOT-02/4",  # es, reworded: «boquilla que se abre rápido» for «de apertura rápida»
        "EV-SAR-02/2",  # es, reworded: «que se puede usar en inducción y en el horno»
    ],
)
def test_una_traduccion_o_una_redaccion_con_otras_palabras_se_queda(ident: str) -> None:
    ficha, _ = _candidata(ident)
    assert ficha["aprobada"]
    assert _anadidos(ident) == []


def test_un_origen_extranjero_no_pregunta_por_una_palabra_suelta() -> None:
    _, origen = _candidata("EV-BOT-01/6")  # «con doble pared»: «pared» is not written in English
    (leida,) = lecturas("Botella con doble pared", origen, clausulas.UMBRALES[True])
    assert leida.clausula == "con doble pared" and leida.ajenas == 1
    assert lecturas("Botella con doble pared", origen, clausulas.UMBRALES[False]) == []


def test_el_grado_va_de_cero_en_el_suelo_a_uno_en_el_umbral() -> None:
    assert Lectura("x", lector.SUELO, 0.86, 1).grado() == 0.0
    assert Lectura("x", 0.86, 0.86, 1).grado() == 1.0 and Lectura("x", 0.86, 0.86, 1).basta()
    assert Lectura("x", 0.83, 0.86, 1).grado() == pytest.approx(0.5)


# -- the empty description: a word whose lemma the title has ------------------------------------


def test_negra_bajo_un_titulo_negro_no_es_propio_de_la_descripcion() -> None:
    ficha, _ = _candidata("EV-ZAP-14/4")  # «Zapatilla de skate negra para hombre.»
    assert not ficha["aprobada"]
    assert descripcion_sin_nada_propio(ficha["ficha"])
