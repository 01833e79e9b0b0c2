"""The fake LLM's ``max_parallel``: a FIFO gate whose limit a posted script may change."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable


class ParallelLimiter:
    """FIFO gate for `max_parallel` whose limit can change while requests wait.

    `asyncio.Semaphore` cannot be resized, and a config posted at run time must take
    effect on the queue already waiting. Release is synchronous so it is safe in the
    `finally` of a handler that aiohttp is cancelling.
    """

    def __init__(self, limit: Callable[[], int]) -> None:
        self._limit = limit
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.active = 0
        self.peak = 0

    @property
    def queued(self) -> int:
        return sum(1 for waiter in self._waiters if not waiter.done())

    def _has_room(self) -> bool:
        limit = self._limit()
        return limit == 0 or self.active < limit

    def _enter(self) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)

    async def acquire(self) -> None:
        if not self._waiters and self._has_room():
            self._enter()
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted and cancelled at once: hand the slot on
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.active -= 1
        self.wake()

    def wake(self) -> None:
        """Let queued requests in while there is room (after a release or a new limit)."""
        while self._waiters and self._has_room():
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._enter()
                waiter.set_result(None)

    def reset_peak(self) -> None:
        self.peak = self.active
