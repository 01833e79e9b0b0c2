"""The event loop the long-running commands run on: uvloop where installed, asyncio's if not.

The worker is CPU-bound in Python above the event loop, and a good part of that is the loop
itself (the callbacks of hundreds of concurrent HTTP calls, Kafka fetches and graph steps):
uvloop took a sixth off the worker's CPU per ficha (docs/rendimiento.md, item 6). aiokafka,
aiohttp, psycopg's async pool and the worker's signal handlers all run on it, and so does the
test suite's worker. ``asyncio`` stays the fallback where uvloop does not build (Windows).
``freeze_startup_heap`` is the worker's own (docs/rendimiento.md, item 10).
"""

from __future__ import annotations

import asyncio
import gc
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


# Allocations between two collections of the youngest generation (CPython's default: 700).
GC_UMBRAL_JOVEN = 7000


def freeze_startup_heap() -> None:
    """Keep the cyclic garbage collector off what start-up built; collect the young less often.

    The worker's heap after start-up (langchain's and openai's classes, pydantic schemas, the
    language identifier, the lemma dictionary) lives as long as the process and never becomes
    garbage, yet every full collection walked it. ``gc.freeze`` moves it out of the
    collector's sight (reference counting still frees it), and the young threshold goes from
    700 to ``GC_UMBRAL_JOVEN`` allocations, since with 64 fichas in flight 700 is a fraction of
    one graph step. Measured in docs/rendimiento.md (item 10). Called once, by a worker in a
    process of its own, when it is ready and before its first event.
    """
    gc.collect()
    gc.freeze()
    _, medio, viejo = gc.get_threshold()
    gc.set_threshold(GC_UMBRAL_JOVEN, medio, viejo)
