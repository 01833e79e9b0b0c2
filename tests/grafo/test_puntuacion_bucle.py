"""The evaluator's score end to end: fake LLM process, real langchain-openai client, the graph."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from esquemas import EventoCambio, FichaEnRevision, FichaPublicada
from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
from grafo.ejecucion import thread_id
from grafo.puntuacion import TOP_LOGPROBS
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.procesador import abrir_procesador

CONFIANZA = 0.95  # the fake's P(the boolean written) when no score is scripted


def _evento(sku: str) -> EventoCambio:
    return EventoCambio.model_validate(evento_dict(sku))


async def _estado(proc: Any, evento: EventoCambio) -> dict[str, Any]:
    snapshot = await proc._graph.aget_state({"configurable": {"thread_id": thread_id(evento)}})
    return dict(snapshot.values)


async def test_score_reaches_state_history_and_review_event(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    fake_llm.configure(
        {
            "rules": [
                {
                    "sku": "PUN-1",
                    "evaluador": [
                        {"accion": "rechazar", "puntuacion": 0.12},
                        {"accion": "rechazar:C04", "puntuacion": 0.4},
                        {"accion": "rechazar", "puntuacion": None},  # no logprobs at all
                    ],
                }
            ]
        }
    )
    evento = _evento("PUN-1")
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(evento)
        estado = await _estado(proc, evento)
    assert [r["puntuacion"] for r in estado["historial"]][:2] == pytest.approx([0.12, 0.4])
    assert estado["historial"][2]["puntuacion"] is None
    assert estado["veredicto"]["puntuacion"] is None  # the latest verdict's
    revision = FichaEnRevision.model_validate(resultado.salida)
    puntuaciones = [h.puntuacion for h in revision.historial]
    assert puntuaciones[:2] == pytest.approx([0.12, 0.4]) and puntuaciones[2] is None
    assert [i.puntuacion for i in resultado.resumen][:2] == pytest.approx([0.12, 0.4])
    # What the evaluator asked for, and what the generator did not.
    for request in fake_llm.requests(sku="PUN-1", agent="evaluador"):
        body = request["body"]
        assert body["logprobs"] is True and body["top_logprobs"] == TOP_LOGPROBS
        assert body["temperature"] == 0
        assert body["repeat_penalty"] == 1.0 and body["repetition_penalty"] == 1.0
        assert body["response_format"]["type"] == "json_schema"
    for request in fake_llm.requests(sku="PUN-1", agent="generador"):
        body = request["body"]
        assert "logprobs" not in body and body["temperature"] == 0.2


async def test_unscripted_approval_scores_high_and_is_in_the_state(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    evento = _evento("PUN-2")
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(evento)
        estado = await _estado(proc, evento)
    FichaPublicada.model_validate(resultado.salida)
    assert estado["veredicto"]["aprobada"] is True
    assert estado["veredicto"]["puntuacion"] == pytest.approx(CONFIANZA)
    assert estado["historial"][0]["puntuacion"] == pytest.approx(CONFIANZA)


async def test_unscripted_rejection_scores_low(fake_llm: FakeLLM, data_dir: Path) -> None:
    fake_llm.configure({"rules": [{"sku": "PUN-3", "evaluador": ["rechazar"]}]})
    async with abrir_procesador(fake_llm.url, data_dir, max_intentos=1) as (proc, _):
        resultado = await proc.procesar(_evento("PUN-3"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert revision.historial[0].puntuacion == pytest.approx(1 - CONFIANZA)


async def test_invalid_evaluator_answer_has_no_score(fake_llm: FakeLLM, data_dir: Path) -> None:
    fake_llm.configure({"rules": [{"sku": "PUN-4", "evaluador": ["json_roto"]}]})
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("PUN-4"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert revision.motivo == "salida_invalida"
    assert [h.puntuacion for h in revision.historial] == [None]


@pytest.mark.parametrize(
    ("accion", "puntuacion", "aprobada"),
    [("aprobar", 0.7, True), ("rechazar:C05", 0.2, False), ("aprobar", None, True)],
)
async def test_rubric_score_is_the_product_over_its_questions(
    fake_llm: FakeLLM, accion: str, puntuacion: float | None, aprobada: bool
) -> None:
    fake_llm.configure(
        {"rules": [{"sku": "PUN-R", "evaluador": [{"accion": accion, "puntuacion": puntuacion}]}]}
    )
    origen = {"sku": "PUN-R", "familia": "botellas", "ficha_proveedor": {}, "cifras": {}}
    ficha = {"titulo": "Botella", "descripcion": "Botella de acero.", "atributos": {}}
    model = build_chat_model(LLMSettings(url=fake_llm.url, model="fake"))
    try:
        evaluacion = await Agentes(model, rubrica=True).evaluar(ficha, {}, origen)
    finally:
        await close_chat_model(model)
    assert evaluacion.veredicto.aprobada is aprobada
    if puntuacion is None:
        assert evaluacion.puntuacion is None
    else:
        assert evaluacion.puntuacion == pytest.approx(puntuacion)
    # Unscripted, three confident "no failure" answers multiply.
    fake_llm.configure({})
    model = build_chat_model(LLMSettings(url=fake_llm.url, model="fake"))
    try:
        evaluacion = await Agentes(model, rubrica=True).evaluar(ficha, {}, origen)
    finally:
        await close_chat_model(model)
    assert evaluacion.puntuacion == pytest.approx(math.pow(CONFIANZA, 3))
