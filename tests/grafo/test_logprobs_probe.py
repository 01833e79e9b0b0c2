"""The start-up probe for log-probabilities, against the fake LLM process over real HTTP."""

from __future__ import annotations

import logging
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
from grafo.logprobs_probe import PROBE_SKU, LogprobsProbe, probe_logprobs, read_logprobs
from grafo.puntuacion import TOP_LOGPROBS
from harness.fake_llm.client import FakeLLM
from infra.network import free_port

LOGGER = "grafo.logprobs_probe"


class _Calls:
    """A sensor that remembers every model call it is told of."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def on_node(self, node: str, seconds: float) -> None:
        pass

    def on_llm_call(self, agent: str, seconds: float, p: int, c: int) -> None:
        self.calls.append(agent)

    def on_llm_error(self, kind: str) -> None:
        self.calls.append(f"error:{kind}")

    def on_llm_paused(self, paused: bool) -> None:
        pass


@asynccontextmanager
async def _agentes(url: str, sensor: Any = None, **opciones: bool) -> AsyncIterator[Agentes]:
    model = build_chat_model(LLMSettings(url=url, model="fake", timeout_s=5))
    try:
        yield Agentes(model, sensor, **opciones)
    finally:
        await close_chat_model(model)


def _lineas(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER]


def _sin_puntuacion(fake_llm: FakeLLM) -> None:
    fake_llm.configure(
        {"default": {"evaluador": [{"accion": "aprobar", "puntuacion": None}]}}
    )  # a server that answers without logprobs


async def test_logprobs_present_one_info_line_and_no_model_call_counted(
    fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    sensor = _Calls()
    async with _agentes(fake_llm.url, sensor) as agentes:
        result = await probe_logprobs(agentes, fake_llm.url, "fake")
    assert result.status == "present" and result.logprobs_ok is True
    assert result.puntuacion is not None and result.puntuacion > 0.5  # the fake approves
    (linea,) = _lineas(caplog)
    assert linea.levelno == logging.INFO and "gives the evaluator log-probabilities" in (
        linea.getMessage()
    )
    assert sensor.calls == []  # the probe is not a ficha's model call
    # One request, exactly the evaluator's: logprobs with top_logprobs, about the probe SKU.
    (peticion,) = fake_llm.requests(agent="evaluador")
    assert peticion["sku"] == PROBE_SKU
    assert peticion["body"]["logprobs"] is True
    assert peticion["body"]["top_logprobs"] == TOP_LOGPROBS
    assert fake_llm.requests(agent="generador") == []


async def test_logprobs_missing_one_error_line_naming_the_fix(
    fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    _sin_puntuacion(fake_llm)
    caplog.set_level(logging.INFO, logger=LOGGER)
    async with _agentes(fake_llm.url) as agentes:
        result = await probe_logprobs(agentes, "http://vllm:8000/v1", "qwen")
    assert result == LogprobsProbe("missing", None, "the answer carries no log-probabilities")
    assert result.logprobs_ok is False
    (linea,) = _lineas(caplog)
    texto = linea.getMessage()
    assert linea.levelno == logging.ERROR
    for parte in (
        "http://vllm:8000/v1",
        "qwen",
        "puntuacion null",
        "no publication gate can ever open",
        "--max-logprobs",
        f"top_logprobs={TOP_LOGPROBS}",
        "docs/operacion.md",
    ):
        assert parte in texto, parte


async def test_rubric_evaluator_is_probed_with_its_own_request(fake_llm: FakeLLM) -> None:
    async with _agentes(fake_llm.url, rubrica=True) as agentes:
        result = await probe_logprobs(agentes, fake_llm.url, "fake")
    assert result.status == "present" and result.puntuacion is not None
    (peticion,) = fake_llm.requests(agent="evaluador")
    esquema = peticion["body"]["response_format"]["json_schema"]["schema"]
    assert "inventa" in esquema["properties"]  # the rubric's schema, as the loop asks it


async def test_a_refused_request_is_an_error_line_with_the_servers_status(
    fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.configure({"default": {"evaluador": ["error:400"]}})
    caplog.set_level(logging.INFO, logger=LOGGER)
    async with _agentes(fake_llm.url) as agentes:
        result = await probe_logprobs(agentes, fake_llm.url, "fake")
    assert result.status == "refused" and result.logprobs_ok is False
    assert result.detalle.startswith("HTTP 400")
    (linea,) = _lineas(caplog)
    assert linea.levelno == logging.ERROR and "refused" in linea.getMessage()


async def test_llm_down_is_a_warning_and_never_raises(caplog: pytest.LogCaptureFixture) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    caplog.set_level(logging.INFO, logger=LOGGER)
    async with _agentes(url) as agentes:
        result = await probe_logprobs(agentes, url, "fake")
    assert result.status == "no_answer" and result.logprobs_ok is None
    assert "connection refused" in result.detalle
    (linea,) = _lineas(caplog)
    assert linea.levelno == logging.WARNING
    assert "could not probe" in linea.getMessage() and "going on" in linea.getMessage()


async def test_server_error_is_no_answer(fake_llm: FakeLLM) -> None:
    fake_llm.configure({"default": {"evaluador": ["error:503"]}})
    async with _agentes(fake_llm.url) as agentes:
        result = await probe_logprobs(agentes, fake_llm.url, "fake")
    assert result.status == "no_answer" and "503" in result.detalle


def _token(texto: str, alternativas: list[tuple[str, float]] | None) -> dict[str, Any]:
    token: dict[str, Any] = {"token": texto, "logprob": -0.1}
    if alternativas is not None:
        token["top_logprobs"] = [{"token": t, "logprob": math.log(p)} for t, p in alternativas]
    return token


@pytest.mark.parametrize(
    ("logprobs", "status"),
    [
        (None, "missing"),
        ({}, "missing"),
        ({"content": None}, "missing"),
        ({"content": []}, "missing"),
        ({"content": [_token("{", None), _token(" true", None)]}, "missing"),
        ({"content": [_token("{", []), _token(" true", [])]}, "missing"),
        ({"content": [_token("{", None), _token(" true", [(" true", 0.9)])]}, "present"),
    ],
)
def test_read_logprobs(logprobs: Any, status: str) -> None:
    assert read_logprobs(logprobs, None).status == status


def test_alternatives_missing_are_named() -> None:
    result = read_logprobs({"content": [_token(" true", None)]}, None)
    assert "without their top_logprobs" in result.detalle
