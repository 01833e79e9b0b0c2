"""The reviewer app's background rounds: the gate watcher (closing) and the gate opener.

Both recompute from the store and write to ``fichas.puerta``; both must survive a failed round
(Kafka or the database down for a moment) without stopping the app, and retry on the next
round. One place says how, so the two cannot drift apart.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


async def sin_propagar(paso: Callable[[], Awaitable[object]], que: str) -> None:
    """Run one round; a failure is logged (the next round retries) instead of raised."""
    try:
        await paso()
    except asyncio.CancelledError:
        raise
    except Exception:
        log.exception("%s failed; will retry", que)


async def en_rondas(paso: Callable[[], Awaitable[object]], cada_s: float, que: str) -> None:
    """Run ``paso`` now and every ``cada_s`` seconds until cancelled, never raising its errors."""
    while True:
        await sin_propagar(paso, que)
        await asyncio.sleep(cada_s)
