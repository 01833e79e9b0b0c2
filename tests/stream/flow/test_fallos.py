"""Failure classification of the worker's steps: transient retried forever, others bounded."""

from __future__ import annotations

import sqlite3
from types import SimpleNamespace
from typing import Any, cast

import psycopg
import pytest
from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError

from esquemas import EventoCambio
from grafo import Backoff, Procesador
from harness.eventos import evento_dict
from stream.flow.fallos import FalloPermanente, Reintentos, es_transitorio


@pytest.mark.parametrize(
    "exc",
    [
        KafkaConnectionError(),
        ConnectionRefusedError(),
        TimeoutError(),
        psycopg.OperationalError("server closed the connection"),
        sqlite3.OperationalError("database is locked"),
    ],
)
def test_dependency_failures_are_transient(exc: BaseException) -> None:
    assert es_transitorio(exc)


@pytest.mark.parametrize(
    "exc",
    [
        TypeError("can not serialize 'int' object"),
        psycopg.errors.NumericValueOutOfRange("integer out of range"),
        MessageSizeTooLargeError(),
        KeyError("sku"),
    ],
)
def test_other_failures_are_not(exc: BaseException) -> None:
    assert not es_transitorio(exc)


async def _no_sleep(_: float) -> None:
    return None


async def test_a_permanent_failure_gives_up_after_three_tries() -> None:
    calls: list[str] = []
    seen: list[tuple[str, bool]] = []

    async def poison() -> None:
        calls.append("x")
        raise TypeError("can not serialize")

    steps = Reintentos(Backoff(), lambda s, t: seen.append((s, t)), lambda s: None, sleep=_no_sleep)
    with pytest.raises(FalloPermanente) as info:
        await steps.run(poison, "graph")
    assert len(calls) == 3 and isinstance(info.value.causa, TypeError)
    assert seen == [("graph", False)] * 3


async def test_a_transient_failure_is_retried_past_the_bound_until_it_clears() -> None:
    calls: list[str] = []
    recovered: list[str] = []

    async def flaky() -> str:
        calls.append("x")
        if len(calls) < 10:
            raise psycopg.OperationalError("connection refused")
        return "ok"

    steps = Reintentos(Backoff(), lambda s, t: None, recovered.append, sleep=_no_sleep)
    assert await steps.run(flaky, "store") == "ok"
    assert len(calls) == 10 and recovered == ["store"]


class _Graph:
    """A compiled graph whose checkpoint reads fail ``outage`` times, whose run raises ``bug``
    every time when set; otherwise it ends with a published outcome."""

    checkpointer = None

    def __init__(self, outage: int = 0, bug: Exception | None = None) -> None:
        self.outage = outage
        self.bug = bug
        self.runs = 0

    async def aget_state(self, config: Any) -> Any:
        if self.outage:
            self.outage -= 1
            raise psycopg.OperationalError("connection refused")
        return SimpleNamespace(values={}, next=())

    async def ainvoke(self, entrada: Any, config: Any, durability: str) -> dict[str, Any]:
        self.runs += 1
        if self.bug is not None:
            raise self.bug
        registro = {"sku": "S", "event_id": "e-1", "version": 1, "intentos": 1}
        return {"salida": {"destino": "fichas.publicadas", "evento": registro}}


def _procesador(graph: _Graph) -> Procesador:
    return Procesador(cast(Any, graph), policy=Backoff(base_s=0.0, cap_s=0.0), sleep=_no_sleep)


async def test_the_graph_has_one_retry_loop_that_applies_the_worker_rule() -> None:
    """A database outage under the graph is retried in Procesador's loop by the worker's rule
    (counted as transient, recovered once), not by a second loop around it."""
    seen: list[tuple[str, bool]] = []
    recovered: list[str] = []
    steps = Reintentos(Backoff(), lambda s, t: seen.append((s, t)), recovered.append)
    graph = _Graph(outage=4)
    resultado = await _procesador(graph).procesar(
        EventoCambio.model_validate(evento_dict("S")), steps.rule("graph")
    )
    assert resultado.sku == "S" and graph.runs == 1
    assert seen == [("graph", True)] * 4 and recovered == ["graph"]


async def test_a_bug_in_the_graph_gives_up_after_three_tries_of_the_one_loop() -> None:
    steps = Reintentos(Backoff(), lambda s, t: None, lambda s: None)
    graph = _Graph(bug=TypeError("can not serialize"))
    with pytest.raises(FalloPermanente) as info:
        await _procesador(graph).procesar(
            EventoCambio.model_validate(evento_dict("S")), steps.rule("graph")
        )
    assert graph.runs == 3 and isinstance(info.value.causa, TypeError)


async def test_without_a_rule_a_bug_is_raised_at_once() -> None:
    graph = _Graph(bug=TypeError("can not serialize"))
    with pytest.raises(TypeError):
        await _procesador(graph).procesar(EventoCambio.model_validate(evento_dict("S")))
    assert graph.runs == 1
