"""``grafo.retry``: the one retry loop (graph, worker steps, ``fichas evaluar``)."""

from __future__ import annotations

import random

import pytest

from grafo.retry import Attempts, Backoff, BudgetSpent, retry


class Flaky:
    """Fails ``n`` times with ``exc``, then answers ``"ok"``."""

    def __init__(self, n: int, exc: Exception) -> None:
        self.n = n
        self.exc = exc
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.calls <= self.n:
            raise self.exc
        return "ok"


async def test_waits_honour_retry_after_and_the_loop_ends_on_success() -> None:
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    async def retry_after_5(exc: Exception, attempts: Attempts) -> float | None:
        return 5.0

    call = Flaky(3, ConnectionError("down"))
    assert await retry(call, Backoff(base_s=0.1, cap_s=1.0), retry_after_5, sleep=sleep) == "ok"
    assert call.calls == 4 and slept == [5.0, 5.0, 5.0]


async def test_backoff_is_capped_full_jitter() -> None:
    backoff = Backoff(base_s=1.0, cap_s=4.0, rng=random.Random(7))
    delays = [backoff.delay(n, None) for n in range(1, 30)]
    assert all(0 <= d <= 4.0 for d in delays) and max(delays) > 2.0


async def test_gives_up_when_the_next_wait_would_pass_the_budget() -> None:
    slept: list[float] = []

    async def sleep(s: float) -> None:
        slept.append(s)

    async def retry_after_4(exc: Exception, attempts: Attempts) -> float | None:
        return 4.0

    call = Flaky(100, TimeoutError("slow"))
    with pytest.raises(BudgetSpent) as info:
        await retry(call, Backoff(cap_s=0.0, max_wait_s=10.0), retry_after_4, sleep=sleep)
    assert slept == [4.0, 4.0]  # a third wait would make 12 s > 10 s
    assert info.value.attempts.failures == 3 and isinstance(info.value.__cause__, TimeoutError)


async def test_on_failure_raising_stops_at_once() -> None:
    async def never(exc: Exception, attempts: Attempts) -> float | None:
        raise exc

    call = Flaky(5, ValueError("bad request"))
    with pytest.raises(ValueError):
        await retry(call, Backoff(), never)
    assert call.calls == 1
