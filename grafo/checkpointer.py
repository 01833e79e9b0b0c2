"""Checkpointer factory: Postgres when ``FICHAS_POSTGRES_DSN`` is set, embedded SQLite if not.

The embedded saver is ``InlineSqliteSaver``: LangGraph's own ``SqliteSaver`` (same tables, same
SQL, same serializer) with its async methods running the sync ones on the event loop's thread,
instead of ``AsyncSqliteSaver``'s thread hop per statement, on a WAL file with
``synchronous=NORMAL``; PostgreSQL gets ``AsyncPostgresSaver`` on ``migraciones.open_pool``.

Invariants: both savers pass the same conformance suite (tests/grafo/test_savers.py) and get a
``JsonPlusSerializer`` whose ``allowed_msgpack_modules`` names the ``esquemas`` types; the
library's ``setup()`` runs only as ``preparar_postgres`` / ``preparar_sqlite``, under the
schema lock of ``migraciones.cerrojo`` (``fichas migrar``, and ``open_checkpointer`` before
serving), because ``AsyncPostgresSaver.setup()`` races with itself. Why each: docs/grafo.md,
"Checkpoints" (the CPU, the durability, langgraph issue #5925).
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.checkpoint.sqlite import SqliteSaver

from migraciones import (
    PG_CONNECT_TIMEOUT_S,
    Cambio,
    Esquema,
    Synchronous,
    cerrojo_postgres,
    cerrojo_sqlite,
    connect_sqlite,
    open_pool,
    version_postgres,
)

ALLOWED_MSGPACK_MODULES = [
    ("esquemas.ficha", "Ficha"),
    ("esquemas.ficha", "Veredicto"),
    ("esquemas.ficha", "Problema"),
]
SQLITE_FILE = "checkpoints.sqlite"
SQLITE_SYNCHRONOUS: Synchronous = "normal"  # no fsync per commit: why, the docstring above
ALMACEN = "checkpoints"
# The library's own migrations table on PostgreSQL (its migrations are its own, not ours).
MIGRACIONES_POSTGRES = Esquema(ALMACEN, "checkpoint_migrations", ())


def build_serializer() -> JsonPlusSerializer:
    """The serializer both savers share, with the esquemas types registered."""
    return JsonPlusSerializer(allowed_msgpack_modules=ALLOWED_MSGPACK_MODULES)


@asynccontextmanager
async def open_checkpointer(
    postgres_dsn: str | None, data_dir: Path, pool_size: int = 8
) -> AsyncIterator[BaseCheckpointSaver]:
    """Open the configured saver, set up its tables under the schema lock, close it on exit."""
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

    async with cerrojo_postgres(dsn):
        await preparar_postgres(dsn)
    # what LangGraph's saver documents for its connections: rows as dicts (it reads columns by
    # name), every statement prepared from its first run
    pool = await open_pool(dsn, max_size=pool_size, prepare_threshold=0, row_factory=dict_row)
    try:
        yield AsyncPostgresSaver(pool, serde=build_serializer())  # type: ignore[arg-type]
    finally:
        await pool.close()


class InlineSqliteSaver(SqliteSaver):
    """``SqliteSaver`` usable from async code: each async method runs its sync twin inline.

    Nothing awaits inside a statement, so the saver's lock is never contended on the loop's
    thread, and the reads and writes are the upstream class's, row for row.
    """

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """``get_tuple`` on the calling thread."""
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """``list`` on the calling thread."""
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """``put`` on the calling thread."""
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """``put_writes`` on the calling thread."""
        self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """``delete_thread`` on the calling thread."""
        self.delete_thread(thread_id)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, Any]:
        """``get_delta_channel_history`` on the calling thread."""
        return self.get_delta_channel_history(config=config, channels=channels)


@asynccontextmanager
async def _open_sqlite(path: Path) -> AsyncIterator[BaseCheckpointSaver]:
    """An ``InlineSqliteSaver`` on a file under ``FICHAS_DATA_DIR``."""
    async with cerrojo_sqlite(path.parent):
        preparar_sqlite(path)
    conn = connect_sqlite(path, synchronous=SQLITE_SYNCHRONOUS)
    try:
        saver = InlineSqliteSaver(conn, serde=build_serializer())
        saver.setup()  # nothing left to create: only marks the saver as set up
        yield saver
    finally:
        conn.close()


async def preparar_postgres(dsn: str) -> Cambio:
    """Run ``AsyncPostgresSaver.setup()`` on a connection of its own; the caller holds the lock.

    The version reported is the library's, the highest ``v`` of ``checkpoint_migrations``.
    The connection has no statement timeout: a migration must not be cut halfway.
    """
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg import AsyncConnection
    from psycopg.rows import dict_row

    conn = await AsyncConnection.connect(
        dsn,
        autocommit=True,
        prepare_threshold=0,
        row_factory=dict_row,
        connect_timeout=PG_CONNECT_TIMEOUT_S,
    )
    async with conn:
        antes = await version_postgres(conn, MIGRACIONES_POSTGRES)
        await AsyncPostgresSaver(conn, serde=build_serializer()).setup()  # type: ignore[arg-type]
        despues = await version_postgres(conn, MIGRACIONES_POSTGRES)
    return Cambio(ALMACEN, "postgres", antes, despues)


def preparar_sqlite(path: Path) -> Cambio:
    """Run ``SqliteSaver.setup()`` on the file; the caller holds the data folder's lock.

    The library keeps no schema version on SQLite (``create table if not exists`` only), so
    the version reported is 0 once its tables are there and None before.
    """
    conn = connect_sqlite(path, synchronous=SQLITE_SYNCHRONOUS)
    try:
        antes = _tablas_sqlite(conn)
        SqliteSaver(conn, serde=build_serializer()).setup()
        return Cambio(ALMACEN, "sqlite", antes, _tablas_sqlite(conn))
    finally:
        conn.close()


def _tablas_sqlite(conn: sqlite3.Connection) -> int | None:
    """0 when the library's ``checkpoints`` table exists (for the report only), else None."""
    row = conn.execute(
        "select 1 from sqlite_master where type = 'table' and name = 'checkpoints'"
    ).fetchone()
    return None if row is None else 0
