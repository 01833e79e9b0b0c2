"""The candidate loop's metrics: its own ``grafo.Sensor`` and its run counters.

The candidate's graph reports to ``SensorCandidata``, never to the live ``PrometheusSensor``:
its LLM calls, outages and nodes must not move the live series (``fichas_llm_paused`` would
pause nothing, and dashboards would count shadow work as live work). It counts the candidate's
LLM calls in total and per run: ``por_ejecucion`` opens a counter in a context variable that
the run's task (and every task the graph starts from it) sees, so concurrent runs never mix.
The series are declared in ``stream.metricas.series``; docs/metricas.md lists them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from stream.metricas.prometheus import _never_raise
from stream.metricas.series import AGENTS, CANDIDATE_LOSS_REASONS, CANDIDATE_SKIP_REASONS, Series

_LLAMADAS: ContextVar[list[int] | None] = ContextVar("fichas_candidata_llamadas", default=None)


class SensorCandidata:
    """The candidate graph's sensor and the candidate runner's hooks, over the worker's series."""

    def __init__(self, series: Series) -> None:
        self.series = series
        for agent in AGENTS:
            series.candidata_llm_calls.labels(agent=agent)
        for reason in CANDIDATE_SKIP_REASONS:
            series.candidata_skipped.labels(reason=reason)
        for reason in CANDIDATE_LOSS_REASONS:
            series.candidata_lost.labels(reason=reason)
        series.candidata_in_flight.set(0)

    # -- grafo.Sensor: only the calls count; the rest is the live loop's to report ----------

    def on_node(self, node: str, seconds: float) -> None:
        """Not reported: node latency is a live-loop figure."""

    @_never_raise
    def on_llm_call(
        self, agent: str, seconds: float, prompt_tokens: int, completion_tokens: int
    ) -> None:
        """One candidate LLM call: in the total, and in the current run's count."""
        self.series.candidata_llm_calls.labels(agent=agent).inc()
        llamadas = _LLAMADAS.get()
        if llamadas is not None:
            llamadas[0] += 1

    def on_llm_error(self, kind: str) -> None:
        """Not reported: a failed candidate call shows as a lost run if it gives up."""

    def on_llm_paused(self, paused: bool) -> None:
        """Not reported: the candidate's outages never pause consumption."""

    # -- the runner (stream.candidata.bucle)
    # --------------------------------------------------------

    @contextmanager
    def por_ejecucion(self) -> Iterator[None]:
        """Count the LLM calls of one run (the block), observed once when it ends."""
        llamadas = [0]
        token = _LLAMADAS.set(llamadas)
        try:
            yield
        finally:
            _LLAMADAS.reset(token)
            self.series.candidata_llm_calls_per_event.observe(llamadas[0])

    @_never_raise
    def on_started(self, en_curso: int) -> None:
        """A candidate run started; ``en_curso`` are in flight now."""
        self.series.candidata_started.inc()
        self.series.candidata_in_flight.set(en_curso)

    @_never_raise
    def on_ended(self, en_curso: int) -> None:
        """A candidate run ended (written or lost); ``en_curso`` are left."""
        self.series.candidata_in_flight.set(en_curso)

    @_never_raise
    def on_skipped(self, reason: str) -> None:
        """An event routed to the candidate got no run (``CANDIDATE_SKIP_REASONS``)."""
        self.series.candidata_skipped.labels(reason=reason).inc()

    @_never_raise
    def on_written(self) -> None:
        """A candidate review item was written."""
        self.series.candidata_written.inc()

    @_never_raise
    def on_lost(self, reason: str) -> None:
        """A started candidate run wrote nothing (``CANDIDATE_LOSS_REASONS``)."""
        self.series.candidata_lost.labels(reason=reason).inc()

    @_never_raise
    def on_key(self, anterior: str, nueva: str, modelo_servido: str, cambio: bool) -> None:
        """The candidate's key and the served identity it names (``stream.gobierno.identidad``)."""
        self.series.candidata_key.clear()
        self.series.candidata_key.labels(key=nueva, modelo_servido=modelo_servido).set(1)
