"""The fake LLM's contract with the product's prompts, checked against the real ones.

``harness.fake_llm.prompt_contract`` names everything the fake reads from a request. Here the
requests are built as ``grafo`` builds them (its messages, its schemas through the same
``ProviderStrategy`` the agents use) and every marker is checked: that the fake tells each
agent, finds the SKU and the origin, knows the rubric's questions, and that what it answers
parses as the models the agents expect. A prompt change that would blind the fake fails here,
naming the marker, instead of making the fake answer the default somewhere else.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from langchain.agents.structured_output import ProviderStrategy
from pydantic import BaseModel

from criterios import atributos_obligatorios, mapear_origen, respaldo
from esquemas import Ficha, Veredicto
from grafo import mensajes
from grafo.citas import Cita, Citas, formato_respuesta
from grafo.estado import origen_de
from grafo.rubrica import PREGUNTAS, Rubrica
from harness.eventos import evento_dict
from harness.fake_llm import answers, prompt_contract
from harness.fake_llm.prompt_contract import EVALUATOR, GENERATOR

SKU = "ZAP-CONTRATO-7"


def _origen() -> dict[str, Any]:
    evento = evento_dict(SKU)
    return origen_de(evento, atributos_obligatorios(evento["familia"]))


def _peticion(system: str, user: str, schema: type[BaseModel]) -> dict[str, Any]:
    """A chat request as the agents send it: system prompt, one user message, the schema."""
    return {
        "model": "m",
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        **ProviderStrategy(schema).to_model_kwargs(),
    }


def _generador() -> dict[str, Any]:
    problemas = [{"criterio": "C06", "detalle": "vacía"}]  # a retry: problems after the origin
    texto = mensajes.mensaje_generador(_origen(), problemas)
    return _peticion(mensajes.prompt_generador(), texto, Ficha)


def _evaluador() -> dict[str, Any]:
    ficha = {"titulo": "t", "descripcion": "d", "atributos": {}}
    texto = mensajes.mensaje_evaluador(ficha, {}, _origen())
    return _peticion(mensajes.prompt_evaluador(), texto, Veredicto)


def _evaluador_senal() -> dict[str, Any]:
    ficha = {"titulo": "Zapatilla", "descripcion": "Protege las rodillas.", "atributos": {}}
    origen = _origen()
    texto = mensajes.mensaje_evaluador(ficha, {}, origen, {"palabras_sin_respaldo": ["rodilla"]})
    return _peticion(mensajes.prompt_evaluador(True), texto, Veredicto)


def _rubrica() -> dict[str, Any]:
    ficha = {"titulo": "t", "descripcion": "d", "atributos": {}}
    texto = mensajes.mensaje_evaluador_rubrica(ficha, _origen())
    return _peticion(mensajes.prompt_evaluador_rubrica(), texto, Rubrica)


FICHA_CITAS = {"titulo": "Zapatilla de trail", "descripcion": "Con suela de goma.", "atributos": {}}


def _citas() -> dict[str, Any]:
    """The quoting evaluator's request, with the schema narrowed as ``grafo.citas`` narrows it."""
    origen = mapear_origen(_origen()).origen
    claims = respaldo.afirmaciones(FICHA_CITAS)
    texto = mensajes.mensaje_evaluador_citas(respaldo.origen_citable(origen), claims)
    cuerpo = _peticion(mensajes.prompt_evaluador_citas(), texto, Citas)
    fragmentos = respaldo.fragmentos(origen)
    cuerpo["response_format"] = formato_respuesta(
        cuerpo["response_format"], fragmentos, len(claims)
    )
    return cuerpo


@pytest.mark.parametrize(
    ("peticion", "agente", "rubrica"),
    [
        (_generador, GENERATOR, False),
        (_evaluador, EVALUATOR, False),
        (_evaluador_senal, EVALUATOR, False),
        (_rubrica, EVALUATOR, True),
        (_citas, EVALUATOR, False),
    ],
)
def test_el_falso_distingue_cada_agente_y_encuentra_el_sku(peticion, agente, rubrica) -> None:
    cuerpo = peticion()
    assert prompt_contract.detect_agent(cuerpo) == agente
    assert prompt_contract.is_rubric(cuerpo) is rubrica
    assert prompt_contract.detect_sku(cuerpo) == SKU


def test_el_origen_del_generador_da_los_atributos_obligatorios_del_proveedor() -> None:
    origen = _origen()
    texto = prompt_contract.last_user_text(_generador())
    esperados = {
        clave: str(valor)
        for clave, valor in origen["ficha_proveedor"]["atributos"].items()
        if clave in origen["atributos_obligatorios"]
    }
    assert esperados, "the sample event must carry some required attribute to test this"
    assert prompt_contract.required_supplier_attributes(texto) == esperados


def test_el_falso_lee_las_afirmaciones_y_los_fragmentos_del_evaluador_citas() -> None:
    tarea = prompt_contract.quoting_task(_citas())
    assert tarea is not None
    claims, fragmentos = tarea
    assert claims == respaldo.afirmaciones(FICHA_CITAS)
    assert fragmentos == respaldo.fragmentos(mapear_origen(_origen()).origen)
    assert prompt_contract.quoting_task(_evaluador()) is None
    campos = (prompt_contract.QUOTE_FIELD, prompt_contract.SUPPORTED_FIELD)
    assert tuple(Cita.model_fields) == campos
    assert set(Citas.model_fields) == {prompt_contract.QUOTES_PROPERTY}


def test_las_preguntas_de_la_rubrica_son_las_del_grafo() -> None:
    assert {
        criterio: pregunta for pregunta, (criterio, _) in PREGUNTAS.items()
    } == prompt_contract.RUBRIC_QUESTIONS
    assert set(Rubrica.model_fields) == set(prompt_contract.RUBRIC_QUESTIONS.values())
    pregunta = Rubrica.model_fields["inventa"].annotation
    assert isinstance(pregunta, type) and issubclass(pregunta, BaseModel)
    assert set(pregunta.model_fields) == set(prompt_contract.RUBRIC_ANSWER_FIELDS)


@pytest.mark.parametrize(
    ("peticion", "accion", "modelo"),
    [
        (_generador, "valida", Ficha),
        (_generador, "sin_atributos", Ficha),
        (_evaluador, "aprobar", Veredicto),
        (_evaluador, "rechazar:C04", Veredicto),
        (_rubrica, "aprobar", Rubrica),
        (_rubrica, "rechazar:C05", Rubrica),
        (_citas, "aprobar", Citas),
        (_citas, "rechazar:C04", Citas),
    ],
)
def test_lo_que_responde_el_falso_es_lo_que_el_agente_espera(peticion, accion, modelo) -> None:
    cuerpo = peticion()
    agente = prompt_contract.detect_agent(cuerpo)
    assert agente is not None
    prompt = prompt_contract.last_user_text(cuerpo)
    tarea = prompt_contract.quoting_task(cuerpo)
    texto = answers.content_for(
        accion, agente, SKU, prompt, prompt_contract.is_rubric(cuerpo), tarea
    )
    respuesta = modelo.model_validate(json.loads(texto))
    if tarea is not None:  # one quote per claim, each "" or a fragment the schema allows
        assert isinstance(respuesta, Citas) and len(respuesta.citas) == len(tarea[0])
        assert {c.cita for c in respuesta.citas} <= {"", *tarea[1]}
