"""The two agents, built once per process: a generator and an evaluator with a veto.

Both are ``create_agent`` graphs with no tools and ``ProviderStrategy``: the request carries
``response_format`` json_schema and vLLM applies it with guided decoding. Without the model
profile ``{"structured_output": True}`` langchain cannot know the server supports that and
silently falls back to a synthetic tool call, so the profile is set here explicitly.

Both are built with ``checkpointer=False``: invoked inside a node they would otherwise inherit
the parent's checkpointer and write their own rows (30 per 3-attempt ficha instead of 12),
though a tool-less agent has nothing to resume. They are called with ``durability="async"``,
because a parent running with ``durability="sync"`` crashes agents that have no checkpointer.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import openai
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.structured_output import ProviderStrategy, StructuredOutputError
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from esquemas import Ficha, Veredicto
from grafo.errores import SalidaInvalida, classify
from grafo.mensajes import mensaje_evaluador, mensaje_generador, prompt_evaluador, prompt_generador
from grafo.sensores import NullSensor, Sensor

# The agents run with durability="async" and no checkpointer (see the module docstring);
# LangGraph warns that durability is then moot, once per call. That is the intended setup.
warnings.filterwarnings("ignore", message="`durability` has no effect", category=UserWarning)

MODEL_PROFILE = {"structured_output": True, "max_input_tokens": 32768}


@dataclass(frozen=True)
class LLMSettings:
    """How to reach the OpenAI-compatible server; filled from ``FICHAS_LLM_*`` by the caller."""

    url: str
    model: str
    api_key: str = "EMPTY"
    timeout_s: float = 60.0
    max_tokens: int = 1024
    repeat_penalty: float | None = None  # llama.cpp's name; vLLM's is repetition_penalty


def build_chat_model(settings: LLMSettings) -> ChatOpenAI:
    """One client per process: building it per call would rebuild the HTTP pool every time."""
    extra_body: dict[str, Any] = {}
    if settings.repeat_penalty is not None:
        extra_body["repeat_penalty"] = settings.repeat_penalty
        extra_body["repetition_penalty"] = settings.repeat_penalty
    return ChatOpenAI(
        base_url=settings.url,
        api_key=settings.api_key,  # type: ignore[arg-type]
        model=settings.model,
        timeout=settings.timeout_s,
        max_retries=0,  # retries live in grafo.ejecucion, where they are counted and paused on
        max_tokens=settings.max_tokens,  # type: ignore[call-arg]
        temperature=0.2,
        extra_body=extra_body or None,
        profile=MODEL_PROFILE,  # type: ignore[arg-type]
    )


class CallObserver(AgentMiddleware):  # type: ignore[type-arg]
    """Middleware that times each model call and reads its token usage for the sensor."""

    def __init__(self, agent: str, sensor: Sensor) -> None:
        super().__init__()
        self._agent = agent
        self._sensor = sensor

    async def awrap_model_call(
        self,
        request: ModelRequest,
        handler: Callable[[ModelRequest], Awaitable[ModelResponse]],
    ) -> ModelResponse:
        """Report time and tokens whether the answer parses or not."""
        start = time.perf_counter()
        message: AIMessage | None = None
        try:
            response = await handler(request)
            message = next((m for m in response.result if isinstance(m, AIMessage)), None)
            return response
        except StructuredOutputError as exc:
            message = exc.ai_message
            raise
        finally:
            # Failed calls are observed too (0 tokens): the error-rate alert divides by this count.
            usage: Mapping[str, Any] = (message.usage_metadata if message else None) or {}
            self._sensor.on_llm_call(
                self._agent,
                time.perf_counter() - start,
                int(usage.get("input_tokens", 0)),
                int(usage.get("output_tokens", 0)),
            )


class Agentes:
    """The generator and the evaluator over one chat model; each call returns a pydantic model."""

    def __init__(self, model: ChatOpenAI, sensor: Sensor | None = None) -> None:
        sensor = sensor or NullSensor()
        self._generador = self._build(model, "generador", prompt_generador(), Ficha, sensor)
        self._evaluador = self._build(model, "evaluador", prompt_evaluador(), Veredicto, sensor)

    @staticmethod
    def _build(
        model: ChatOpenAI, name: str, prompt: str, schema: type[BaseModel], sensor: Sensor
    ) -> Any:
        """One tool-less agent with native structured output and no checkpointer of its own."""
        return create_agent(
            model,
            tools=[],
            system_prompt=prompt,
            response_format=ProviderStrategy(schema),
            middleware=[CallObserver(name, sensor)],
            checkpointer=False,
            name=name,
        )

    async def generar(self, origen: dict[str, Any], problemas: list[dict[str, Any]]) -> Ficha:
        """Ask the generator for a ficha; raise ``SalidaInvalida`` if it is not a valid Ficha."""
        respuesta = await self._ask(
            self._generador, "generador", mensaje_generador(origen, problemas)
        )
        assert isinstance(respuesta, Ficha)
        return respuesta

    async def evaluar(
        self,
        ficha: dict[str, Any],
        comprobaciones: dict[str, dict[str, Any]],
        origen: dict[str, Any],
    ) -> Veredicto:
        """Ask the evaluator for a verdict; raise ``SalidaInvalida`` if it is not valid."""
        texto = mensaje_evaluador(ficha, comprobaciones, origen)
        respuesta = await self._ask(self._evaluador, "evaluador", texto)
        assert isinstance(respuesta, Veredicto)
        return respuesta

    @staticmethod
    async def _ask(agent: Any, name: str, content: str) -> BaseModel:
        """Invoke one agent with one user message and return its structured response."""
        try:
            salida = await agent.ainvoke(
                {"messages": [HumanMessage(content=content)]}, durability="async"
            )
        except StructuredOutputError as exc:
            raise SalidaInvalida(name, str(getattr(exc, "source", exc))) from exc
        except openai.APIStatusError as exc:
            failure = classify(exc)
            if failure is not None and failure.transient:
                raise
            raise SalidaInvalida(
                name, f"el servidor rechazó la petición ({exc.status_code})"
            ) from exc
        respuesta = salida.get("structured_response")
        if not isinstance(respuesta, BaseModel):
            raise SalidaInvalida(name, "la respuesta no trae salida estructurada")
        return respuesta
