"""``DirectChatOpenAI`` sends what stock ``ChatOpenAI`` sends and returns what it returns.

The shorter path of ``grafo.chat_model`` (no ``.parse``, no body transform, no thread hop,
aiohttp transport) is only worth having if nothing a caller or the server sees changes; these
tests compare both clients through the real fake LLM server.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain.agents.structured_output import StructuredOutputValidationError
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_openai import ChatOpenAI

from criterios import atributos_obligatorios
from esquemas import EventoCambio, Ficha
from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
from grafo.chat_model import DirectChatOpenAI, sin_oyentes
from grafo.errores import classify
from grafo.estado import origen_de
from grafo.mensajes import mensaje_evaluador, mensaje_generador, prompt_generador
from harness.agente_grafo import AgenteGrafo
from harness.eventos import evento_dict
from harness.fake_llm.answers import completion_body
from harness.fake_llm.client import FakeLLM
from harness.procesador import abrir_procesador

REPO = Path(__file__).resolve().parents[2]
SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "Veredicto",
        "schema": {
            "type": "object",
            "properties": {"aprobada": {"type": "boolean"}},
            "required": ["aprobada"],
        },
        "strict": True,
    },
}


FICHA = {
    "titulo": "Zapatilla Runner X2 negra",
    "descripcion": "Zapatilla ligera para correr, con parte superior de malla.",
    "atributos": {"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
}


def _stock(url: str, repeat_penalty: float | None = None) -> ChatOpenAI:
    """Stock ``ChatOpenAI`` with the settings ``build_chat_model`` uses."""
    settings = LLMSettings(url=url, model="fake", timeout_s=10, repeat_penalty=repeat_penalty)
    model = build_chat_model(settings, direct=False)
    assert type(model) is ChatOpenAI
    return model


@asynccontextmanager
async def _direct(url: str, **kwargs: Any) -> AsyncIterator[ChatOpenAI]:
    model = build_chat_model(LLMSettings(url=url, model="fake", timeout_s=10, **kwargs))
    try:
        yield model
    finally:
        await close_chat_model(model)


def _origen(sku: str) -> dict[str, Any]:
    evento = EventoCambio.model_validate(evento_dict(sku)).model_dump(mode="json")
    return origen_de(evento, atributos_obligatorios(evento["familia"]))


def test_build_chat_model_gives_the_direct_client() -> None:
    model = build_chat_model(LLMSettings(url="http://127.0.0.1:9/v1", model="m"))
    assert isinstance(model, DirectChatOpenAI)
    assert model.profile is not None and model.profile.get("structured_output") is True


async def test_agents_send_the_same_body_as_stock_chat_openai(fake_llm: FakeLLM) -> None:
    origen = _origen("WIRE-1")
    stock = Agentes(_stock(fake_llm.url, repeat_penalty=1.1))
    stock_ficha = await stock.generar(origen, [{"criterio": "C04", "detalle": "falta el color"}])
    stock_evaluacion = await stock.evaluar(stock_ficha.model_dump(), {}, origen)
    async with _direct(fake_llm.url, repeat_penalty=1.1) as model:
        direct = Agentes(model)
        ficha = await direct.generar(origen, [{"criterio": "C04", "detalle": "falta el color"}])
        evaluacion = await direct.evaluar(ficha.model_dump(), {}, origen)

    requests = fake_llm.requests(sku="WIRE-1")
    assert [r["agent"] for r in requests] == ["generador", "evaluador"] * 2
    stock_bodies = [r["body"] for r in requests[:2]]
    direct_bodies = [r["body"] for r in requests[2:]]
    assert direct_bodies == stock_bodies
    assert direct_bodies[0]["response_format"]["type"] == "json_schema"
    assert direct_bodies[0]["repetition_penalty"] == 1.1
    assert not direct_bodies[0].get("tools") and direct_bodies[0]["stream"] is False
    assert ficha == stock_ficha
    assert evaluacion == stock_evaluacion
    assert evaluacion.puntuacion is not None  # the logprobs came through the direct path too


async def test_agents_send_and_parse_what_create_agent_did(fake_llm: FakeLLM) -> None:
    """``LlamadaEstructurada`` is ``create_agent``'s model call without its graph: the same
    body on the wire for both agents, the same message and structured response, and the same
    error (with the answer attached) for an answer that is not the schema's JSON."""
    origen = _origen("AGT-1")
    problemas = [{"criterio": "C04", "detalle": "falta el color"}]
    async with _direct(fake_llm.url, repeat_penalty=1.1) as model:
        agentes = Agentes(model)
        pares = [
            (agentes._generador, mensaje_generador(origen, problemas)),
            (agentes._evaluador, mensaje_evaluador(FICHA, {}, origen, None)),
        ]
        for llamada, texto in pares:
            viejo = AgenteGrafo(
                llamada._bound.bound, llamada.name, llamada._system.content, llamada.schema
            )
            mensaje_viejo, respuesta_vieja = await viejo.ainvoke(texto)
            assert llamada._directo is not None  # nothing listens: straight to _agenerate
            mensaje, respuesta = await llamada.ainvoke(texto)
            assert respuesta == respuesta_vieja and isinstance(respuesta, llamada.schema)
            assert mensaje.content == mensaje_viejo.content
            assert mensaje.name == mensaje_viejo.name == llamada.name
            assert mensaje.usage_metadata == mensaje_viejo.usage_metadata
            # every field langchain's callback path put in the metadata, logprobs included
            volatile = {"id", "created"}
            assert _sent(mensaje.response_metadata, volatile) == _sent(
                mensaje_viejo.response_metadata, volatile
            )
            assert set(mensaje.response_metadata) == set(mensaje_viejo.response_metadata)
            assert (
                mensaje.response_metadata["logprobs"]
                == (mensaje_viejo.response_metadata["logprobs"])
            )
        fake_llm.configure({"rules": [{"sku": "AGT-1", "generador": ["json_roto", "json_roto"]}]})
        viejo = AgenteGrafo(model, "generador", prompt_generador(), Ficha)
        with pytest.raises(StructuredOutputValidationError) as antes:
            await viejo.ainvoke(pares[0][1])
        with pytest.raises(StructuredOutputValidationError) as ahora:
            await agentes._generador.ainvoke(pares[0][1])
    assert str(ahora.value) == str(antes.value)
    assert ahora.value.ai_message.content == antes.value.ai_message.content
    bodies = [r["body"] for r in fake_llm.requests(sku="AGT-1")]
    assert len(bodies) == 6
    assert bodies[1] == bodies[0] and bodies[3] == bodies[2] and bodies[5] == bodies[4]
    assert bodies[0]["response_format"]["json_schema"]["name"] == "Ficha"
    assert bodies[2]["response_format"]["json_schema"]["name"] == "Veredicto"
    assert bodies[2]["logprobs"] is True and not bodies[2].get("tools")


