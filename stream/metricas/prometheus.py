"""The Prometheus implementation of the sensors: the hooks that update the worker's series.

``grafo`` only calls the ``grafo.Sensor`` hooks and the worker only calls the
``stream.metricas.sensor.WorkerSensor`` hooks; ``PrometheusSensor`` implements both. The series
themselves (names, labels, buckets) are declared in ``stream.metricas.series``; the rule "a
redelivered outcome is counted once" lives here. ``docs/metricas.md`` mirrors both.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
from collections.abc import Callable
from typing import ParamSpec

from prometheus_client import CollectorRegistry

from criterios import CRITERIOS_VERSION, cargar_criterios
from esquemas.constantes import (
    DESTINO_PUBLICADAS,
    DESTINO_REVISION,
    FAMILIA_TODAS,
    MOTIVO_SIN_GARANTIA,
    MUESTREO_MINIMO_DIARIO,
    PUERTA_VEREDICTO,
    ModoPuerta,
)
from esquemas.estado_puerta import EstadoPuerta
from grafo import LogprobsProbe, Resultado, ResumenIntento
from grafo.intentos import contar_rechazos
from stream.metricas.series import (
    AGENTS,
    DECISION_RESULTS,
    LLM_ERROR_KINDS,
    METRIC_NAMES,
    NODES,
    OTHER_CRITERION,
    OUTCOME_RESULTS,
    RESULTS,
    SCORE_STATES,
    STEPS,
    TOKEN_TYPES,
    Series,
    new_registry,
)

log = logging.getLogger(__name__)

P = ParamSpec("P")

__all__ = ["METRIC_NAMES", "PrometheusSensor"]

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
        self.registry: CollectorRegistry = new_registry()
        self.series = Series(self.registry)
        self.series.criteria.info({"version": criterios_version})
        self._known_criteria, criteria_pairs = _criteria_by()
        self._preinitialise(criteria_pairs, max_intentos)
        self._clave_puerta = ""  # the running gate key's id, set by ``on_gate_mode``
        self.series.puerta_sin_certificar.set(0)
        self.series.llm_logprobs.set(math.nan)  # unknown until the start-up probe answers

    def _preinitialise(self, criteria_pairs: list[tuple[str, str]], max_intentos: int) -> None:
        """Create the known label sets at 0 so dashboards and rate() see series from the start."""
        for result in RESULTS:
            self.series.events.labels(result=result)
        for result in DECISION_RESULTS:
            self.series.decisiones.labels(result=result)
        for agent in AGENTS:
            self.series.llm_duration.labels(agent=agent)
            for token_type in TOKEN_TYPES:
                self.series.llm_tokens.labels(agent=agent, type=token_type)
        for kind in LLM_ERROR_KINDS:
            self.series.llm_errors.labels(kind=kind)
        for node in NODES:
            self.series.node_duration.labels(node=node)
        for criterion, by in criteria_pairs:
            self.series.rejections.labels(criterion=criterion, by=by)
        for attempt in range(1, max_intentos + 1):
            for approved in ("true", "false"):
                self.series.verdicts.labels(attempt=str(attempt), approved=approved)
        for step in STEPS:
            for transient in ("true", "false"):
                self.series.step_failures.labels(step=step, transient=transient)
        self.series.llm_paused.set(0)
        self.series.in_flight.set(0)

    # -- grafo.Sensor ---------------------------------------------------------------------

    @_never_raise
    def on_node(self, node: str, seconds: float) -> None:
        """A graph node finished."""
        self.series.node_duration.labels(node=node).observe(seconds)

    @_never_raise
    def on_llm_call(
        self, agent: str, seconds: float, prompt_tokens: int, completion_tokens: int
    ) -> None:
        """An LLM call answered: its latency and the tokens it cost."""
        self.series.llm_duration.labels(agent=agent).observe(seconds)
        if prompt_tokens > 0:
            self.series.llm_tokens.labels(agent=agent, type="prompt").inc(prompt_tokens)
        if completion_tokens > 0:
            self.series.llm_tokens.labels(agent=agent, type="completion").inc(completion_tokens)

    @_never_raise
    def on_llm_error(self, kind: str) -> None:
        """An LLM call failed (transient or not)."""
        self.series.llm_errors.labels(kind=kind).inc()

    @_never_raise
    def on_llm_paused(self, paused: bool) -> None:
        """Consumption paused or resumed because of the LLM."""
        self.series.llm_paused.set(1 if paused else 0)

    # -- worker, once per event -----------------------------------------------------------

    @_never_raise
    def on_outcome(self, resultado: Resultado, seconds: float) -> None:
        """Count one finished event; a redelivery counts only as ``reentregada``.

        A redelivered event replays an outcome whose attempts were already counted when it was
        first produced, so counting them again would inflate attempts, verdicts and rejections
        every time Kafka redelivers after a rebalance or crash.
        """
        self.series.event_duration.observe(seconds)
        if resultado.reentregada:
            self.series.events.labels(result="reentregada").inc()
            return
        result = _RESULT_BY_DESTINO.get(resultado.destino)
        if result is None:
            log.warning("outcome with unknown destino %r not counted", resultado.destino)
            return
        self.series.events.labels(result=result).inc()
        familia = str(resultado.salida.get("familia"))
        self.series.outcomes.labels(family=familia, key=self._clave_puerta, result=result).inc()
        if resultado.salida.get("motivo") == MOTIVO_SIN_GARANTIA:
            self.series.sin_garantia.labels(family=familia, key=self._clave_puerta).inc()
        if resultado.salida.get("muestra_sombra") is True:
            self.series.sombra.labels(family=familia, key=self._clave_puerta).inc()
        attempts = len(resultado.resumen) or resultado.intentos
        self.series.attempts.inc(attempts)
        self.series.attempts_per_ficha.observe(attempts)
        for intento in resultado.resumen:
            self._count_attempt(intento)
            self._count_score(familia, intento)
        for rechazo, n in contar_rechazos(resultado.resumen).items():
            self.series.rejections.labels(
                criterion=self._criterion_label(rechazo.criterio),
                by="codigo" if rechazo.por == "codigo" else "evaluador",
            ).inc(n)

    def _count_attempt(self, intento: ResumenIntento) -> None:
        """One verdict per attempt, one error per invalid answer (rejections: the one count,
        ``grafo.ejecucion.contar_rechazos``)."""
        approved = "true" if intento.aprobada else "false"
        self.series.verdicts.labels(attempt=str(intento.intento), approved=approved).inc()
        if intento.invalida:
            self.series.llm_errors.labels(kind="invalid_output").inc()

    def _count_score(self, familia: str, intento: ResumenIntento) -> None:
        """An evaluator answer with or without a score; an invalid answer is neither."""
        if intento.invalida:
            return
        score = "missing" if intento.puntuacion is None else "present"
        self.series.evaluator_scores.labels(family=familia, score=score).inc()

    def _criterion_label(self, criterio: str) -> str:
        """Criterion ids come from the model's answer: bound the label set to the table."""
        return criterio if criterio in self._known_criteria else OTHER_CRITERION

    @_never_raise
    def on_dlq(self) -> None:
        """An input message went to the DLQ."""
        self.series.events.labels(result="dlq").inc()

    @_never_raise
    def on_obsolete(self) -> None:
        """An event was superseded by a newer version of its SKU before it finished."""
        self.series.events.labels(result="obsoleto").inc()

    @_never_raise
    def on_decision(self, resultado: str) -> None:
        """A person's decision was handled (published, obsolete, nothing to publish, DLQ)."""
        self.series.decisiones.labels(result=resultado).inc()

    @_never_raise
    def on_sample(self, familia: str, muestreo: str) -> None:
        """A published ficha was copied to the human review sample; the daily minimum's own
        draws are counted per family too."""
        self.series.sample.inc()
        if muestreo == MUESTREO_MINIMO_DIARIO:
            self.series.muestra_minima.labels(family=familia).inc()

    @_never_raise
    def on_step_failure(self, step: str, transient: bool) -> None:
        """A worker step failed; transient ones are retried forever, others a few times."""
        self.series.step_failures.labels(
            step=step, transient="true" if transient else "false"
        ).inc()

    @_never_raise
    def set_in_flight(self, n: int) -> None:
        """Fichas being processed right now."""
        self.series.in_flight.set(n)

    @_never_raise
    def set_lag(self, topic: str, partition: int, lag: int) -> None:
        """Group lag of one assigned partition."""
        self.series.consumer_lag.labels(topic=topic, partition=str(partition)).set(max(lag, 0))

    @_never_raise
    def set_oldest_age(self, topic: str, partition: int, seconds: float) -> None:
        """Age of the oldest event not yet handled in one assigned partition."""
        self.series.oldest_age.labels(topic=topic, partition=str(partition)).set(max(seconds, 0))

    @_never_raise
    def clear_lag(self, topic: str, partition: int) -> None:
        """Forget a revoked partition, so this worker stops reporting a frozen lag for it."""
        for gauge in (self.series.consumer_lag, self.series.oldest_age):
            try:
                gauge.remove(topic, str(partition))
            except KeyError:
                pass

    @_never_raise
    def on_logprobs_probe(self, probe: LogprobsProbe) -> None:
        """The start-up probe answered (``grafo.logprobs_probe``): 1, 0, or NaN (not asked)."""
        ok = probe.logprobs_ok
        self.series.llm_logprobs.set(math.nan if ok is None else 1 if ok else 0)

    # -- the publication gate (docs/puerta.md) ----------------------------------------------

    @_never_raise
    def on_gate_mode(self, modo: ModoPuerta, clave: str, familias: tuple[str, ...]) -> None:
        """The worker's gate rule and running key, once at start-up.

        Under ``certificada`` every family's gate series start closed, so a dashboard shows a
        closed gate (not a missing one) until a record opens it; under ``veredicto`` only the
        "uncertified" flag is set: no gate applies.
        """
        anterior, self._clave_puerta = self._clave_puerta, clave
        if anterior and anterior != clave:
            self._olvidar_clave(anterior, familias)
        for familia in familias:
            for score in SCORE_STATES:
                self.series.evaluator_scores.labels(family=familia, score=score)
            for result in OUTCOME_RESULTS:
                self.series.outcomes.labels(family=familia, key=clave, result=result)
            self.series.muestra_minima.labels(family=familia)
        if modo == PUERTA_VEREDICTO:
            self.series.puerta_sin_certificar.set(1)
            return
        self.series.puerta_sin_certificar.set(0)
        for familia in familias:
            self.series.sin_garantia.labels(family=familia, key=clave)
            self.series.sombra.labels(family=familia, key=clave)
            self.set_gate(familia, None)
            self.set_gate_held(familia, False)
        self.set_gate_held(FAMILIA_TODAS, False)

    @_never_raise
    def set_gate(self, familia: str, estado: EstadoPuerta | None) -> None:
        """The gate that governs ``familia`` now (None: no record of the running key)."""
        labels = {"family": familia, "key": self._clave_puerta}
        abierta = estado is not None and estado.abierta and estado.umbral is not None
        umbral = estado.umbral if abierta and estado is not None else None
        cota = estado.cota_inferior if estado is not None else None
        self.series.puerta_abierta.labels(**labels).set(1 if abierta else 0)
        self.series.puerta_umbral.labels(**labels).set(math.nan if umbral is None else umbral)
        self.series.puerta_n.labels(**labels).set(estado.n if estado is not None else 0)
        self.series.puerta_k.labels(**labels).set(estado.k if estado is not None else 0)
        self.series.puerta_cota.labels(**labels).set(math.nan if cota is None else cota)

    def _olvidar_clave(self, clave: str, familias: tuple[str, ...]) -> None:
        """Drop the gate gauges of a key the worker no longer runs (the counters stay)."""
        gauges = (
            self.series.puerta_abierta,
            self.series.puerta_umbral,
            self.series.puerta_n,
            self.series.puerta_k,
            self.series.puerta_cota,
            self.series.puerta_retenida,
        )
        for familia in (*familias, FAMILIA_TODAS):
            for gauge in gauges:
                with contextlib.suppress(KeyError):
                    gauge.remove(familia, clave)

    @_never_raise
    def set_gate_held(self, familia: str, retenida: bool) -> None:
        """Whether a person's hold closes ``familia``'s gate (``*``: the pooled gate's own)."""
        labels = {"family": familia, "key": self._clave_puerta}
        self.series.puerta_retenida.labels(**labels).set(1 if retenida else 0)

    @_never_raise
    def set_gates_suspended(self, suspendida: bool) -> None:
        """Every gate closed while the served model is not verified."""
        self.series.puerta_suspendida.set(1 if suspendida else 0)

    @_never_raise
    def on_key(self, anterior: str, nueva: str, modelo_servido: str, cambio: bool) -> None:
        """The running key and the identity it names; a change under a running worker counts."""
        self.series.modelo_servido.clear()
        self.series.modelo_servido.labels(key=nueva, modelo_servido=modelo_servido).set(1)
        if cambio:
            self.series.modelo_servido_cambios.inc()
