"""Which failures of a worker step are transient (retry forever) and which are not (give up).

A transient failure says "a dependency is not answering right now": the broker, the database,
the network, the LLM past its own retries. Retrying cures it, so the step is retried with
backoff forever and the offset stays pending: nothing is lost, and the outage shows in the
metrics and in ``/health/ready``'s reason. Anything else (a value a column or the serializer
refuses, a bug on one event) will fail the same way every time: the step is tried
``MAX_FALLOS`` times, then the event goes to the DLQ as ``error_procesamiento`` and its lane,
its partition's commit and the worker go on.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiokafka.errors import KafkaError, MessageSizeTooLargeError, RecordTooLargeError

from grafo import Backoff, LLMUnavailable
from grafo.retry import Attempts, retry
from stream.emitter import NotOwner

T = TypeVar("T")
log = logging.getLogger(__name__)

MAX_FALLOS = 3
_KAFKA_PERMANENT = (MessageSizeTooLargeError, RecordTooLargeError)


class FalloPermanente(Exception):
    """A step failed ``MAX_FALLOS`` times with a non-transient error; ``causa`` is the last."""

    def __init__(self, paso: str, causa: BaseException) -> None:
        super().__init__(f"{paso}: {type(causa).__name__}: {causa}")
        self.paso = paso
        self.causa = causa


def es_transitorio(exc: BaseException) -> bool:
    """True for failures of a dependency that retrying cures."""
    if isinstance(exc, _KAFKA_PERMANENT):
        return False
    if isinstance(exc, KafkaError | LLMUnavailable | ConnectionError | TimeoutError):
        return True
    if isinstance(exc, sqlite3.OperationalError):  # locked, busy, disk I/O
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return False
    # OperationalError: connection lost or refused, pool timeout, statement timeout.
    return isinstance(exc, psycopg.OperationalError | psycopg.errors.AdminShutdown)


class Reintentos:
    """Runs the worker's steps through ``grafo.retry`` with the classification above."""

    def __init__(
        self,
        backoff: Backoff,
        on_failure: Callable[[str, bool], None],
        on_recovered: Callable[[str], None],
        max_fallos: int = MAX_FALLOS,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self._backoff = backoff
        self._on_failure = on_failure
        self._on_recovered = on_recovered
        self._max_fallos = max_fallos
        self._sleep = sleep

    async def run(self, call: Callable[[], Awaitable[T]], paso: str, acotado: bool = True) -> T:
        """``call()`` until it succeeds; raise ``FalloPermanente`` after too many hard failures.

        ``acotado=False`` retries every failure forever: for a step that must happen whatever
        the event (writing a DLQ record). ``NotOwner`` is never retried: the partition is gone.
        """
        permanent = 0
        transient = failed = False

        async def on_failure(exc: Exception, attempts: Attempts) -> None:
            nonlocal permanent, transient, failed
            if isinstance(exc, NotOwner):
                raise exc
            failed = True
            transient = es_transitorio(exc)
            self._on_failure(paso, transient)
            if not transient:
                permanent += 1
                if acotado and permanent >= self._max_fallos:
                    raise FalloPermanente(paso, exc) from exc
            return None

        def on_wait(exc: Exception, attempts: Attempts) -> None:
            log.warning(
                "%s failed (%s: %s, %s); retrying in %.1f s",
                paso,
                type(exc).__name__,
                exc,
                "transient" if transient else f"{permanent}/{self._max_fallos}",
                attempts.delay_s,
            )

        result = await retry(call, self._backoff, on_failure, on_wait, self._sleep)
        if failed:
            self._on_recovered(paso)
        return result
