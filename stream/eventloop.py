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

    Issue 33. The worker's heap after start-up holds hundreds of MB of objects that live as
    long as the process (langchain and openai's classes, pydantic schemas, the language
    identifier and the Spanish lemma dictionary of ``criterios.recursos``). CPython's full
    collection walks all of them every time the objects promoted since the last one reach a
    quarter of them, and at an LLM latency of a second every ficha's state lives through
    two young collections and gets promoted: the full collections then cost milliseconds
    per ficha for nothing, since none of that heap ever becomes garbage. ``gc.freeze`` moves it
    out of the collector's sight (it is still freed by reference counting, and nothing of it
    is freed at all in a worker). The young threshold goes from 700 to ``GC_UMBRAL_JOVEN``
    allocations: with 64 fichas in flight, 700 allocations is a fraction of one graph step,
    so every young collection met objects that would have died a moment later; measured in
    ``bench.perfil --clase 3`` (docs/rendimiento.md), young collections went from about 1 ms to
    0.3 ms of CPU per ficha. Called once, when the worker is ready and before its first event.
    """
    gc.collect()
    gc.freeze()
    _, medio, viejo = gc.get_threshold()
    gc.set_threshold(GC_UMBRAL_JOVEN, medio, viejo)
