"""The chat model both agents share: ``ChatOpenAI`` with a shorter path per call.

``DirectChatOpenAI`` (``build_chat_model``) leaves the stock path at seven points, numbered as
the comments below and docs/grafo.md, "The chat model", cite them: the server's JSON kept as a
dict, the payload sent as given, the ``ChatResult`` built inline, openai's models completed
once, logprobs cut to what the score reads (``rutas_puntuadas``), the completion posted with
aiohttp (``SesionHTTP``) and read with orjson, ``_agenerate`` called straight when nothing
listens. Invariant: the same request and the same ``ChatResult`` as stock ``ChatOpenAI``
(tests/grafo/test_chat_model.py); the private surface it relies on is checked by
tests/grafo/test_chat_model_superficie.py. Figures: docs/rendimiento.md.
"""

from __future__ import annotations

import asyncio
import json
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

import aiohttp
import httpx
import openai
import orjson
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.globals import get_llm_cache
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from langchain_openai import ChatOpenAI
from langsmith.utils import tracing_is_enabled
from openai import DefaultAioHttpClient, DefaultAsyncHttpxClient
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, Field

from grafo.puntuacion import recortar_logprobs

MODEL_PROFILE = {"structured_output": True, "max_input_tokens": 32768}
# Without the profile's "structured_output" langchain cannot know the server supports
# response_format json_schema and silently falls back to a synthetic tool call.


@dataclass(frozen=True)
class LLMSettings:
    """How to reach the OpenAI-compatible server; filled from ``FICHAS_LLM_*`` by the caller."""

    url: str
    model: str
    api_key: str = "EMPTY"
    timeout_s: float = 60.0
    max_tokens: int = 1024
    repeat_penalty: float | None = None  # llama.cpp's name; vLLM's is repetition_penalty


class DirectChatOpenAI(ChatOpenAI):
    """``ChatOpenAI`` for non-streaming chat completions, without the detours above.

    Only ``_agenerate`` changes; the payload, the message conversion, the result and every
    other method are ``ChatOpenAI``'s own. Streaming and the Responses API never run here
    (the agents make one non-streaming chat completion per call), and a payload that would
    take those paths is refused rather than sent differently.
    """

    # The JSON paths whose values the evaluator's score reads (``grafo.puntuacion``); when set,
    # the answer's logprobs are cut to what those values need as soon as they arrive (point 5).
    rutas_puntuadas: tuple[tuple[str, ...], ...] | None = None
    # The aiohttp pool the chat completions are posted through (point 6); shared by copies.
    sesion: Any = Field(default=None, exclude=True)

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """One ``chat.completions.create`` with the body ``ChatOpenAI`` built, parsed inline."""
        payload = self._get_request_payload(messages, stop=stop, **kwargs)
        if payload.get("stream") or self._use_responses_api(payload):
            raise ValueError("DirectChatOpenAI makes non-streaming chat completions only")
        extra_body = payload.pop("extra_body", None) or {}
        # Request options of the client (not body fields) keep their own arguments.
        options = {
            option: payload.pop(name) for name, option in _REQUEST_OPTIONS if name in payload
        }
        response = await _post_chat(self, {**payload, **extra_body}, options)
        if self.rutas_puntuadas is not None and isinstance(response, dict):
            for choice in response.get("choices") or []:
                if isinstance(choice, dict) and choice.get("logprobs") is not None:
                    choice["logprobs"] = recortar_logprobs(choice["logprobs"], self.rutas_puntuadas)
        return self._create_chat_result(response, {})

    async def responder(self, messages: list[BaseMessage], **kwargs: Any) -> AIMessage:
        """One call straight to ``_agenerate``: the message ``ainvoke`` returns, without the
        callback layer nobody listens to (point 7; only where ``sin_oyentes`` holds).

        ``response_metadata`` is built as ``BaseChatModel`` builds it: the result's
        ``llm_output`` (model name, token usage, fingerprint), then the generation's info
        (finish reason, logprobs), then what the message already had.
        """
        result = await self._agenerate(messages, **kwargs)
        generation = result.generations[0]
        message = generation.message
        if not isinstance(message, AIMessage):
            raise TypeError(f"the chat model answered with {type(message).__name__}")
        message.response_metadata = {
            **(result.llm_output or {}),
            **(generation.generation_info or {}),
            **message.response_metadata,
        }
        return message


def sin_oyentes(model: ChatOpenAI) -> TypeGuard[DirectChatOpenAI]:
    """Nothing but the caller reads a call of ``model``: ``responder`` may skip ``ainvoke``.

    A ``DirectChatOpenAI`` with no callbacks, cache, rate limiter or v1 output, in a process
    where neither LangSmith tracing nor a global LLM cache is on. Read once, when an agent is
    built: the environment does not change under a running worker.
    """
    if not isinstance(model, DirectChatOpenAI):
        return False
    return (
        not tracing_is_enabled()
        and model.callbacks is None
        and model.rate_limiter is None
        and model.output_version in (None, "v0")
        and (model.cache is False or (model.cache is None and get_llm_cache() is None))
    )


