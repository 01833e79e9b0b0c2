"""The newest version handled per SKU, persisted, so a restart never goes back in time.

When a worker restarts, Kafka redelivers everything after the committed offset. Without
this record, a redelivered older version could be published after a newer one that already
went out. The store lives next to the checkpoints: the same SQLite file's directory when
embedded, the same PostgreSQL database otherwise.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Protocol

from grafo.checkpointer import connect_sqlite

SQLITE_FILE = "versiones.sqlite"


class VersionStore(Protocol):
    """Highest version per SKU whose outcome was written."""

    async def get(self, sku: str) -> int | None:
        """The newest version handled for ``sku``, or None."""
        ...

    async def record(self, sku: str, version: int) -> None:
        """Raise the stored version of ``sku`` to ``version`` (never lowers it)."""
        ...


class SqliteVersionStore:
    """Embedded store on one sqlite3 connection, used inline on the event loop's thread.

    One indexed lookup or upsert on a WAL file is tens of microseconds; sending it to a
    worker thread and back (aiosqlite) cost more than the statement (see grafo.checkpointer).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def get(self, sku: str) -> int | None:
        """Look up one SKU."""
        row = self._conn.execute("select version from versiones where sku = ?", (sku,)).fetchone()
        return int(row[0]) if row else None

    async def record(self, sku: str, version: int) -> None:
        """Upsert keeping the maximum."""
        with self._conn:  # one transaction, committed on exit
            self._conn.execute(
                "insert into versiones (sku, version) values (?, ?) "
                "on conflict(sku) do update set version = max(version, excluded.version)",
                (sku, version),
            )


class PostgresVersionStore:
    """Store in the checkpoint database, through a psycopg pool."""

    def __init__(self, pool: object) -> None:
        self._pool = pool

    async def get(self, sku: str) -> int | None:
        """Look up one SKU."""
        async with self._pool.connection() as conn:  # type: ignore[attr-defined]
            cursor = await conn.execute(
                "select version from fichas_versiones where sku = %s", (sku,)
            )
            row = await cursor.fetchone()
        return int(row[0]) if row else None

    async def record(self, sku: str, version: int) -> None:
        """Upsert keeping the maximum."""
        async with self._pool.connection() as conn:  # type: ignore[attr-defined]
            await conn.execute(
                "insert into fichas_versiones (sku, version) values (%s, %s) on conflict (sku) "
                "do update set version = greatest(fichas_versiones.version, excluded.version)",
                (sku, version),
            )


@asynccontextmanager
async def open_version_store(
    postgres_dsn: str | None, data_dir: Path
) -> AsyncIterator[VersionStore]:
    """Open the store that matches the checkpointer configuration."""
    if postgres_dsn:
        from psycopg_pool import AsyncConnectionPool

        pool = AsyncConnectionPool(
            postgres_dsn, min_size=1, max_size=4, open=False, kwargs={"autocommit": True}
        )
        await pool.open(wait=True)
        try:
            async with pool.connection() as conn:
                await conn.execute(
                    "create table if not exists fichas_versiones "
                    "(sku text primary key, version integer not null)"
                )
            yield PostgresVersionStore(pool)
        finally:
            await pool.close()
        return
    sqlite = connect_sqlite(data_dir / SQLITE_FILE)
    try:
        with sqlite:
            sqlite.execute(
                "create table if not exists versiones "
                "(sku text primary key, version integer not null)"
            )
        yield SqliteVersionStore(sqlite)
    finally:
        sqlite.close()
