"""Prometheus metrics of the worker, all recorded here and nowhere else.

``grafo`` only calls the ``Sensor`` hooks and the worker only calls the ``on_*`` methods of
``PrometheusSensor``: keeping every counter in one class means the names, labels and the
rule "a redelivered outcome is counted once" live in one file, which ``docs/metricas.md``
mirrors and a test compares against.

Each sensor owns its ``CollectorRegistry`` (with the process and platform collectors) instead
of using the global one, so several sensors can coexist in one process (tests, or a worker
restarted in-process) without "Duplicated timeseries" errors.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
)

from criterios import CRITERIOS_VERSION, cargar_criterios
from esquemas.constantes import DESTINO_PUBLICADAS, DESTINO_REVISION
from grafo import Resultado, ResumenIntento

log = logging.getLogger(__name__)

P = ParamSpec("P")

# Base names as they appear in /metrics (counters with ``_total``, the Info with ``_info``);
# docs/metricas.md lists exactly these.
METRIC_NAMES: frozenset[str] = frozenset(
    {
        "fichas_events_total",
        "fichas_attempts_total",
        "fichas_attempts_per_ficha",
        "fichas_rejections_total",
        "fichas_verdicts_total",
        "fichas_event_duration_seconds",
        "fichas_node_duration_seconds",
        "fichas_llm_request_duration_seconds",
        "fichas_llm_errors_total",
        "fichas_llm_tokens_total",
        "fichas_in_flight",
        "fichas_consumer_lag",
        "fichas_llm_paused",
        "fichas_criteria_info",
        "fichas_sample_total",
    }
)

RESULTS = ("publicada", "revision_manual", "dlq", "obsoleto", "reentregada")
AGENTS = ("generador", "evaluador")
NODES = ("generar", "evaluar", "publicar", "descartar")
LLM_ERROR_KINDS = ("connection", "timeout", "rate_limit", "server", "request", "invalid_output")
TOKEN_TYPES = ("prompt", "completion")
OTHER_CRITERION = "otro"

ATTEMPT_BUCKETS = (1, 2, 3, 4, 5)
# An event waits for up to 2 × FICHAS_MAX_INTENTOS model calls on a shared GPU: minutes, not ms.
EVENT_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300)
# One model call: a short verdict on an idle server (~50 ms) up to a long ficha under load.
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 45, 60, 90, 120)

_RESULT_BY_DESTINO = {DESTINO_PUBLICADAS: "publicada", DESTINO_REVISION: "revision_manual"}


def _never_raise(method: Callable[P, None]) -> Callable[P, None]:
    """The sensor contract says hooks never raise: a metrics bug must not fail an event."""

    @functools.wraps(method)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> None:
        try:
            method(*args, **kwargs)
        except Exception:
            log.exception("metrics hook %s failed", method.__name__)

    return wrapper


def _criteria_by() -> tuple[frozenset[str], list[tuple[str, str]]]:
    """Known criterion ids and the (criterion, by) pairs the criteria table makes possible."""
    ids: set[str] = set()
    pairs: list[tuple[str, str]] = []
    for criterio in cargar_criterios():
        ids.add(criterio.id)
        if criterio.comprobado_en_codigo:
            pairs.append((criterio.id, "codigo"))
        if criterio.comprobado_por != "codigo":
            pairs.append((criterio.id, "evaluador"))
    return frozenset(ids), pairs


class PrometheusSensor:
    """The ``grafo.Sensor`` that feeds Prometheus, plus the worker's per-event hooks."""

    def __init__(self, criterios_version: str = CRITERIOS_VERSION, max_intentos: int = 3) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        r = self.registry

        self.events = Counter(
            "fichas_events", "Events finished, one per event, by result", ["result"], registry=r
        )
        self.attempts = Counter(
            "fichas_attempts", "Generation attempts over all events", registry=r
        )
        self.attempts_per_ficha = Histogram(
            "fichas_attempts_per_ficha",
            "Attempts each ficha needed before publication or manual review",
            buckets=ATTEMPT_BUCKETS,
            registry=r,
        )
        self.rejections = Counter(
            "fichas_rejections",
            "Rejections per criterion and who rejected (codigo|evaluador)",
            ["criterion", "by"],
            registry=r,
        )
        self.verdicts = Counter(
            "fichas_verdicts",
            "Judged attempts by attempt number and whether approved",
            ["attempt", "approved"],
            registry=r,
        )
        self.event_duration = Histogram(
            "fichas_event_duration_seconds",
            "End to end time per event, from receipt to committed outcome",
            buckets=EVENT_BUCKETS,
            registry=r,
        )
        self.node_duration = Histogram(
            "fichas_node_duration_seconds",
            "Duration of each graph node",
            ["node"],
            buckets=EVENT_BUCKETS,
            registry=r,
        )
        self.llm_duration = Histogram(
            "fichas_llm_request_duration_seconds",
            "Duration of each LLM request, failed ones included",
            ["agent"],
            buckets=LLM_BUCKETS,
            registry=r,
        )
        self.llm_errors = Counter(
            "fichas_llm_errors", "Failed LLM requests by kind", ["kind"], registry=r
        )
        self.llm_tokens = Counter(
            "fichas_llm_tokens",
            "Tokens reported by the LLM server",
            ["agent", "type"],
            registry=r,
        )
        self.in_flight = Gauge("fichas_in_flight", "Fichas being processed now", registry=r)
        self.consumer_lag = Gauge(
            "fichas_consumer_lag",
            "Group lag per assigned partition: end offset minus committed offset",
            ["topic", "partition"],
            registry=r,
        )
        self.llm_paused = Gauge(
            "fichas_llm_paused", "1 while consumption is paused for the LLM", registry=r
        )
        self.criteria = Info("fichas_criteria", "Loaded criteria version", registry=r)
        self.sample = Counter(
            "fichas_sample", "Published fichas copied to the review sample", registry=r
        )

        self.criteria.info({"version": criterios_version})
        self._known_criteria, criteria_pairs = _criteria_by()
        self._preinitialise(criteria_pairs, max_intentos)

    def _preinitialise(self, criteria_pairs: list[tuple[str, str]], max_intentos: int) -> None:
        """Create the known label sets at 0 so dashboards and rate() see series from the start."""
        for result in RESULTS:
            self.events.labels(result=result)
        for agent in AGENTS:
            self.llm_duration.labels(agent=agent)
            for token_type in TOKEN_TYPES:
                self.llm_tokens.labels(agent=agent, type=token_type)
        for kind in LLM_ERROR_KINDS:
            self.llm_errors.labels(kind=kind)
        for node in NODES:
            self.node_duration.labels(node=node)
        for criterion, by in criteria_pairs:
            self.rejections.labels(criterion=criterion, by=by)
        for attempt in range(1, max_intentos + 1):
            for approved in ("true", "false"):
                self.verdicts.labels(attempt=str(attempt), approved=approved)
        self.llm_paused.set(0)
        self.in_flight.set(0)

    # -- grafo.Sensor ---------------------------------------------------------------------

    @_never_raise
    def on_node(self, node: str, seconds: float) -> None:
        """A graph node finished."""
        self.node_duration.labels(node=node).observe(seconds)

    @_never_raise
    def on_llm_call(
        self, agent: str, seconds: float, prompt_tokens: int, completion_tokens: int
    ) -> None:
        """An LLM call answered: its latency and the tokens it cost."""
        self.llm_duration.labels(agent=agent).observe(seconds)
        if prompt_tokens > 0:
            self.llm_tokens.labels(agent=agent, type="prompt").inc(prompt_tokens)
        if completion_tokens > 0:
            self.llm_tokens.labels(agent=agent, type="completion").inc(completion_tokens)

    @_never_raise
    def on_llm_error(self, kind: str) -> None:
        """An LLM call failed (transient or not)."""
        self.llm_errors.labels(kind=kind).inc()

    @_never_raise
    def on_llm_paused(self, paused: bool) -> None:
        """Consumption paused or resumed because of the LLM."""
        self.llm_paused.set(1 if paused else 0)

    # -- worker, once per event -----------------------------------------------------------

    @_never_raise
    def on_outcome(self, resultado: Resultado, seconds: float) -> None:
        """Count one finished event; a redelivery counts only as ``reentregada``.

        A redelivered event replays an outcome whose attempts were already counted when it was
        first produced, so counting them again would inflate attempts, verdicts and rejections
        every time Kafka redelivers after a rebalance or crash.
        """
        self.event_duration.observe(seconds)
        if resultado.reentregada:
            self.events.labels(result="reentregada").inc()
            return
        result = _RESULT_BY_DESTINO.get(resultado.destino)
        if result is None:
            log.warning("outcome with unknown destino %r not counted", resultado.destino)
            return
        self.events.labels(result=result).inc()
        attempts = len(resultado.resumen) or resultado.intentos
        self.attempts.inc(attempts)
        self.attempts_per_ficha.observe(attempts)
        for intento in resultado.resumen:
            self._count_attempt(intento)

    def _count_attempt(self, intento: ResumenIntento) -> None:
        """One verdict per attempt, one rejection per criterion, one error per invalid answer."""
        approved = "true" if intento.aprobada else "false"
        self.verdicts.labels(attempt=str(intento.intento), approved=approved).inc()
        for rechazo in intento.rechazos:
            self.rejections.labels(
                criterion=self._criterion_label(rechazo.criterio),
                by="codigo" if rechazo.por == "codigo" else "evaluador",
            ).inc()
        if intento.invalida:
            self.llm_errors.labels(kind="invalid_output").inc()

    def _criterion_label(self, criterio: str) -> str:
        """Criterion ids come from the model's answer: bound the label set to the table."""
        return criterio if criterio in self._known_criteria else OTHER_CRITERION

    @_never_raise
    def on_dlq(self) -> None:
        """An input message went to the DLQ."""
        self.events.labels(result="dlq").inc()

    @_never_raise
    def on_obsoleto(self) -> None:
        """An event was superseded by a newer version of its SKU before it finished."""
        self.events.labels(result="obsoleto").inc()

    @_never_raise
    def on_sample(self) -> None:
        """A published ficha was copied to the human review sample."""
        self.sample.inc()

    @_never_raise
    def set_in_flight(self, n: int) -> None:
        """Fichas being processed right now."""
        self.in_flight.set(n)

    @_never_raise
    def set_lag(self, topic: str, partition: int, lag: int) -> None:
        """Group lag of one assigned partition."""
        self.consumer_lag.labels(topic=topic, partition=str(partition)).set(max(lag, 0))

    @_never_raise
    def clear_lag(self, topic: str, partition: int) -> None:
        """Forget a revoked partition, so this worker stops reporting a frozen lag for it."""
        try:
            self.consumer_lag.remove(topic, str(partition))
        except KeyError:
            pass
