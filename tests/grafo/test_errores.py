"""The cause and metric kind of a failed LLM call, through the shipped HTTP transport.

The aiohttp transport reports every connection failure as ``APITimeoutError``; the kind must
come from the real cause (refused, DNS, closed, slow, HTTP status), read from the chain.
"""

from __future__ import annotations

import socket
from typing import Any

import pytest

from criterios import atributos_obligatorios
from esquemas import EventoCambio
from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
from grafo.errores import LLMFailure, classify
from grafo.estado import origen_de
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from infra.network import free_port


def _origen(sku: str) -> dict[str, Any]:
    evento = EventoCambio.model_validate(evento_dict(sku)).model_dump(mode="json")
    return origen_de(evento, atributos_obligatorios(evento["familia"]))


async def _failure(url: str, timeout_s: float = 5.0) -> LLMFailure:
    model = build_chat_model(LLMSettings(url=url, model="fake", timeout_s=timeout_s))
    try:
        with pytest.raises(Exception) as caught:
            await Agentes(model).generar(_origen("ERR-1"), [])
    finally:
        await close_chat_model(model)
    failure = classify(caught.value)
    assert failure is not None and failure.transient
    return failure


async def test_puerto_cerrado_es_conexion_rechazada() -> None:
    failure = await _failure(f"http://127.0.0.1:{free_port()}/v1")
    assert (failure.kind, failure.cause) == ("connection", "connection refused")


async def test_nombre_que_no_resuelve_es_dns() -> None:
    failure = await _failure("http://fichas-no-existe.invalid/v1")
    assert failure.kind == "connection" and failure.cause.startswith("DNS lookup failed")


async def test_servidor_que_no_contesta_es_timeout() -> None:
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        failure = await _failure(f"http://127.0.0.1:{silent.getsockname()[1]}/v1", 1.0)
    assert failure.kind == "timeout" and failure.cause.startswith("no answer in time")


async def test_conexion_cerrada_y_estados_http(fake_llm: FakeLLM) -> None:
    fake_llm.configure({"default": {"generador": ["cerrar"]}})
    failure = await _failure(fake_llm.url)
    assert (failure.kind, failure.cause) == ("connection", "the server closed the connection")
    for status, kind, cause in (
        (
            401,
            "request",
            "HTTP 401 Unauthorized: check FICHAS_LLM_API_KEY "
            "(or its file, FICHAS_LLM_API_KEY_ARCHIVO)",
        ),
        (
            403,
            "request",
            "HTTP 403 Forbidden: check FICHAS_LLM_API_KEY (or its file) and its permissions",
        ),
        (503, "server", "HTTP 503: server error"),
    ):
        fake_llm.configure({"default": {"generador": [f"error:{status}"]}})
        failure = await _failure(fake_llm.url)
        assert (failure.kind, failure.cause) == (kind, cause)