async def test_a_listener_gets_the_agents_calls_through_ainvoke(fake_llm: FakeLLM) -> None:
    """The agents skip langchain's callback layer only where nothing listens (point 7 of
    ``grafo.chat_model``): a model with a callback handler is called through ``ainvoke``,
    and the handler sees each agent call start and end, with the same answer."""

    class Oyente(AsyncCallbackHandler):
        def __init__(self) -> None:
            self.eventos: list[str] = []

        async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
            self.eventos.append("start")

        async def on_llm_end(self, *args: Any, **kwargs: Any) -> None:
            self.eventos.append("end")

    origen = _origen("OYE-1")
    oyente = Oyente()
    async with _direct(fake_llm.url) as model:
        callado = Agentes(model)
        model_con_oyente = model.model_copy(update={"callbacks": [oyente]})
        escuchado = Agentes(model_con_oyente)
        assert sin_oyentes(model) and not sin_oyentes(model_con_oyente)
        assert escuchado._generador._directo is None and escuchado._evaluador._directo is None
        ficha = await escuchado.generar(origen, [])
        evaluacion = await escuchado.evaluar(ficha.model_dump(), {}, origen)
        assert oyente.eventos == ["start", "end", "start", "end"]
        ficha_callada = await callado.generar(origen, [])
        assert oyente.eventos == ["start", "end", "start", "end"]  # not a listener of this one
    assert ficha_callada == ficha and evaluacion.puntuacion is not None
    assert not sin_oyentes(_stock(fake_llm.url))  # the stock client always goes through ainvoke


async def test_result_matches_stock_chat_openai(fake_llm: FakeLLM) -> None:
    messages = [SystemMessage("Evalúa."), HumanMessage("SKU: RES-9")]
    stock = await _stock(fake_llm.url).bind(response_format=SCHEMA).ainvoke(messages)
    async with _direct(fake_llm.url) as model:
        direct = await model.bind(response_format=SCHEMA).ainvoke(messages)
    assert isinstance(direct, AIMessage) and isinstance(stock, AIMessage)
    assert direct.content == stock.content
    assert direct.usage_metadata == stock.usage_metadata
    assert direct.usage_metadata is not None and direct.usage_metadata["input_tokens"] > 0
    volatile = {"id", "created"}
    # The direct path keeps the server's JSON, where the SDK's model fills what the server
    # did not send with None (and langchain writes a missing fingerprint as ""): the fields
    # the server sent must be the same, and nothing else may be there.
    assert _sent(direct.response_metadata, volatile) == _sent(stock.response_metadata, volatile)
    assert direct.response_metadata["finish_reason"] == "stop"


