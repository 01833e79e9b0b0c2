"""Observation hooks of the loop: an interface, and a no-op implementation.

As in faust's sensors, the graph only calls these hooks; what they do (Prometheus counters,
logs) is a plug-in chosen by the caller. ``grafo`` therefore records nothing itself and knows
nothing of Prometheus or Kafka; ``stream.metricas.prometheus`` implements the Prometheus sensor.
"""

from __future__ import annotations

from typing import Protocol


class Sensor(Protocol):
    """What the loop reports while it runs. Every method must be cheap and never raise."""

    def on_node(self, node: str, seconds: float) -> None:
        """A graph node finished in ``seconds``."""

    def on_llm_call(
        self, agent: str, seconds: float, prompt_tokens: int, completion_tokens: int
    ) -> None:
        """An agent's model call answered (valid or not) after ``seconds``."""

    def on_llm_error(self, kind: str) -> None:
        """A model call failed; ``kind`` as in ``grafo.errores.LLMFailure.kind``."""

    def on_llm_paused(self, paused: bool) -> None:
        """The LLM went down (calls are being retried) or came back."""


class NullSensor:
    """The default: observe nothing."""

    def on_node(self, node: str, seconds: float) -> None:
        """Ignore."""

    def on_llm_call(
        self, agent: str, seconds: float, prompt_tokens: int, completion_tokens: int
    ) -> None:
        """Ignore."""

    def on_llm_error(self, kind: str) -> None:
        """Ignore."""

    def on_llm_paused(self, paused: bool) -> None:
        """Ignore."""
