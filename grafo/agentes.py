"""The two agents, built once per process: a generator and an evaluator with a veto.

Each agent is one tool-less chat-model call with langchain's ``ProviderStrategy``
(``LlamadaEstructurada``): ``response_format`` json_schema on the wire, the answer parsed and
validated by the strategy's own binding; the chat model carries the profile
``{"structured_output": True}``. Keep the request body and the parse identical to
``create_agent``'s (tested through the fake server). The evaluator runs on its own copy of the
chat model (temperature 0, ``logprobs``); its score is read from the answer's log-probabilities
(``grafo.puntuacion``) and is not a field of ``Veredicto``, which is the LLM's to fill.
Why not ``create_agent`` itself, and the callback bypass: docs/grafo.md, "The agents".
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import openai
from langchain.agents.structured_output import (
    ProviderStrategy,
    ProviderStrategyBinding,
    StructuredOutputError,
    StructuredOutputValidationError,
)
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

from criterios import respaldo
from esquemas import Ficha, Veredicto
from esquemas.constantes import MODO_CITAS, MODO_LECTOR, MODO_RUBRICA
from grafo.chat_model import DirectChatOpenAI, evaluator_chat_model, sin_oyentes
from grafo.citas import (
    RUTA_RESPALDADA,
    Citas,
    Juicio,
    formato_respuesta,
    juzgar,
    leer,
    puntuacion_citas,
    puntuacion_lectura,
    veredicto_de_citas,
)
from grafo.errores import SalidaInvalida, classify
from grafo.mensajes import (
    SIN_PLANTILLAS,
    Plantillas,
    mensaje_evaluador,
    mensaje_evaluador_citas,
    mensaje_evaluador_rubrica,
    mensaje_generador,
    modo_evaluador,
    prompt_del_evaluador,
    prompt_generador,
    senal_evaluador,
)
from grafo.puntuacion import (
    RUTA_APROBADA,
    TOP_LOGPROBS,
    probabilidades_verdadero,
    puntuacion_rubrica,
    puntuacion_veredicto,
)
from grafo.rubrica import PREGUNTAS, Rubrica, veredicto_de_rubrica
from grafo.sensores import NullSensor, Sensor

# The paths the rubric's score reads: each question's ``falla`` (``puntuacion_rubrica``).
RUTAS_RUBRICA: tuple[tuple[str, ...], ...] = tuple((p, "falla") for p in PREGUNTAS)


class LlamadaEstructurada:
    """One agent: a system prompt, a pydantic schema and the chat model bound to it, once.

    ``create_agent(model, tools=[], system_prompt=..., response_format=ProviderStrategy(schema))``
    without its graph: the model is bound as its model node binds it (``bind_tools`` with no
    tools, the strategy's ``response_format`` and ``strict=True`` for an OpenAI-compatible
    model), the system prompt goes before the user message, the answer is named after the
    agent and parsed by ``ProviderStrategyBinding``; a parse or validation failure raises the
    ``StructuredOutputValidationError`` the agent raised, with the message attached.
    """

    def __init__(self, model: ChatOpenAI, name: str, prompt: str, schema: type[BaseModel]) -> None:
        """Bind the model once: the agent's model node bound it again on every call."""
        strategy = ProviderStrategy(schema)
        self.name = name
        self.schema = schema
        self._system = SystemMessage(content=prompt)
        self._bound: Runnable[Any, Any] = model.bind_tools(
            [], **strategy.to_model_kwargs(), strict=True
        )
        self._binding = ProviderStrategyBinding.from_schema_spec(strategy.schema_spec)
        # the model and the bound call's arguments, when nothing listens to its calls
        self._directo: DirectChatOpenAI | None = model if sin_oyentes(model) else None
        self._kwargs = dict(getattr(self._bound, "kwargs", {}))

    @property
    def formato(self) -> dict[str, Any]:
        """The ``response_format`` the agent was bound with (the schema's JSON form)."""
        return dict(self._kwargs["response_format"])

    async def ainvoke(
        self, content: str, formato: Mapping[str, Any] | None = None
    ) -> tuple[AIMessage, Any]:
        """Ask once; the answer message and its validated structured response.

        Straight to the chat model's ``responder`` when nothing listens to its calls
        (``grafo.chat_model``, point 7), through ``ainvoke`` and its callbacks otherwise.
        ``formato`` replaces the bound ``response_format`` for this call only (the quoting
        evaluator narrows its schema to one ficha's origin, ``grafo.citas``); the answer is
        still parsed with the agent's schema.
        """
        mensajes = [self._system, HumanMessage(content=content)]
        if self._directo is not None:
            kwargs = (
                self._kwargs if formato is None else {**self._kwargs, "response_format": formato}
            )
            message = await self._directo.responder(mensajes, **kwargs)
        elif formato is None:
            message = await self._bound.ainvoke(mensajes)
        else:
            message = await self._bound.bind(response_format=dict(formato)).ainvoke(mensajes)
        if not isinstance(message, AIMessage):
            raise TypeError(f"{self.name}: the chat model returned {type(message).__name__}")
        message.name = self.name
        try:
            respuesta = self._binding.parse(message)
        except Exception as exc:
            raise StructuredOutputValidationError(self.schema.__name__, exc, message) from exc
        return message, respuesta


