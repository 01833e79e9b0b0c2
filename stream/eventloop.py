"""The event loop the long-running commands run on: uvloop where installed, asyncio's if not.

Issue 7: the worker is CPU-bound in Python above the event loop, and a good part of that is
the loop itself (scheduling the callbacks of hundreds of concurrent HTTP calls, Kafka fetches
and graph steps). Measured with ``python -m bench.run`` on the same machine and commit:
uvloop took the worker from 28.5 to 23.8 ms of CPU per ficha and from 32.3 to 38.0 fichas/s
(200 ms per LLM call, cap 64). aiokafka, aiohttp, psycopg's async pool and the signal
handlers of ``stream.worker`` all run on it; the test suite runs the worker on it.
``asyncio`` stays the fallback where uvloop does not build (Windows).
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def run(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to completion on a fresh loop, like ``asyncio.run``."""
    try:
        import uvloop
    except ImportError:  # pragma: no cover - uvloop is a dependency on Linux and macOS
        return asyncio.run(main)
    return uvloop.run(main)


def loop_name() -> str:
    """Name of the running loop's implementation, for the start-up log line."""
    return type(asyncio.get_running_loop()).__module__.split(".")[0]
