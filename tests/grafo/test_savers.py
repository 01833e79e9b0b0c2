"""Conformance of every saver ``open_checkpointer`` can return, through the async API.

The graph only uses ``aget_tuple``, ``aput``, ``aput_writes`` (and ``alist`` through state
history); the embedded ``InlineSqliteSaver`` and ``AsyncPostgresSaver`` must answer the same.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver, empty_checkpoint

from grafo.checkpointer import SQLITE_FILE, InlineSqliteSaver, open_checkpointer

SAVERS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.fixture(params=SAVERS)
async def saver(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[BaseCheckpointSaver]:
    dsn = request.getfixturevalue("postgres_dsn") if request.param == "postgres" else None
    async with open_checkpointer(dsn, tmp_path) as opened:
        yield opened


def _config(thread: str, checkpoint_id: str | None = None) -> RunnableConfig:
    configurable: dict[str, Any] = {"thread_id": thread, "checkpoint_ns": ""}
    if checkpoint_id is not None:
        configurable["checkpoint_id"] = checkpoint_id
    return {"configurable": configurable}


async def _put(
    saver: BaseCheckpointSaver, thread: str, parent: str | None, step: int, value: str
) -> str:
    checkpoint = empty_checkpoint()
    checkpoint["channel_values"] = {"ficha": {"titulo": value}, "intentos": step}
    checkpoint["channel_versions"] = {"ficha": step + 1, "intentos": step + 1}
    saved = await saver.aput(
        _config(thread, parent),
        checkpoint,
        {"source": "loop", "step": step, "parents": {}},
        {"ficha": step + 1, "intentos": step + 1},
    )
    return str(saved["configurable"]["checkpoint_id"])


async def test_put_then_get_returns_the_same_checkpoint(saver: BaseCheckpointSaver) -> None:
    thread = f"conf-{uuid.uuid4()}"
    first = await _put(saver, thread, None, 0, "uno")
    second = await _put(saver, thread, first, 1, "dos")

    latest = await saver.aget_tuple(_config(thread))
    assert latest is not None
    assert latest.config["configurable"]["checkpoint_id"] == second
    assert latest.checkpoint["channel_values"]["ficha"] == {"titulo": "dos"}
    assert latest.metadata["step"] == 1
    assert latest.parent_config is not None
    assert latest.parent_config["configurable"]["checkpoint_id"] == first

    older = await saver.aget_tuple(_config(thread, first))
    assert older is not None and older.checkpoint["channel_values"]["intentos"] == 0
    assert await saver.aget_tuple(_config(f"conf-{uuid.uuid4()}")) is None


async def test_pending_writes_come_back_in_order(saver: BaseCheckpointSaver) -> None:
    thread = f"conf-{uuid.uuid4()}"
    checkpoint_id = await _put(saver, thread, None, 0, "uno")
    config = _config(thread, checkpoint_id)
    await saver.aput_writes(config, [("ficha", {"titulo": "w"}), ("intentos", 1)], "task-1")
    await saver.aput_writes(config, [("historial", [{"intento": 1}])], "task-2")

    tupla = await saver.aget_tuple(config)
    assert tupla is not None
    assert sorted(tupla.pending_writes or []) == sorted(
        [
            ("task-1", "ficha", {"titulo": "w"}),
            ("task-1", "intentos", 1),
            ("task-2", "historial", [{"intento": 1}]),
        ]
    )


async def test_list_is_newest_first_with_limit_and_before(saver: BaseCheckpointSaver) -> None:
    thread = f"conf-{uuid.uuid4()}"
    ids: list[str] = []
    parent = None
    for step in range(4):
        parent = await _put(saver, thread, parent, step, f"v{step}")
        ids.append(parent)

    listed = [t.config["configurable"]["checkpoint_id"] async for t in saver.alist(_config(thread))]
    assert listed == ids[::-1]
    limited = [
        t.config["configurable"]["checkpoint_id"]
        async for t in saver.alist(_config(thread), limit=2)
    ]
    assert limited == ids[::-1][:2]
    before = [
        t.config["configurable"]["checkpoint_id"]
        async for t in saver.alist(_config(thread), before=_config(thread, ids[2]))
    ]
    assert before == [ids[1], ids[0]]


async def test_delete_thread_removes_only_that_thread(saver: BaseCheckpointSaver) -> None:
    borrado, otro = f"conf-{uuid.uuid4()}", f"conf-{uuid.uuid4()}"
    checkpoint_id = await _put(saver, borrado, None, 0, "uno")
    await saver.aput_writes(_config(borrado, checkpoint_id), [("intentos", 1)], "t")
    await _put(saver, otro, None, 0, "otro")

    await saver.adelete_thread(borrado)
    assert await saver.aget_tuple(_config(borrado)) is None
    assert [t async for t in saver.alist(_config(borrado))] == []
    assert await saver.aget_tuple(_config(otro)) is not None


async def test_sqlite_runs_every_statement_on_the_loop_thread_and_persists(
    tmp_path: Path,
) -> None:
    """No hand-off to another thread (the point of InlineSqliteSaver), and a reopen reads it."""
    threads: set[int] = set()
    async with open_checkpointer(None, tmp_path) as saver:
        assert isinstance(saver, InlineSqliteSaver)
        saver.conn.set_trace_callback(lambda _sql: threads.add(threading.get_ident()))
        checkpoint_id = await _put(saver, "persist", None, 0, "uno")
        await saver.aput_writes(_config("persist", checkpoint_id), [("intentos", 1)], "t")
        assert await saver.aget_tuple(_config("persist")) is not None
        saver.conn.set_trace_callback(None)
    assert threads == {threading.get_ident()}
    assert (tmp_path / SQLITE_FILE).exists()

    async with open_checkpointer(None, tmp_path) as reopened:
        tupla = await reopened.aget_tuple(_config("persist"))
    assert tupla is not None
    assert tupla.config["configurable"]["checkpoint_id"] == checkpoint_id
    assert tupla.pending_writes == [("t", "intentos", 1)]
