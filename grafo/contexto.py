"""Which event (and which attempt) the code running now is about, for every log line.

Context variables follow asyncio tasks: a value set where an event's handling starts is seen
by every coroutine and task that handling creates (graph nodes, agent calls), and by nothing
else. The logging set-up (``infra.logs``) reads them, so no function has to pass a SKU
around just to log it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

EVENTO: ContextVar[dict[str, Any] | None] = ContextVar("fichas_evento", default=None)
INTENTO: ContextVar[int | None] = ContextVar("fichas_intento", default=None)


@contextmanager
def sobre_evento(sku: str, event_id: str, version: int) -> Iterator[None]:
    """Every log line inside the block carries this event's sku, event_id and version."""
    token = EVENTO.set({"sku": sku, "event_id": event_id, "version": version})
    try:
        yield
    finally:
        EVENTO.reset(token)


def en_intento(intento: int) -> None:
    """Mark the attempt the current task is on (a graph node runs in its own task)."""
    INTENTO.set(intento)


def campos() -> dict[str, Any]:
    """The fields of the current event for a log line; empty outside any event."""
    evento = EVENTO.get()
    if evento is None:
        return {}
    intento = INTENTO.get()
    return evento if intento is None else {**evento, "intento": intento}
