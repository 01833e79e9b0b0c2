"""Where an asyncio task waits: its await chain, for the log line of a task cut short.

A task stuck on an await that never returns (a Kafka client after a broker restart: docs/
stream.md, «Two workers silent after a lone broker's restart») is cancelled by the grace period
or the stop, and until now the log said only how many. ``await_chain`` names each coroutine from
the task's own down to the innermost one, with its line, and what that one awaits, so the next
occurrence says where it hung. ``Task.get_stack`` gives only the outermost frame of a suspended
task; this walks ``cr_await`` instead. Read-only: safe on any task of the running loop.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

MAX_DEPTH = 24  # a deeper chain is cut, with "..." at its end


def await_chain(task: asyncio.Future[Any]) -> str:
    """``outer (file.py:12) -> inner (other.py:40) -> awaits Future``; "" for a task that
    is done or not a coroutine's."""
    if task.done() or not isinstance(task, asyncio.Task):
        return ""
    steps: list[str] = []
    awaited: Any = task.get_coro()
    while awaited is not None and len(steps) < MAX_DEPTH:
        frame = _frame(awaited)
        if frame is None:
            steps.append(f"awaits {_name(awaited)}")
            return " -> ".join(steps)
        code = frame.f_code
        steps.append(f"{code.co_name} ({Path(code.co_filename).name}:{frame.f_lineno})")
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    if awaited is not None:
        steps.append("...")
    return " -> ".join(steps)


def _frame(awaitable: Any) -> Any:
    """The suspended frame of a coroutine or generator-based awaitable; None for a future."""
    return getattr(awaitable, "cr_frame", None) or getattr(awaitable, "gi_frame", None)


def _name(awaited: Any) -> str:
    """What the innermost coroutine awaits: "Future" for a future (its C iterator included),
    else the type's name."""
    name = type(awaited).__name__
    return "Future" if name == "FutureIter" else name
