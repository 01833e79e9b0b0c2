"""Running one event through the compiled loop: resume, redelivery and LLM outages.

One checkpoint thread per event (``<sku>:<event_id>``): a finished thread returns its stored
outcome without the LLM, an interrupted one resumes after its last checkpoint, a new one starts
from the event. Transient LLM failures are retried here, forever, with backoff, jitter and
``Retry-After``, and are never an attempt; this is the one retry loop around the graph, and a
caller's rule for other failures is passed in (``grafo.retry.FailureRule``). ``LLMHealth`` tells
the caller when to stop taking events and the operator when the LLM paused and came back.
docs/grafo.md, "The runner".
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from criterios import atributos_obligatorios
from esquemas import EventoCambio
from grafo.contexto import en_intento
from grafo.errores import LLMFailure, classify
from grafo.estado import origen_de
from grafo.intentos import ResumenIntento, resumen_intentos
from grafo.retry import Attempts, Backoff, BudgetSpent, FailureRule, LLMUnavailable, retry
from grafo.sensores import NullSensor, Sensor

log = logging.getLogger(__name__)
T = TypeVar("T")

REMINDER_S = 60.0  # while the LLM stays down, say so again this often


@dataclass(frozen=True)
class Resultado:
    """The outcome of one event, typed for the caller.

    ``salida`` is the contract record to emit as it is (``FichaPublicada`` or
    ``FichaEnRevision`` as JSON-able dict); the other fields are read from it once here, so no
    caller indexes it. ``intentos`` is the attempt count the record carries; ``resumen`` is
    the per-attempt detail.
    """

    destino: str
    salida: dict[str, Any]
    sku: str
    event_id: str
    version: int
    intentos: int
    reentregada: bool
    resumen: tuple[ResumenIntento, ...] = ()


class LLMHealth:
    """Shared up/down state of the LLM: callers wait on it before taking new work.

    ``oyentes`` are called with the new state at each change, synchronously, before the call
    that saw it is retried (the worker closes its gates while the LLM is down until the
    served model is read again: ``stream.gobierno.identidad``).
    """

    def __init__(self, sensor: Sensor | None = None, url: str = "") -> None:
        self._up = asyncio.Event()
        self._up.set()
        self._sensor = sensor or NullSensor()
        self.url = url
        self._down_since = 0.0
        self._last_said = 0.0
        self.oyentes: list[Callable[[bool], None]] = []

    @property
    def is_up(self) -> bool:
        """True unless a call is currently failing."""
        return self._up.is_set()

    def mark_down(self, failure: LLMFailure | None = None) -> None:
        """A transient failure was seen: pause new work, and say why (again every minute)."""
        now = time.monotonic()
        cause = failure.cause if failure is not None else "unknown"
        if self._up.is_set():
            self._up.clear()
            self._down_since = self._last_said = now
            self._sensor.on_llm_paused(True)
            for oyente in self.oyentes:
                oyente(False)
            log.warning(
                "LLM at %s unavailable: %s; pausing new events until it answers",
                self.url,
                cause,
                extra={"llm_url": self.url, "causa": cause},
            )
        elif now - self._last_said >= REMINDER_S:
            self._last_said = now
            log.warning(
                "LLM at %s still unavailable after %.0f s: %s; new events still paused",
                self.url,
                now - self._down_since,
                cause,
                extra={"llm_url": self.url, "causa": cause},
            )

    def mark_up(self) -> None:
        """A run got through: resume."""
        if not self._up.is_set():
            self._up.set()
            self._sensor.on_llm_paused(False)
            for oyente in self.oyentes:
                oyente(True)
            down_s = time.monotonic() - self._down_since
            log.info(
                "LLM at %s answers again after %.0f s; resuming",
                self.url,
                down_s,
                extra={"llm_url": self.url, "caida_s": round(down_s, 1)},
            )

    async def wait_up(self) -> None:
        """Block while the LLM is down."""
        await self._up.wait()


async def reintentar_llm(llamada: Callable[[], Awaitable[T]], policy: Backoff) -> T:
    """One call that reaches the LLM outside the graph (``fichas evaluar``'s evaluator calls),
    retried on the LLM's transient failures by the same rule as the graph's runs.

    Raises ``LLMUnavailable`` when ``policy``'s budget of waiting is spent; any other failure
    is raised as it is.
    """

    async def on_failure(exc: Exception, attempts: Attempts) -> float | None:
        failure = classify(exc)
        if failure is None or not failure.transient:
            raise exc
        return failure.retry_after_s

    try:
        return await retry(llamada, policy, on_failure)
    except BudgetSpent as spent:
        raise LLMUnavailable(f"LLM unavailable after {spent}") from spent.__cause__


def _intento_en_curso(valores: dict[str, Any], siguiente: tuple[str, ...]) -> int:
    """The attempt a failed run was on: the evaluator judges attempt n, the generator n + 1."""
    hechos = int(valores.get("intentos", 0))
    return hechos if "evaluar" in siguiente else hechos + 1


def thread_id(evento: EventoCambio, prefijo: str = "") -> str:
    """One checkpoint thread per event and loop: same event, same thread, same outcome. A
    candidate loop's ``prefijo`` keeps its threads apart from the live run of the same event."""
    return f"{prefijo}{evento.sku}:{evento.event_id}"


def entrada_inicial(evento: EventoCambio) -> dict[str, Any]:
    """The graph's input: the event and the origin the agents are allowed to see."""
    datos = evento.model_dump(mode="json")
    return {"evento": datos, "origen": origen_de(datos, atributos_obligatorios(evento.familia))}


class Procesador:
    """Runs events through the compiled graph with resume, redelivery and LLM retries."""

    def __init__(
        self,
        graph: CompiledStateGraph,
        policy: Backoff | None = None,
        health: LLMHealth | None = None,
        sensor: Sensor | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
        llm_url: str = "",
        prefijo_hilo: str = "",
    ) -> None:
        self._graph = graph
        self._prefijo = prefijo_hilo  # a candidate loop's threads: never the live run's
        self._policy = policy or Backoff()
        self._sensor = sensor or NullSensor()
        self.health = health or LLMHealth(self._sensor, llm_url)
        self._sleep = sleep

    async def procesar(self, evento: EventoCambio, otros: FailureRule | None = None) -> Resultado:
        """Run (or resume, or replay) one event to its outcome.

        The one retry loop around the graph: the LLM's transient failures are retried here
        (forever, or within ``Backoff.max_wait_s``); any other failure is given to ``otros``,
        the caller's rule (the worker's: a database outage is retried, a bug on one event is
        given up after a few tries), or raised when there is none. Every try reads the
        thread's checkpoint first, so it resumes where the last one stopped.

        The caller enters the event's log context (``grafo.contexto.sobre_evento``) once,
        where its handling of the event starts: the worker's lane, ``fichas procesar``.
        """
        config: RunnableConfig = {"configurable": {"thread_id": thread_id(evento, self._prefijo)}}
        failure: LLMFailure | None = None  # the last failure, when it was a transient LLM one
        ran = reentregada = False

        async def invoke() -> dict[str, Any]:
            nonlocal ran, reentregada
            snapshot = await self._graph.aget_state(config)
            if snapshot.values.get("salida") and not snapshot.next:
                reentregada = True
                return dict(snapshot.values)
            entrada = None if snapshot.next else entrada_inicial(evento)
            ran = True
            return dict(await self._graph.ainvoke(entrada, config, durability="sync"))

        async def on_failure(exc: Exception, attempts: Attempts) -> float | None:
            nonlocal failure
            failure = classify(exc)
            if failure is None or not failure.transient:
                failure = None
                if otros is None:
                    raise exc
                return await otros.on_failure(exc, attempts)
            await self._mark_attempt(config)
            self._sensor.on_llm_error(failure.kind)
            self.health.mark_down(failure)
            return failure.retry_after_s

        def on_wait(exc: Exception, attempts: Attempts) -> None:
            if failure is not None:
                self._report_retry(failure, attempts.failures, attempts.delay_s)
            elif otros is not None:
                otros.on_wait(exc, attempts)

        try:
            valores = await retry(invoke, self._policy, on_failure, on_wait, self._sleep)
        except BudgetSpent as spent:
            cause = failure.cause if failure is not None else "unknown"
            raise LLMUnavailable(
                f"LLM at {self.health.url} unavailable after {spent}: {cause}"
            ) from spent.__cause__
        if ran:
            self.health.mark_up()
        if otros is not None:
            otros.on_success()
        return self._resultado(valores, reentregada=reentregada)

    async def guardado(self, evento: EventoCambio) -> dict[str, Any] | None:
        """The outcome stored for this event by an earlier run, if it finished; else None."""
        config: RunnableConfig = {"configurable": {"thread_id": thread_id(evento, self._prefijo)}}
        snapshot = await self._graph.aget_state(config)
        if snapshot.values.get("salida") and not snapshot.next:
            return dict(snapshot.values["salida"])
        return None

    async def _mark_attempt(self, config: RunnableConfig) -> None:
        """Name, in the log context, the attempt a failed run was on (when the checkpoint can
        be read: a failure to read it is the next try's to meet)."""
        try:
            snapshot = await self._graph.aget_state(config)
        except Exception:
            return
        en_intento(_intento_en_curso(snapshot.values, snapshot.next))

    def _report_retry(self, failure: LLMFailure, failures: int, delay: float) -> None:
        """One line per retry: WARNING when a person waits on this run, else DEBUG."""
        limit = self._policy.max_wait_s
        level = logging.WARNING if self._policy.report_each else logging.DEBUG
        bound = f" (giving up after {limit:.0f} s in total)" if limit is not None else ""
        log.log(
            level,
            "LLM call to %s failed: %s; retry %d in %.1f s%s",
            self.health.url,
            failure.cause,
            failures,
            delay,
            bound,
            extra={"llm_url": self.health.url, "causa": failure.cause, "kind": failure.kind},
        )

    async def olvidar(self, evento: EventoCambio) -> None:
        """Delete the event's checkpoint thread, once its outcome is recorded elsewhere.

        LangGraph's savers never prune threads; the caller calls this after it stored the
        outcome where a redelivery finds it, so the checkpoint tables stay bounded.
        """
        checkpointer = self._graph.checkpointer
        if isinstance(checkpointer, BaseCheckpointSaver):
            await checkpointer.adelete_thread(thread_id(evento, self._prefijo))

    @staticmethod
    def _resultado(valores: dict[str, Any], reentregada: bool) -> Resultado:
        """Turn the final state into a ``Resultado``."""
        salida = valores["salida"]
        registro = salida["evento"]
        return Resultado(
            destino=salida["destino"],
            salida=registro,
            sku=str(registro["sku"]),
            event_id=str(registro["event_id"]),
            version=int(registro["version"]),
            intentos=int(registro.get("intentos") or 0),
            reentregada=reentregada,
            resumen=resumen_intentos(valores.get("historial", [])),
        )
