"""The two agents, built once per process: a generator and an evaluator with a veto.

Both are ``create_agent`` graphs with no tools and ``ProviderStrategy``: the request carries
``response_format`` json_schema and vLLM applies it with guided decoding. The chat model
(``grafo.chat_model``) carries the profile ``{"structured_output": True}``; without it
langchain would silently fall back to a synthetic tool call.

Both are built with ``checkpointer=False``: invoked inside a node they would otherwise inherit
the parent's checkpointer and write their own rows (the naive design of docs/rendimiento.md
writes 30 per 3-attempt ficha; the parent alone writes 9), though a tool-less agent has nothing
to resume. They are called with ``durability="async"``, because a parent running with
``durability="sync"`` crashes agents that have no checkpointer.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Mapping
from typing import Any

import openai
from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy, StructuredOutputError
from langchain_core.messages import AIMessage, HumanMessage
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from esquemas import Ficha, Veredicto
from grafo.errores import SalidaInvalida, classify
from grafo.mensajes import (
    mensaje_evaluador,
    mensaje_evaluador_rubrica,
    mensaje_generador,
    prompt_evaluador,
    prompt_evaluador_rubrica,
    prompt_generador,
)
from grafo.rubrica import Rubrica, veredicto_de_rubrica
from grafo.sensores import NullSensor, Sensor

# The agents run with durability="async" and no checkpointer (see the module docstring);
# LangGraph warns that durability is then moot, once per call. That is the intended setup.
warnings.filterwarnings("ignore", message="`durability` has no effect", category=UserWarning)


class Agentes:
    """The generator and the evaluator over one chat model; each call returns a pydantic model."""

    def __init__(
        self,
        model: ChatOpenAI,
        sensor: Sensor | None = None,
        rubrica: bool = False,
        ejemplos: bool = False,
    ) -> None:
        """``rubrica``: the evaluator answers three yes/no questions (``grafo.rubrica``)
        instead of giving the verdict itself; code maps the answers onto a ``Veredicto``.
        ``ejemplos``: the generator's prompt frames the origin as data and shows one example
        ficha per family (``prompt_generador``)."""
        self._sensor = sensor or NullSensor()
        self.rubrica = rubrica
        self._generador = self._build(model, "generador", prompt_generador(ejemplos), Ficha)
        if rubrica:
            self._evaluador = self._build(model, "evaluador", prompt_evaluador_rubrica(), Rubrica)
        else:
            self._evaluador = self._build(model, "evaluador", prompt_evaluador(), Veredicto)

    @staticmethod
    def _build(model: ChatOpenAI, name: str, prompt: str, schema: type[BaseModel]) -> Any:
        """One tool-less agent with native structured output and no checkpointer of its own."""
        return create_agent(
            model,
            tools=[],
            system_prompt=prompt,
            response_format=ProviderStrategy(schema),
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
        if self.rubrica:
            texto = mensaje_evaluador_rubrica(ficha, origen)
            rubrica = await self._ask(self._evaluador, "evaluador", texto)
            assert isinstance(rubrica, Rubrica)
            return veredicto_de_rubrica(rubrica)
        texto = mensaje_evaluador(ficha, comprobaciones, origen)
        respuesta = await self._ask(self._evaluador, "evaluador", texto)
        assert isinstance(respuesta, Veredicto)
        return respuesta

    async def _ask(self, agent: Any, name: str, content: str) -> BaseModel:
        """Invoke one agent with one user message and return its structured response.

        Every model call of both agents passes here, so this is where each one is observed:
        time and token usage go to the sensor whether the answer parses or not (failed calls
        count too, with 0 tokens: the error-rate alert divides by this count). Not an agent
        middleware on purpose: ``create_agent`` wraps every ``awrap_model_call`` middleware in
        langsmith's ``traceable``, which hops to a worker thread twice per call even with
        tracing off (measured in docs/rendimiento.md). One agent call is one model call: no tools.
        """
        start = time.perf_counter()
        message: AIMessage | None = None
        try:
            salida = await agent.ainvoke(
                {"messages": [HumanMessage(content=content)]}, durability="async"
            )
            message = next(
                (m for m in reversed(salida.get("messages", [])) if isinstance(m, AIMessage)),
                None,
            )
        except StructuredOutputError as exc:
            message = exc.ai_message
            raise SalidaInvalida(name, str(getattr(exc, "source", exc))) from exc
        except openai.APIStatusError as exc:
            failure = classify(exc)
            if failure is not None and failure.transient:
                raise
            raise SalidaInvalida(
                name, f"el servidor rechazó la petición ({exc.status_code})"
            ) from exc
        finally:
            self._observe(name, time.perf_counter() - start, message)
        respuesta = salida.get("structured_response")
        if not isinstance(respuesta, BaseModel):
            raise SalidaInvalida(name, "la respuesta no trae salida estructurada")
        return respuesta

    def _observe(self, name: str, seconds: float, message: AIMessage | None) -> None:
        """Report one model call to the sensor, with its token usage when the server gave it."""
        usage: Mapping[str, Any] = (message.usage_metadata if message else None) or {}
        self._sensor.on_llm_call(
            name, seconds, int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        )
