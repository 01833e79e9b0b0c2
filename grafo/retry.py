"""The one retry loop of the project: the graph's LLM calls, the worker's steps, ``fichas evaluar``.

``Backoff`` is the waiting rule (exponential, full jitter, capped, a server's Retry-After when
it is longer, and optionally a budget of total wait); ``retry`` is the loop. What counts as a
failure worth retrying differs per caller, so the caller passes ``on_failure``: it raises to
give up (a failure that retrying does not cure) or returns the Retry-After it read, if any.

Why not ``tenacity`` (a dependency of LangChain, so installed anyway): its stop rule is
decided before the wait is drawn, and the budget here is "give up when the *next* wait would
pass ``max_wait_s``", which needs the drawn wait; its per-call hooks would carry as much code
as this loop. The name ``Backoff`` does not collide with LangGraph's ``RetryPolicy``.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

T = TypeVar("T")


class LLMUnavailable(RuntimeError):
    """The LLM stayed down longer than ``Backoff.max_wait_s``."""


@dataclass
class Backoff:
    """Exponential backoff with full jitter, capped, honouring Retry-After when it is longer."""

    base_s: float = 0.5
    cap_s: float = 30.0
    max_wait_s: float | None = None  # None: retry forever (the worker); a number: give up
    report_each: bool = False  # log every retry at WARNING (one person waiting on one run)
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, failures: int, retry_after_s: float | None) -> float:
        """Seconds to wait before retry number ``failures`` (1-based)."""
        backoff = self.rng.uniform(0, min(self.cap_s, self.base_s * 2 ** (failures - 1)))
        return max(backoff, retry_after_s or 0.0)


@dataclass
class Attempts:
    """What the loop knows of one call so far: failures, total wait, the next wait."""

    failures: int = 0
    waited_s: float = 0.0
    delay_s: float = 0.0


class FailureRule(Protocol):
    """A caller's treatment of the failures a loop does not know itself.

    ``grafo.Procesador`` knows the LLM's failures; the worker passes its step rule
    (``stream.flow.fallos.Reintentos.rule``) for everything else (the checkpointer's database, a
    bug on one event), so one loop retries the graph and both rules apply in it.
    """

    async def on_failure(self, exc: Exception, attempts: Attempts) -> float | None:
        """Raise to give up; else the Retry-After seconds, if any (as ``retry``'s)."""
        ...

    def on_wait(self, exc: Exception, attempts: Attempts) -> None:
        """Just before the wait (to log it)."""
        ...

    def on_success(self) -> None:
        """The call went through (after failures or not)."""
        ...


class BudgetSpent(Exception):
    """The next wait would pass ``Backoff.max_wait_s``; ``__cause__`` is the last failure."""

    def __init__(self, attempts: Attempts, limit_s: float) -> None:
        super().__init__(
            f"{attempts.failures} tries over {attempts.waited_s:.0f} s "
            f"(the next retry would pass the {limit_s:.0f} s limit)"
        )
        self.attempts = attempts
        self.limit_s = limit_s


async def retry(
    call: Callable[[], Awaitable[T]],
    backoff: Backoff,
    on_failure: Callable[[Exception, Attempts], Awaitable[float | None]],
    on_wait: Callable[[Exception, Attempts], None] | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> T:
    """``call()`` until it returns; after each failure ask ``on_failure``, then wait.

    ``on_failure(exc, attempts)`` runs with ``attempts.failures`` already counted; it raises
    to give up, or returns the Retry-After seconds (or None). ``on_wait`` sees the drawn wait
    in ``attempts.delay_s`` just before the sleep (to log it). ``BudgetSpent`` is raised from
    the last failure when the next wait would pass ``backoff.max_wait_s``.
    """
    attempts = Attempts()
    while True:
        try:
            return await call()
        except Exception as exc:
            attempts.failures += 1
            retry_after_s = await on_failure(exc, attempts)
            attempts.delay_s = backoff.delay(attempts.failures, retry_after_s)
            limit = backoff.max_wait_s
            if limit is not None and attempts.waited_s + attempts.delay_s > limit:
                raise BudgetSpent(attempts, limit) from exc
            if on_wait is not None:
                on_wait(exc, attempts)
            attempts.waited_s += attempts.delay_s
            await sleep(attempts.delay_s)
