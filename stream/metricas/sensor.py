"""What the worker reports while it runs: an interface, as ``grafo.sensores`` is for the graph.

The worker takes any ``WorkerSensor``; ``stream.metricas.prometheus.PrometheusSensor`` is the one it
runs with. Every hook must be cheap and never raise.
"""

from __future__ import annotations

from typing import Protocol

from prometheus_client import CollectorRegistry

from esquemas.constantes import ModoPuerta
from esquemas.estado_puerta import EstadoPuerta
from grafo import Resultado, Sensor


class WorkerSensor(Sensor, Protocol):
    """The graph's hooks plus the worker's per-event and per-partition hooks."""

    registry: CollectorRegistry

    def on_outcome(self, resultado: Resultado, seconds: float) -> None:
        """One event finished with an outcome ``seconds`` after it was received."""

    def on_dlq(self) -> None:
        """An input message went to the DLQ."""

    def on_obsolete(self) -> None:
        """An event was superseded by a newer version of its SKU."""

    def on_decision(self, resultado: str) -> None:
        """A person's decision was handled: ``publicada``, ``obsoleta``, ``sin_publicacion`` or
        ``rechazada`` (``stream.flow.decisiones.Aplicacion``)."""

    def on_sample(self, familia: str, muestreo: str) -> None:
        """A published ficha of ``familia`` was copied to the human-review sample, by the draw
        ``muestreo`` (``proporcion`` or ``minimo_diario``, ``stream.flow.muestreo``)."""

    def set_in_flight(self, n: int) -> None:
        """Fetched messages not yet fully handled."""

    def set_lag(self, topic: str, partition: int, lag: int) -> None:
        """Group lag of one assigned partition."""

    def set_oldest_age(self, topic: str, partition: int, seconds: float) -> None:
        """Age of the oldest event of one assigned partition not yet handled."""

    def clear_lag(self, topic: str, partition: int) -> None:
        """A partition is no longer assigned to this worker: drop its lag and age series."""

    def on_step_failure(self, step: str, transient: bool) -> None:
        """A worker step (``store``, ``graph``, ``produce``) failed and will be retried or not."""

    def on_gate_mode(self, modo: ModoPuerta, clave: str, familias: tuple[str, ...]) -> None:
        """At start-up: the gate rule (``FICHAS_PUERTA``), the running key's id, the families."""

    def set_gate(self, familia: str, estado: EstadoPuerta | None) -> None:
        """The gate that governs ``familia`` now (None: closed, no record of the running key)."""

    def set_gate_held(self, familia: str, retenida: bool) -> None:
        """Whether a person's hold closes ``familia``'s gate (or ``*``'s own) now."""

    def set_gates_suspended(self, suspendida: bool) -> None:
        """Every gate closed while the served model is not verified
        (``stream.gobierno.identidad``)."""

    def on_key(self, anterior: str, nueva: str, modelo_servido: str, cambio: bool) -> None:
        """The running key is now ``nueva`` (the server serves ``modelo_servido``); ``cambio``:
        the served model changed under a running worker (not its first reading)."""
