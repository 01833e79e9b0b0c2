"""The private surface of langchain-openai, langchain-core and openai that ``grafo.chat_model``
leans on is still there, as it uses it, in the versions installed (uv.lock pins them).

``DirectChatOpenAI`` overrides ``ChatOpenAI._agenerate`` and calls private methods of
``ChatOpenAI`` and of the ``openai`` client (points 1 to 7, docs/grafo.md); a minor release may
rename or re-sign any of them, and the wire tests (tests/grafo/test_chat_model.py) would then
fail somewhere downstream, or not at all. These tests fail first and loudly: each names the
attribute, what changed and the installed versions. When one fails after ``make lock
ARGS=--upgrade``: read the new upstream code, adapt ``grafo/chat_model.py`` (or go back to
the stock path for that point and re-measure, docs/rendimiento.md), then this test.
Pure calls, no server: building a payload or a result, making an error from a response.
"""

from __future__ import annotations

import inspect
from importlib.metadata import version
from typing import Any

import httpx
import openai
import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from openai.types.chat import ChatCompletion

from grafo import LLMSettings, build_chat_model
from grafo.chat_model import _REQUEST_OPTIONS, DirectChatOpenAI

PAQUETES = ("langchain-openai", "langchain-core", "langchain", "openai", "langsmith", "pydantic")


def _falla(atributo: str, que: str) -> None:
    """Fail naming the attribute, what is wrong, and every installed version that matters."""
    versiones = ", ".join(f"{p} {version(p)}" for p in PAQUETES)
    pytest.fail(
        f"grafo/chat_model.py relies on {atributo}: {que}. Installed: {versiones}. The private "
        "surface changed: adapt grafo/chat_model.py (docs/grafo.md, points 1-7, says what each "
        "override buys) or go back to the public path and re-measure (docs/rendimiento.md)."
    )


def _modelo(**kwargs: Any) -> DirectChatOpenAI:
    modelo = build_chat_model(LLMSettings(url="http://127.0.0.1:9/v1", model="m", **kwargs))
    assert isinstance(modelo, DirectChatOpenAI)
    return modelo


def _parametros(funcion: Any) -> dict[str, inspect.Parameter]:
    return dict(inspect.signature(funcion).parameters)


def test_agenerate_se_sobrescribe_con_la_firma_que_llama_langchain():
    """BaseChatModel calls ``_agenerate(messages, stop=..., run_manager=..., **kwargs)``."""
    nuestra = _parametros(DirectChatOpenAI._agenerate)
    for clase in (ChatOpenAI, BaseChatModel):
        suya = _parametros(clase._agenerate)
        if list(suya) != list(nuestra):
            _falla(
                f"{clase.__name__}._agenerate",
                f"its parameters are {list(suya)}, the override's {list(nuestra)}",
            )
    duena = ChatOpenAI._agenerate.__module__
    if not duena.startswith("langchain_openai"):
        _falla("ChatOpenAI._agenerate", f"langchain-openai no longer defines it (from {duena})")


def test_get_request_payload_da_el_cuerpo_que_se_envia():
    """``_get_request_payload(messages, stop=..., **kwargs)``: the chat body, ``extra_body`` as
    one key (merged into the body by the override), the request options as keys."""
    parametros = _parametros(ChatOpenAI._get_request_payload)
    if "stop" not in parametros or not any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parametros.values()
    ):
        _falla("ChatOpenAI._get_request_payload", f"its parameters are {list(parametros)}")
    modelo = _modelo(repeat_penalty=1.1)
    payload = modelo._get_request_payload(
        [HumanMessage("hola")], stop=["\n"], extra_headers={"X-A": "1"}, timeout=5.0
    )
    esperado = {"messages", "model", "stop", "extra_body"} | {n for n, _ in _REQUEST_OPTIONS[::2]}
    if not esperado <= set(payload):
        _falla("ChatOpenAI._get_request_payload", f"no {sorted(esperado - set(payload))} keys")
    if payload["messages"] != [{"role": "user", "content": "hola"}]:
        _falla("ChatOpenAI._get_request_payload", f"messages are {payload['messages']!r}")
    if payload["extra_body"] != {"repeat_penalty": 1.1, "repetition_penalty": 1.1}:
        _falla("ChatOpenAI._get_request_payload", f"extra_body is {payload['extra_body']!r}")
    if payload.get("stream"):
        _falla("ChatOpenAI._get_request_payload", "a plain call now asks for a stream")


def test_use_responses_api_dice_no_a_una_llamada_de_chat():
    """The override refuses payloads that would take the Responses API; a chat one must not."""
    modelo = _modelo()
    if list(_parametros(ChatOpenAI._use_responses_api)) != ["self", "payload"]:
        _falla("ChatOpenAI._use_responses_api", "its signature changed")
    payload = modelo._get_request_payload([HumanMessage("hola")])
    if modelo._use_responses_api(payload) is not False:
        _falla("ChatOpenAI._use_responses_api", "a chat-completions payload now says True")


