"""Which failures of a worker step are transient (retry forever) and which are not (give up).

A transient failure says "a dependency is not answering right now": the broker, the database,
the network, the LLM past its own retries. Retrying cures it, so the step is retried with
backoff forever and the offset stays pending: nothing is lost, and the outage shows in the
metrics and in ``/health/ready``'s reason. Anything else (a value a column or the serializer
refuses, a bug on one event) will fail the same way every time: the step is tried
``MAX_FALLOS`` times, then the event goes to the DLQ as ``error_procesamiento`` and its lane,
its partition's commit and the worker go on. A third kind is neither: Kafka refusing the
worker (a missing ACL, ``infra.kafka.access``) is a configuration error, so the step is never
given up on (no DLQ) and the worker is told to stop (``on_refused``; it exits 2).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiokafka.errors import KafkaError, MessageSizeTooLargeError, RecordTooLargeError

from grafo import Backoff, LLMUnavailable
from grafo.retry import Attempts, retry
from infra.kafka.access import AUTHORIZATION_ERRORS
from migraciones import database_unavailable
from stream.commit.producers import NotOwner

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
    return database_unavailable(exc)


class Reintentos:
    """Runs the worker's steps through ``grafo.retry`` with the classification above."""

    def __init__(
        self,
        backoff: Backoff,
        on_failure: Callable[[str, bool], None],
        on_recovered: Callable[[str], None],
        max_fallos: int = MAX_FALLOS,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        on_refused: Callable[[Exception], None] | None = None,
    ) -> None:
        self._backoff = backoff
        self._on_failure = on_failure
        self._on_recovered = on_recovered
        self._max_fallos = max_fallos
        self._sleep = sleep
        self._on_refused = on_refused

    def rule(self, paso: str, acotado: bool = True) -> ReglaDePaso:
        """The rule of one run of step ``paso``, for a loop that retries it itself
        (``grafo.Procesador``, whose own rule covers the LLM's failures)."""
        return ReglaDePaso(
            paso, acotado, self._max_fallos, self._on_failure, self._on_recovered, self._on_refused
        )

    async def run(self, call: Callable[[], Awaitable[T]], paso: str, acotado: bool = True) -> T:
        """``call()`` until it succeeds; raise ``FalloPermanente`` after too many hard failures.

        ``acotado=False`` retries every failure forever: for a step that must happen whatever
        the event (writing a DLQ record). ``NotOwner`` is never retried: the partition is gone.
        """
        regla = self.rule(paso, acotado)
        result = await retry(call, self._backoff, regla.on_failure, regla.on_wait, self._sleep)
        regla.on_success()
        return result


class ReglaDePaso:
    """The classification above applied to one run of one step (a ``grafo.FailureRule``)."""

    def __init__(
        self,
        paso: str,
        acotado: bool,
        max_fallos: int,
        on_failure: Callable[[str, bool], None],
        on_recovered: Callable[[str], None],
        on_refused: Callable[[Exception], None] | None = None,
    ) -> None:
        self._paso = paso
        self._acotado = acotado
        self._max_fallos = max_fallos
        self._count = on_failure
        self._recovered = on_recovered
        self._refused = on_refused
        self._refusal = False
        self._permanent = 0
        self._transient = False
        self._failed = False

    async def on_failure(self, exc: Exception, attempts: Attempts) -> float | None:
        """Count the failure; raise ``NotOwner`` as it is, ``FalloPermanente`` when it is
        the ``max_fallos``-th non-transient one of a bounded step."""
        if isinstance(exc, NotOwner):
            raise exc
        self._failed = True
        if self._refused is not None and isinstance(exc, AUTHORIZATION_ERRORS):
            self._refusal = True  # the stop cancels the retries; its one line says why
            self._refused(exc)
            return None
        self._transient = es_transitorio(exc)
        self._count(self._paso, self._transient)
        if not self._transient:
            self._permanent += 1
            if self._acotado and self._permanent >= self._max_fallos:
                raise FalloPermanente(self._paso, exc) from exc
        return None

    def on_wait(self, exc: Exception, attempts: Attempts) -> None:
        """One WARNING per retry, with the classification (none for a refusal: the worker
        stops and its exit line names the missing ACL)."""
        if self._refusal:
            return
        log.warning(
            "%s failed (%s: %s, %s); retrying in %.1f s",
            self._paso,
            type(exc).__name__,
            exc,
            "transient" if self._transient else f"{self._permanent}/{self._max_fallos}",
            attempts.delay_s,
        )

    def on_success(self) -> None:
        """The step went through: a step that was failing is recovered."""
        if self._failed:
            self._recovered(self._paso)
