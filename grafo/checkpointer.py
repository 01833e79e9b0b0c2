"""Checkpointer factory: Postgres when ``FICHAS_POSTGRES_DSN`` is set, embedded SQLite if not.

Both savers get a ``JsonPlusSerializer`` whose ``allowed_msgpack_modules`` names the esquemas
types: the state holds only dicts, and the agents write no checkpoints, but should a pydantic
object ever slip into a checkpoint it stays readable when LangGraph starts blocking
unregistered types (``LANGGRAPH_STRICT_MSGPACK``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

ALLOWED_MSGPACK_MODULES = [
    ("esquemas.ficha", "Ficha"),
    ("esquemas.ficha", "Veredicto"),
    ("esquemas.ficha", "Problema"),
]
SQLITE_FILE = "checkpoints.sqlite"


def build_serializer() -> JsonPlusSerializer:
    """The serializer both savers share, with the esquemas types registered."""
    return JsonPlusSerializer(allowed_msgpack_modules=ALLOWED_MSGPACK_MODULES)


@asynccontextmanager
async def open_checkpointer(
    postgres_dsn: str | None, data_dir: Path, pool_size: int = 8
) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the configured saver, create its tables if missing, close it on exit."""
    if postgres_dsn:
        async with _open_postgres(postgres_dsn, pool_size) as saver:
            yield saver
    else:
        async with _open_sqlite(data_dir / SQLITE_FILE) as saver:
            yield saver


@asynccontextmanager
async def _open_postgres(dsn: str, pool_size: int) -> AsyncIterator[BaseCheckpointSaver]:
    """A pooled ``AsyncPostgresSaver``: one connection per concurrent checkpoint write."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(
        dsn,
        min_size=1,
        max_size=pool_size,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    try:
        saver = AsyncPostgresSaver(pool, serde=build_serializer())  # type: ignore[arg-type]
        await saver.setup()
        yield saver
    finally:
        await pool.close()


@asynccontextmanager
async def _open_sqlite(path: Path) -> AsyncIterator[BaseCheckpointSaver]:
    """An ``AsyncSqliteSaver`` on a file under ``FICHAS_DATA_DIR``, in WAL mode."""
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    path.parent.mkdir(parents=True, exist_ok=True)
    conn = await aiosqlite.connect(str(path))
    try:
        await conn.execute("PRAGMA journal_mode=WAL")
        await conn.execute("PRAGMA synchronous=NORMAL")
        saver = AsyncSqliteSaver(conn, serde=build_serializer())
        await saver.setup()
        yield saver
    finally:
        await conn.close()