def test_create_chat_result_lee_el_dict_que_envia_el_servidor():
    """The override hands ``_create_chat_result`` the server's JSON as a dict (no SDK model)."""
    respuesta = {
        "id": "c1",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": '{"aprobada": true}'},
                "finish_reason": "stop",
                "logprobs": {"content": [{"token": "true", "logprob": -0.1, "top_logprobs": []}]},
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
    try:
        resultado = _modelo()._create_chat_result(respuesta, {})
    except Exception as exc:
        _falla("ChatOpenAI._create_chat_result", f"a dict answer raised {exc!r}")
    if not isinstance(resultado, ChatResult):
        _falla("ChatOpenAI._create_chat_result", f"returned {type(resultado).__name__}")
    generacion = resultado.generations[0]
    mensaje = generacion.message
    if not isinstance(mensaje, AIMessage) or mensaje.content != '{"aprobada": true}':
        _falla("ChatOpenAI._create_chat_result", f"the message is {mensaje!r}")
    if (mensaje.usage_metadata or {}).get("total_tokens") != 5:
        _falla("ChatOpenAI._create_chat_result", "token usage is not on the message")
    info = generacion.generation_info or {}
    if info.get("finish_reason") != "stop" or "logprobs" not in info:
        _falla("ChatOpenAI._create_chat_result", f"generation_info is {info!r}")
    if (resultado.llm_output or {}).get("model_name") != "m":
        _falla("ChatOpenAI._create_chat_result", f"llm_output is {resultado.llm_output!r}")


@pytest.mark.parametrize(
    ("estado", "clase"),
    [
        (400, openai.BadRequestError),
        (429, openai.RateLimitError),
        (500, openai.InternalServerError),
        (503, openai.InternalServerError),
    ],
)
def test_make_status_error_from_response_da_el_error_del_sdk(estado: int, clase: type):
    """The override makes an error status into the SDK's exception with the client's own
    ``_make_status_error_from_response``, so ``grafo.errores.classify`` sees the same type."""
    cliente = _modelo().root_async_client
    if not isinstance(cliente, openai.AsyncOpenAI):
        _falla("ChatOpenAI.root_async_client", f"is {type(cliente).__name__}")
    metodo = getattr(cliente, "_make_status_error_from_response", None)
    if metodo is None:
        _falla("openai.AsyncOpenAI._make_status_error_from_response", "it is gone")
    respuesta = httpx.Response(
        estado,
        headers={"retry-after": "1"},
        content=b'{"error": {"message": "no"}}',
        request=httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions"),
    )
    error = metodo(respuesta)
    if type(error) is not clase or error.status_code != estado:
        _falla(
            "openai.AsyncOpenAI._make_status_error_from_response",
            f"status {estado} gave {type(error).__name__}, expected {clase.__name__}",
        )


def test_el_cliente_da_las_cabeceras_base_url_y_timeout():
    """``_post_chat`` sends the SDK's own headers to ``base_url`` with the client's timeout."""
    cliente = _modelo(api_key="sk-x", timeout_s=7.0).root_async_client
    cabeceras = {**cliente.auth_headers, **cliente.default_headers}
    if cabeceras.get("Authorization") != "Bearer sk-x":
        _falla("openai.AsyncOpenAI.auth_headers", f"gave {cliente.auth_headers!r}")
    if "User-Agent" not in cabeceras:
        _falla("openai.AsyncOpenAI.default_headers", f"gave {sorted(cabeceras)}")
    if str(cliente.base_url).rstrip("/") != "http://127.0.0.1:9/v1":
        _falla("openai.AsyncOpenAI.base_url", f"is {cliente.base_url!r}")
    limite = cliente.timeout
    segundos = limite.read if isinstance(limite, httpx.Timeout) else limite
    if segundos != 7.0:
        _falla("openai.AsyncOpenAI.timeout", f"is {limite!r}")


def test_sin_oyentes_lee_campos_que_existen():
    """``sin_oyentes`` decides the callback bypass (point 7) from these fields and functions."""
    campos = set(ChatOpenAI.model_fields)
    for campo in ("callbacks", "rate_limiter", "output_version", "cache", "root_async_client"):
        if campo not in campos:
            _falla(f"ChatOpenAI.{campo}", "no such field")
    from langchain_core import globals as lc_globals
    from langsmith import utils as ls_utils

    if not callable(getattr(ls_utils, "tracing_is_enabled", None)):
        _falla("langsmith.utils.tracing_is_enabled", "it is gone")
    if not callable(getattr(lc_globals, "get_llm_cache", None)):
        _falla("langchain_core.globals.get_llm_cache", "it is gone")


def test_los_modelos_de_respuesta_siguen_siendo_pydantic():
    """``complete_response_models`` (point 4) walks ``ChatCompletion``'s pydantic classes."""
    if not hasattr(ChatCompletion, "__pydantic_complete__") or not hasattr(
        ChatCompletion, "model_fields"
    ):
        _falla("openai.types.chat.ChatCompletion", "is no longer a pydantic model")
    if not hasattr(openai, "DefaultAioHttpClient"):
        _falla("openai.DefaultAioHttpClient", "gone (the openai[aiohttp] transport)")


def test_la_superficie_falla_con_nombre_y_versiones():
    """What a failure says: the attribute and the versions (so the message is useful)."""
    with pytest.raises(pytest.fail.Exception) as info:
        _falla("ChatOpenAI._x", "gone")
    texto = str(info.value)
    assert "ChatOpenAI._x: gone" in texto
    assert f"langchain-openai {version('langchain-openai')}" in texto
    assert f"openai {version('openai')}" in texto
