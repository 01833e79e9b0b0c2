"""``grafo.identidad.clasificar``: what a failed read of ``/v1/models`` means (pure, on the
``openai`` client's own exceptions): the server is down (retry, as for a chat call), or it
answers but cannot say which model it serves (no route, an answer that is no model list)."""

from __future__ import annotations

import httpx
import openai

from grafo.identidad import clasificar


def _estado(status: int) -> openai.APIStatusError:
    peticion = httpx.Request("GET", "http://llm/v1/models")
    respuesta = httpx.Response(status, request=peticion, json={"error": "x"})
    return openai.OpenAI(api_key="x", base_url="http://llm/v1")._make_status_error_from_response(
        respuesta
    )


def test_caido_es_transitorio_y_sin_ruta_no() -> None:
    peticion = httpx.Request("GET", "http://llm/v1/models")
    for exc in (
        openai.APIConnectionError(request=peticion),
        openai.APITimeoutError(request=peticion),
        _estado(503),
        _estado(429),
        _estado(401),  # a wrong key: fixed by an operator, as for the chat route
    ):
        assert clasificar(exc).transitorio, exc
    for status in (404, 405, 501):
        fallo = clasificar(_estado(status))
        assert not fallo.transitorio and "no /v1/models route" in fallo.causa
    fallo = clasificar(ValueError("not a /v1/models answer: no list of models under 'data'"))
    assert not fallo.transitorio and "not a /v1/models answer" in fallo.causa