@dataclass(frozen=True)
class Evaluacion:
    """The evaluator's answer: its verdict, and ``P(approvable)`` read from its logprobs.

    ``puntuacion`` is None when the server gave no usable log-probabilities (see
    ``grafo.puntuacion`` for when); the gate reads None as "not approved". ``citas``: the
    quoting evaluator's judgement of each claim (``grafo.citas.Juicio.como_registro``), for
    ``fichas evaluar``'s records; None in the other modes.
    """

    veredicto: Veredicto
    puntuacion: float | None
    citas: tuple[dict[str, Any], ...] | None = None


class Agentes:
    """The generator and the evaluator over one chat model; each call returns a pydantic model."""

    def __init__(
        self,
        model: ChatOpenAI,
        sensor: Sensor | None = None,
        rubrica: bool | str = False,
        ejemplos: bool = False,
        senal: bool = False,
        plantillas: Plantillas = SIN_PLANTILLAS,
    ) -> None:
        """``rubrica``: the evaluator's mode (``FICHAS_EVALUADOR``), or True for the rubric:
        ``rubrica`` answers three yes/no questions (``grafo.rubrica``), ``citas`` quotes the
        origin for each claim and code judges the quotes (``grafo.citas``); either way code
        maps the answer onto a ``Veredicto``. ``ejemplos``: the generator's prompt frames the
        origin as data and shows one example ficha per family (``prompt_generador``).
        ``senal``: the single-verdict evaluator is also shown the unsupported words of a ficha
        with a Spanish origin (``senal_evaluador``); the other modes judge invented facts
        their own way. ``plantillas``: texts that replace the package's templates (from
        ``FICHAS_PROMPT_*_ARCHIVO``), each given only to its own agent."""
        modo = modo_evaluador(rubrica)
        prompt = prompt_del_evaluador(modo, senal, plantillas.evaluador)
        self._sensor = sensor or NullSensor()
        self.modo = modo
        self.rubrica = modo == MODO_RUBRICA
        self.senal = senal
        self._generador = self._build(
            model, "generador", prompt_generador(ejemplos, plantillas.generador), Ficha
        )
        # the quoter's logprobs are read at every claim's boolean: kept whole, not cut
        rutas = {MODO_RUBRICA: RUTAS_RUBRICA, MODO_CITAS: None}.get(modo, (RUTA_APROBADA,))
        evaluador = evaluator_chat_model(model, TOP_LOGPROBS, rutas)
        esquemas: dict[str, type[BaseModel]] = {MODO_RUBRICA: Rubrica, MODO_CITAS: Citas}
        schema = esquemas.get(modo, Veredicto)
        self._evaluador = self._build(evaluador, "evaluador", prompt, schema)

    @staticmethod
    def _build(
        model: ChatOpenAI, name: str, prompt: str, schema: type[BaseModel]
    ) -> LlamadaEstructurada:
        """One tool-less agent with native structured output (``LlamadaEstructurada``)."""
        return LlamadaEstructurada(model, name, prompt, schema)

    async def generar(self, origen: dict[str, Any], problemas: list[dict[str, Any]]) -> Ficha:
        """Ask the generator for a ficha; raise ``SalidaInvalida`` if it is not a valid Ficha."""
        respuesta, _ = await self._ask(
            self._generador, "generador", mensaje_generador(origen, problemas)
        )
        assert isinstance(respuesta, Ficha)
        return respuesta

    async def evaluar(
        self,
        ficha: dict[str, Any],
        comprobaciones: dict[str, dict[str, Any]],
        origen: dict[str, Any],
    ) -> Evaluacion:
        """Ask the evaluator for a verdict and its score; raise ``SalidaInvalida`` if invalid."""
        evaluacion, _ = await self._evaluar(ficha, comprobaciones, origen, observar=True)
        return evaluacion

    async def sondear(
        self,
        ficha: dict[str, Any],
        comprobaciones: dict[str, dict[str, Any]],
        origen: dict[str, Any],
    ) -> tuple[Evaluacion, Mapping[str, Any] | None]:
        """``evaluar``'s very request, plus the raw logprobs the server gave.

        For the start-up probe (``grafo.logprobs_probe``). Not reported to the sensor: the
        probe is not a ficha's model call, and the loop's metrics (calls, tokens, error rate)
        count only those.
        """
        return await self._evaluar(ficha, comprobaciones, origen, observar=False)

    async def _evaluar(
        self,
        ficha: dict[str, Any],
        comprobaciones: dict[str, dict[str, Any]],
        origen: dict[str, Any],
        observar: bool,
    ) -> tuple[Evaluacion, Mapping[str, Any] | None]:
        """One evaluator request, as the loop sends it; its evaluation and raw logprobs."""
        if self.modo == MODO_CITAS:
            return await self._citar(ficha, origen, observar)
        if self.modo == MODO_LECTOR:
            return self._leer(ficha, origen), None
        if self.rubrica:
            texto = mensaje_evaluador_rubrica(ficha, origen)
            rubrica, logprobs = await self._ask(self._evaluador, "evaluador", texto, observar)
            assert isinstance(rubrica, Rubrica)
            puntuacion = puntuacion_rubrica(logprobs, tuple(PREGUNTAS))
            return Evaluacion(veredicto_de_rubrica(rubrica), puntuacion), logprobs
        senal = senal_evaluador(ficha, origen) if self.senal else None
        texto = mensaje_evaluador(ficha, comprobaciones, origen, senal)
        respuesta, logprobs = await self._ask(self._evaluador, "evaluador", texto, observar)
        assert isinstance(respuesta, Veredicto)
        return Evaluacion(respuesta, puntuacion_veredicto(logprobs)), logprobs

    async def _citar(
        self, ficha: dict[str, Any], origen: dict[str, Any], observar: bool
    ) -> tuple[Evaluacion, Mapping[str, Any] | None]:
        """The quoting evaluator (``grafo.citas``): claims and fragments by code, one quote
        per claim by the model, the judgement and the score by code. A ficha without a claim
        is rejected without asking (nothing to quote)."""
        afirmaciones = respaldo.afirmaciones(ficha)
        if not afirmaciones:
            return Evaluacion(veredicto_de_citas([]), None, ()), None
        fragmentos = respaldo.fragmentos(origen)
        texto = mensaje_evaluador_citas(respaldo.origen_citable(origen), afirmaciones)
        formato = formato_respuesta(self._evaluador.formato, fragmentos, len(afirmaciones))
        respuesta, logprobs = await self._ask(
            self._evaluador, "evaluador", texto, observar, formato
        )
        assert isinstance(respuesta, Citas)
        probabilidades = probabilidades_verdadero(logprobs, RUTA_RESPALDADA)
        juicios = juzgar(afirmaciones, respuesta, probabilidades, origen)
        return _evaluacion_de_juicios(juicios, ficha, origen, puntuacion_citas), logprobs

    def _leer(self, ficha: dict[str, Any], origen: dict[str, Any]) -> Evaluacion:
        """The model-free evaluator (``grafo.citas.leer``): code quotes the origin for every
        claim and judges it with the reader of translations; no model call, no tokens, no
        log-probabilities (the score is code's)."""
        juicios = leer(respaldo.afirmaciones(ficha), origen)
        return _evaluacion_de_juicios(juicios, ficha, origen, puntuacion_lectura)

    async def _ask(
        self,
        agent: LlamadaEstructurada,
        name: str,
        content: str,
        observar: bool = True,
        formato: Mapping[str, Any] | None = None,
    ) -> tuple[BaseModel, Mapping[str, Any] | None]:
        """Call one agent with one user message; return its structured response and logprobs.

        Every model call of both agents passes here, so this is where each one is observed:
        time and token usage go to the sensor whether the answer parses or not (failed calls
        count too, with 0 tokens: the error-rate alert divides by this count). Not a langchain
        middleware on purpose: ``create_agent`` wrapped every ``awrap_model_call`` middleware in
        langsmith's ``traceable``, which hops to a worker thread twice per call even with
        tracing off (measured in docs/rendimiento.md). One agent call is one model call.
        The logprobs are the answer message's ``response_metadata["logprobs"]`` (None when the
        request did not ask for them or the server gave none).
        """
        start = time.perf_counter()
        message: AIMessage | None = None
        try:
            message, respuesta = await agent.ainvoke(content, formato)
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
            if observar:
                self._observe(name, time.perf_counter() - start, message)
        if not isinstance(respuesta, BaseModel):
            raise SalidaInvalida(name, "la respuesta no trae salida estructurada")
        logprobs = message.response_metadata.get("logprobs")
        return respuesta, logprobs if isinstance(logprobs, Mapping) else None

    def _observe(self, name: str, seconds: float, message: AIMessage | None) -> None:
        """Report one model call to the sensor, with its token usage when the server gave it."""
        usage: Mapping[str, Any] = (message.usage_metadata if message else None) or {}
        self._sensor.on_llm_call(
            name, seconds, int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))
        )


def _evaluacion_de_juicios(
    juicios: list[Juicio],
    ficha: dict[str, Any],
    origen: dict[str, Any],
    puntuar: Callable[[list[Juicio], list[str], bool], float | None],
) -> Evaluacion:
    """The verdict, score and record of the claim judgements of ``citas`` or ``lector``, with
    code's own findings (attributes the origin does not give, an empty description)."""
    atributos = respaldo.atributos_sin_respaldo(ficha, origen)
    vacia = respaldo.descripcion_sin_nada_propio(ficha)
    registro = tuple(j.como_registro() for j in juicios) + tuple(
        {"atributo": a, "respaldada": False} for a in atributos
    )
    if vacia:
        registro += ({"descripcion_sin_nada_propio": True},)
    return Evaluacion(
        veredicto_de_citas(juicios, atributos, vacia), puntuar(juicios, atributos, vacia), registro
    )
