"""Failure classification of the worker's steps: transient retried forever, others bounded."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from aiokafka.errors import KafkaConnectionError, MessageSizeTooLargeError

from grafo import Backoff
from stream.fallos import FalloPermanente, Reintentos, es_transitorio


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