class SesionHTTP:
    """The aiohttp session a chat model and its copies post with (point 6).

    Opened on first use, in the running event loop (an aiohttp session belongs to one loop;
    a call from another loop, as in tests that run one loop each, gets a session of its own),
    closed by ``close_chat_model``. Shared by reference: the evaluator's copy
    (``evaluator_chat_model``) posts through the same pool.
    """

    def __init__(self) -> None:
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.headers: dict[str, str] | None = None  # the SDK client's, computed once

    def session(self) -> aiohttp.ClientSession:
        """The session of the running loop, opened if there is none yet."""
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            # the SDK's limits (openai DEFAULT_CONNECTION_LIMITS: 1000 connections)
            connector = aiohttp.TCPConnector(limit=1000, limit_per_host=0)
            self._session = aiohttp.ClientSession(connector=connector)
            self._loop = loop
        return self._session

    async def close(self) -> None:
        """Close the pool; aiohttp warns about sessions left open at exit."""
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None


def _headers(client: openai.AsyncOpenAI, extra: Mapping[str, Any] | None) -> dict[str, str]:
    """The headers the SDK sends on every request: its defaults (Accept, Content-Type, User-Agent,
    platform), the API key, the client's custom ones, then the call's ``extra_headers``."""
    merged = {**client.auth_headers, **client.default_headers, **(extra or {})}
    return {k: str(v) for k, v in merged.items() if isinstance(v, str | int | float)}


async def _post_chat(model: DirectChatOpenAI, body: dict[str, Any], options: dict[str, Any]) -> Any:
    """POST the body to ``/chat/completions`` and read the answer as the SDK would (point 6).

    Failures are the SDK's own exceptions, so ``grafo.errores.classify`` and the retry policy
    see what they saw through the SDK: an answer with status >= 400 is made into
    ``APIStatusError`` by the SDK client itself (``_make_status_error_from_response``: the same
    subclass per status, message, body and headers, Retry-After included); no answer in time
    is ``APITimeoutError``; any other transport failure ``APIConnectionError``, raised from
    aiohttp's error (the chain ``classify`` reads for refused, DNS, closed, reset). The
    timeout is the client's (``LLMSettings.timeout_s``) for connecting and for each read, as
    httpx applies it, unless the call gives its own.
    """
    client = model.root_async_client
    holder = model.sesion
    if holder is None:  # a copy made without build_chat_model: one pool of its own
        holder = model.sesion = SesionHTTP()
    extra_headers = options.get("headers")
    if extra_headers is None and holder.headers is not None:
        headers = holder.headers
    else:
        headers = _headers(client, extra_headers)
        if extra_headers is None:
            holder.headers = headers
    url = f"{str(client.base_url).rstrip('/')}/chat/completions"
    limite = options.get("timeout", client.timeout)
    segundos = limite.read if isinstance(limite, httpx.Timeout) else limite
    timeout = aiohttp.ClientTimeout(
        total=None,
        connect=segundos if isinstance(segundos, int | float) else None,
        sock_read=segundos if isinstance(segundos, int | float) else None,
    )
    request = httpx.Request("POST", url)
    try:
        async with holder.session().post(
            url,
            data=orjson.dumps(body),
            headers=headers,
            params=options.get("params"),
            timeout=timeout,
        ) as answer:
            content = await answer.read()
            status, content_type = answer.status, answer.headers.get("content-type", "*")
            answer_headers = list(answer.headers.items()) if status >= 400 else []
    except TimeoutError as exc:  # aiohttp's timeouts are asyncio's (TimeoutError since 3.11)
        raise openai.APITimeoutError(request=request) from exc
    except aiohttp.ClientError as exc:
        raise openai.APIConnectionError(request=request) from exc
    if status >= 400:
        failed = httpx.Response(status, headers=answer_headers, content=content, request=request)
        raise client._make_status_error_from_response(failed)
    return _json_de(content_type, content)


def _json_de(content_type: str, content: bytes) -> Any:
    """The answer's JSON as the SDK's ``cast_to=object`` reads it, by orjson (point 6).

    A body that is not JSON by its content type comes back as text, which
    ``_create_chat_result`` refuses clearly; what orjson will not read (``NaN``, which the
    standard library accepts) is read by ``json`` as the SDK would, with its error if any.
    """
    if not content_type.split(";")[0].strip().endswith("json"):
        return content.decode("utf-8", "replace")
    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return json.loads(content.decode("utf-8", "replace"))