def _sent(metadata: dict[str, Any], volatile: set[str]) -> dict[str, Any]:
    """Response metadata without volatile keys and without the empty values of unsent fields."""
    return {
        k: _sent(v, set()) if isinstance(v, dict) else v
        for k, v in metadata.items()
        if k not in volatile and v not in (None, "")
    }


async def test_server_errors_keep_their_openai_types(fake_llm: FakeLLM) -> None:
    async with _direct(fake_llm.url) as model:
        agentes = Agentes(model)
        fake_llm.down(30, "503")
        with pytest.raises(openai.InternalServerError) as caught:
            await agentes.generar(_origen("ERR-1"), [])
        failure = classify(caught.value)
        assert failure is not None and failure.transient
        assert caught.value.response.headers["retry-after"] == "1"

        fake_llm.down(30, "close")
        with pytest.raises(openai.APIConnectionError):
            await agentes.generar(_origen("ERR-1"), [])
        fake_llm.up()
        assert (await agentes.generar(_origen("ERR-1"), [])).titulo


async def test_client_timeout_applies_and_the_call_is_retried(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    """A hung server: the client gives up after ``timeout_s`` and the retry policy calls again."""
    fake_llm.configure({"rules": [{"sku": "RET-1", "evaluador": ["colgar", "aprobar"]}]})
    async with abrir_procesador(fake_llm.url, data_dir, timeout_s=0.5) as (proc, _):
        resultado = await proc.procesar(EventoCambio.model_validate(evento_dict("RET-1")))
    assert resultado.salida["intentos"] == 1
    evaluador = fake_llm.requests(agent="evaluador", sku="RET-1", bodies=False)
    assert [r["outcome"] for r in evaluador] == ["client_gone", "answered"]
    assert evaluador[0]["duration_ms"] == pytest.approx(500, abs=400)


async def test_streaming_payload_is_refused(fake_llm: FakeLLM) -> None:
    async with _direct(fake_llm.url) as model:
        with pytest.raises(ValueError, match="non-streaming"):
            await model._agenerate([HumanMessage("x")], stream=True)
    assert fake_llm.requests() == []


@pytest.mark.lento
def test_response_models_are_complete_after_build(tmp_path: Path) -> None:
    """In a fresh interpreter: after build_chat_model no response class rebuilds per call."""
    script = textwrap.dedent(
        """
        import json
        from openai._models import construct_type
        from openai.types import CompletionUsage
        from openai.types.chat import ChatCompletion
        from grafo import LLMSettings, build_chat_model
        from grafo.chat_model import complete_response_models

        build_chat_model(LLMSettings(url="http://127.0.0.1:9/v1", model="m"))
        body = {"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": "{}"}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}}
        for _ in range(3):
            construct_type(value=body, type_=ChatCompletion)
        print(json.dumps({"usage_complete": CompletionUsage.__pydantic_complete__,
                          "still_incomplete": complete_response_models()}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1]) == {
        "usage_complete": True,
        "still_incomplete": [],
    }


async def test_direct_post_sends_the_sdks_headers_and_reads_a_timeout_as_the_sdk() -> None:
    """The direct POST (``grafo.chat_model._post_chat``) sends the headers the SDK sends (the API
    key above all: vLLM started with ``--api-key`` refuses a request without it), and a server
    that answers too late is the SDK's ``APITimeoutError``, classified as a timeout."""
    from aiohttp import web

    vistos: list[dict[str, str]] = []
    lento = {"s": 0.0}

    async def chat(request: web.Request) -> web.Response:
        vistos.append(dict(request.headers))
        await asyncio.sleep(lento["s"])
        body = await request.json()
        return web.json_response(completion_body(body, '{"aprobada": true}', len(vistos)))

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    url = f"http://127.0.0.1:{port}/v1"
    settings = LLMSettings(url=url, model="fake", api_key="clave-secreta", timeout_s=0.5)
    messages = [HumanMessage("SKU: HDR-1")]
    try:
        stock = build_chat_model(settings, direct=False)
        await stock.bind(response_format=SCHEMA).ainvoke(messages)
        direct = build_chat_model(settings)
        await direct.bind(response_format=SCHEMA).ainvoke(messages)
        lento["s"] = 2.0
        with pytest.raises(openai.APITimeoutError) as caught:
            await direct.bind(response_format=SCHEMA).ainvoke(messages)
        failure = classify(caught.value)
        assert failure is not None and failure.kind == "timeout" and failure.transient
        await close_chat_model(direct)
        await close_chat_model(stock)
    finally:
        await runner.cleanup()
    sdk, nuestro = vistos[0], vistos[1]
    assert nuestro["Authorization"] == sdk["Authorization"] == "Bearer clave-secreta"
    for header in ("Accept", "Content-Type", "User-Agent", "X-Stainless-Lang"):
        assert nuestro[header] == sdk[header], header
