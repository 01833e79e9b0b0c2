"""The evaluator never sees the generator's prompt: checked paragraph by paragraph.

A check on the whole prompt passes as long as one character differs; this one takes every
paragraph of the generator's prompt and every generator-facing criterion text, and proves
that none of them reaches the evaluator, in any of its prompts (the verdict, the rubric and
the quoter) or in the user message it gets, including through a recorded request.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from criterios import cargar_criterios, comprobar
from criterios.respaldo import afirmaciones, origen_citable
from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
from grafo.mensajes import (
    mensaje_evaluador,
    mensaje_evaluador_citas,
    mensaje_evaluador_rubrica,
    prompt_evaluador,
    prompt_evaluador_citas,
    prompt_evaluador_rubrica,
    prompt_generador,
)
from harness.fake_llm.client import FakeLLM

ORIGEN = {
    "sku": "CEG-1",
    "familia": "botellas",
    "atributos_obligatorios": ["capacidad_ml", "material", "color"],
    "ficha_proveedor": {"titulo": "Bottle 750 ml", "descripcion": "Steel bottle.", "atributos": {}},
    "cifras": {},
}
FICHA = {
    "titulo": "Botella de acero de 750 ml",
    "descripcion": "Botella de acero inoxidable.",
    "atributos": {"capacidad_ml": "750", "material": "acero", "color": "gris"},
}


# Boilerplate both prompts share on purpose: how to answer, not what to write.
COMPARTIDAS = {"Responde solo con un objeto JSON con exactamente estos campos:"}


def _fragmentos_del_generador() -> list[str]:
    """Every paragraph and every line of 30 characters or more of the generator's prompt,
    plus the generator text of every criterion: a single rule copied over is caught. The
    prompt with the examples option is the longer one: it contains the plain one."""
    prompt = prompt_generador(ejemplos=True)
    assert prompt_generador() in prompt
    parrafos = [p.strip() for p in prompt.split("\n\n") if p.strip()]
    reglas = [c.texto_generador for c in cargar_criterios()]
    lineas = [
        linea.strip()
        for linea in prompt.splitlines()
        if len(linea.strip()) >= 30 and linea.strip() not in COMPARTIDAS
    ]
    return list(dict.fromkeys(parrafos + reglas + lineas))


FRAGMENTOS = _fragmentos_del_generador()


def _lo_que_ve_el_evaluador() -> list[str]:
    comprobaciones = comprobar(FICHA, ORIGEN)
    return [
        prompt_evaluador(),
        prompt_evaluador_rubrica(),
        prompt_evaluador_citas(),
        mensaje_evaluador(FICHA, comprobaciones, ORIGEN),
        mensaje_evaluador_rubrica(FICHA, ORIGEN),
        mensaje_evaluador_citas(origen_citable(ORIGEN), afirmaciones(FICHA)),
    ]


def test_hay_fragmentos_que_comprobar() -> None:
    assert len(FRAGMENTOS) >= 10
    assert all(len(f) >= 20 for f in FRAGMENTOS)


@pytest.mark.parametrize("fragmento", FRAGMENTOS, ids=[f[:40] for f in FRAGMENTOS])
def test_ningun_parrafo_del_generador_llega_al_evaluador(fragmento: str) -> None:
    for texto in _lo_que_ve_el_evaluador():
        assert fragmento not in texto


@pytest.mark.parametrize("rubrica", [False, True, "citas"])
async def test_peticion_del_evaluador_sin_nada_del_generador(
    fake_llm: FakeLLM, rubrica: bool | str
) -> None:
    respuesta = (
        'texto:{"inventa": {"cita": "", "falla": true}, "publicidad": {"cita": "", "falla": false},'
        ' "vacia": {"cita": "", "falla": false}}'
        if rubrica is True
        else "rechazar:C04"
        if rubrica == "citas"
        else "aprobar"
    )
    fake_llm.configure({"default": {"evaluador": [respuesta]}})
    model = build_chat_model(LLMSettings(url=fake_llm.url, model="fake", timeout_s=10))
    try:
        evaluacion = await Agentes(model, rubrica=rubrica).evaluar(
            FICHA, comprobar(FICHA, ORIGEN), ORIGEN
        )
    finally:
        await close_chat_model(model)
    veredicto = evaluacion.veredicto
    assert veredicto.aprobada is (not rubrica)
    if rubrica:  # the rubric's inventa, the quoter's last claim left without a quote
        assert {p.criterio for p in veredicto.problemas} == {"C04"}
    (peticion,) = fake_llm.requests(agent="evaluador")
    texto = "\n".join(str(m.get("content")) for m in peticion["body"]["messages"])
    for fragmento in FRAGMENTOS:
        assert fragmento not in texto
    assert "intento" not in texto.lower()


def test_mutacion_detectada(tmp_path: Path) -> None:
    """Sanity of the check itself: an evaluator prompt carrying a generator rule is caught."""
    contaminado = prompt_evaluador() + "\n" + cargar_criterios()[4].texto_generador
    assert any(f in contaminado for f in FRAGMENTOS)