# Keyword arguments of ``chat.completions.create`` that are not JSON body fields, and the
# request option each one is for ``AsyncOpenAI.post``.
_REQUEST_OPTIONS = (("extra_headers", "headers"), ("extra_query", "params"), ("timeout", "timeout"))


def complete_response_models(root: type[BaseModel] = ChatCompletion) -> list[str]:
    """Complete every pydantic class reachable from ``root``; return those that were not.

    Idempotent and cheap after the first call; why: docs/grafo.md, "The chat model", point 4.
    """
    rebuilt: list[str] = []
    seen: set[type[BaseModel]] = set()
    pending: list[type[BaseModel]] = [root]
    while pending:
        cls = pending.pop()
        if cls in seen:
            continue
        seen.add(cls)
        if not cls.__pydantic_complete__:
            cls.model_rebuild(force=True)
            rebuilt.append(cls.__name__)
        for field in cls.model_fields.values():
            pending.extend(_model_classes(field.annotation))
    return rebuilt


def _model_classes(annotation: Any) -> list[type[BaseModel]]:
    """The pydantic classes inside a field annotation (through Optional, List, Union...)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [c for arg in typing.get_args(annotation) for c in _model_classes(arg)]


def build_chat_model(settings: LLMSettings, *, direct: bool = True) -> ChatOpenAI:
    """One client per process: building it per call would rebuild the HTTP pool every time.

    ``direct=False`` gives stock ``ChatOpenAI`` with the same settings over the SDK's default
    httpx client: the comparison point of ``bench.naive``, ``bench.capas`` and the tests that
    prove ``DirectChatOpenAI`` sends and returns the same. Each model gets its own HTTP client,
    so ``close_chat_model`` never closes langchain's shared default one.
    """
    extra: dict[str, Any] = {}
    if direct:
        complete_response_models()
    extra_body: dict[str, Any] = {}
    if settings.repeat_penalty is not None:
        extra_body["repeat_penalty"] = settings.repeat_penalty
        extra_body["repetition_penalty"] = settings.repeat_penalty
    http_client = DefaultAioHttpClient if direct else DefaultAsyncHttpxClient
    if direct:
        extra["sesion"] = SesionHTTP()
    model_class = DirectChatOpenAI if direct else ChatOpenAI
    return model_class(
        base_url=settings.url,
        api_key=settings.api_key,  # type: ignore[arg-type]
        model=settings.model,
        timeout=settings.timeout_s,
        max_retries=0,  # retries live in grafo.ejecucion, where they are counted and paused on
        max_tokens=settings.max_tokens,  # type: ignore[call-arg]
        temperature=0.2,
        extra_body=extra_body or None,
        profile=MODEL_PROFILE,  # type: ignore[arg-type]
        http_async_client=http_client(timeout=settings.timeout_s),
        **extra,
    )


# "No repeat penalty", said explicitly: llama.cpp servers may default to 1.1 (``fichas
# llm-local`` does), and a penalty bends the verdict token's probability by what the answer
# already said: in the rubric, an earlier ``"falla": true`` would lower the next question's.
NO_REPEAT_PENALTY = {"repeat_penalty": 1.0, "repetition_penalty": 1.0}


def evaluator_chat_model(
    model: ChatOpenAI,
    top_logprobs: int,
    rutas_puntuadas: tuple[tuple[str, ...], ...] | None = None,
) -> ChatOpenAI:
    """The evaluator's copy of the shared model: logprobs on, temperature 0, no repeat penalty.

    The evaluator's score is read from the log-probabilities of its verdict token
    (``grafo.puntuacion``), so its requests ask for ``logprobs`` and ``top_logprobs``; at
    temperature 0 the verdict written is the argmax the score describes. The generator keeps
    its own settings. A shallow copy: it shares the HTTP client (one pool, closed once by
    ``close_chat_model`` on the original) and the model profile, so ``ProviderStrategy`` still
    sends ``response_format`` json_schema. ``rutas_puntuadas``: the paths the score reads;
    a ``DirectChatOpenAI`` keeps only their part of the logprobs (point 5), a stock
    ``ChatOpenAI`` (the comparison point) keeps all of it.
    """
    extra_body = {**(model.extra_body or {}), **NO_REPEAT_PENALTY}
    update: dict[str, Any] = {
        "temperature": 0.0,
        "logprobs": True,
        "top_logprobs": top_logprobs,
        "extra_body": extra_body,
    }
    if isinstance(model, DirectChatOpenAI):
        update["rutas_puntuadas"] = rutas_puntuadas
    return model.model_copy(update=update)


async def close_chat_model(model: ChatOpenAI) -> None:
    """Close the HTTP pool: aiohttp warns about sessions left open at exit."""
    client = model.root_async_client
    if client is not None:
        await client.close()
    sesion = getattr(model, "sesion", None)
    if isinstance(sesion, SesionHTTP):
        await sesion.close()
