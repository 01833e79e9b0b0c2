"""Running one event through the compiled loop: resume, redelivery and LLM outages.

The thread id is ``<sku>:<event_id>``, so the same event always lands on the same checkpoint
thread: a finished thread returns its stored outcome without calling the LLM (redelivery), a
thread interrupted by a crash resumes at the step after the last checkpoint, and a new thread
starts from the event.

Transient LLM failures are retried here, forever, with exponential backoff, full jitter and the
server's Retry-After: the failing node's writes are never committed, so a failure is not an
attempt. ``LLMHealth`` tells the caller when the LLM is down, so it can stop taking new events.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from criterios import atributos_obligatorios
from esquemas import EventoCambio
from esquemas.constantes import CRITERIO_SALIDA_INVALIDA
from grafo.errores import classify
from grafo.estado import origen_de
from grafo.sensores import NullSensor, Sensor


@dataclass(frozen=True)
class Rechazo:
    """One criterion that rejected an attempt, and who rejected it (``codigo`` | ``evaluador``)."""

    criterio: str
    por: str


@dataclass(frozen=True)
class ResumenIntento:
    """What the metrics need of one attempt: approved, the rejections, an invalid answer."""

    intento: int
    aprobada: bool
    rechazos: tuple[Rechazo, ...] = ()
    invalida: bool = False


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


@dataclass
class RetryPolicy:
    """Exponential backoff with full jitter, capped, honouring Retry-After when it is longer."""

    base_s: float = 0.5
    cap_s: float = 30.0
    max_wait_s: float | None = None  # None: retry forever (the worker); a number: give up
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, failures: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number ``failures`` (1-based)."""
        backoff = self.rng.uniform(0, min(self.cap_s, self.base_s * 2 ** (failures - 1)))
        return max(backoff, retry_after_s or 0.0)


class LLMUnavailable(RuntimeError):
    """The LLM stayed down longer than ``RetryPolicy.max_wait_s``."""


class LLMHealth:
    """Shared up/down state of the LLM: callers wait on it before taking new work."""

    def __init__(self, sensor: Sensor | None = None) -> None:
        self._up = asyncio.Event()
        self._up.set()
        self._sensor = sensor or NullSensor()

    @property
    def is_up(self) -> bool:
        """True unless a call is currently failing."""
        return self._up.is_set()

    def mark_down(self) -> None:
        """A transient failure was seen: pause new work."""
        if self._up.is_set():
            self._up.clear()
            self._sensor.on_llm_paused(True)

    def mark_up(self) -> None:
        """A run got through: resume."""
        if not self._up.is_set():
            self._up.set()
            self._sensor.on_llm_paused(False)

    async def wait_up(self) -> None:
        """Block while the LLM is down."""
        await self._up.wait()


def thread_id(evento: EventoCambio) -> str:
    """One checkpoint thread per event: same event, same thread, same outcome."""
    return f"{evento.sku}:{evento.event_id}"


def entrada_inicial(evento: EventoCambio) -> dict[str, Any]:
    """The graph's input: the event and the origin the agents are allowed to see."""
    datos = evento.model_dump(mode="json")
    return {"evento": datos, "origen": origen_de(datos, atributos_obligatorios(evento.familia))}


def resumen_intentos(historial: list[dict[str, Any]]) -> tuple[ResumenIntento, ...]:
    """Per attempt: approved or not, and which criteria rejected it by whom (for metrics)."""
    return tuple(
        ResumenIntento(
            intento=int(r["intento"]),
            aprobada=bool(r["veredicto"]["aprobada"]),
            rechazos=tuple(
                Rechazo(criterio=str(x["criterio"]), por=str(x["por"]))
                for x in r.get("rechazos", [])
            ),
            invalida=any(
                p["criterio"] == CRITERIO_SALIDA_INVALIDA for p in r["veredicto"]["problemas"]
            ),
        )
        for r in historial
    )


class Procesador:
    """Runs events through the compiled graph with resume, redelivery and LLM retries."""

    def __init__(
        self,
        graph: CompiledStateGraph,
        policy: RetryPolicy | None = None,
        health: LLMHealth | None = None,
        sensor: Sensor | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self._graph = graph
        self._policy = policy or RetryPolicy()
        self._sensor = sensor or NullSensor()
        self.health = health or LLMHealth(self._sensor)
        self._sleep = sleep

    async def procesar(self, evento: EventoCambio) -> Resultado:
        """Run (or resume, or replay) one event to its outcome."""
        config: RunnableConfig = {"configurable": {"thread_id": thread_id(evento)}}
        snapshot = await self._graph.aget_state(config)
        if snapshot.values.get("salida") and not snapshot.next:
            return self._resultado(snapshot.values, reentregada=True)
        entrada: dict[str, Any] | None = None if snapshot.next else entrada_inicial(evento)
        valores = await self._run_with_retries(entrada, evento, config)
        return self._resultado(valores, reentregada=False)

    async def _run_with_retries(
        self, entrada: dict[str, Any] | None, evento: EventoCambio, config: RunnableConfig
    ) -> dict[str, Any]:
        """Invoke until the graph ends; transient LLM failures wait and resume."""
        failures = 0
        waited = 0.0
        while True:
            try:
                valores = await self._graph.ainvoke(entrada, config, durability="sync")
            except Exception as exc:
                failure = classify(exc)
                if failure is None or not failure.transient:
                    raise
                failures += 1
                self._sensor.on_llm_error(failure.kind)
                self.health.mark_down()
                delay = self._policy.delay(failures, failure.retry_after_s)
                if self._policy.max_wait_s is not None and waited + delay > self._policy.max_wait_s:
                    raise LLMUnavailable(f"LLM unavailable after {failures} tries: {exc}") from exc
                waited += delay
                await self._sleep(delay)
                snapshot = await self._graph.aget_state(config)
                entrada = None if snapshot.next else entrada_inicial(evento)
                continue
            self.health.mark_up()
            return dict(valores)

    async def olvidar(self, evento: EventoCambio) -> None:
        """Delete the event's checkpoint thread, once its outcome is recorded elsewhere.

        LangGraph's savers never prune threads; the caller calls this after it stored the
        outcome where a redelivery finds it, so the checkpoint tables stay bounded.
        """
        checkpointer = self._graph.checkpointer
        if isinstance(checkpointer, BaseCheckpointSaver):
            await checkpointer.adelete_thread(thread_id(evento))

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
