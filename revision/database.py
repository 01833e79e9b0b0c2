"""The review app's database: where it is, how it is opened and migrated, how statements run.

One database serves the app's two stores, the review queue (``revision.almacen.Almacen``) and
the reviewers' accounts (``revision.cuentas.Cuentas``): embedded SQLite in ``FICHAS_DATA_DIR``,
or PostgreSQL when ``FICHAS_POSTGRES_DSN`` is set (tables prefixed ``revision_`` so they live
next to the worker's, with the same names on both; ``revision.esquema``). The app opens it once
(``open_database``) and gives both stores the same object, so on SQLite they share one
connection and one lock, as when they were one class; each store's ``abrir`` opens a database
of its own for the commands that need only one of them.

The SQL strategy of both stores: statements are module constants, one text where the dialects
agree, written with PostgreSQL's own numbered placeholders ``$1``, ``$2``. On PostgreSQL they
go to the server as written (psycopg's ``AsyncRawCursor``, no rewriting); SQLite reads ``$1``
as a parameter named ``1``, bound from ``{"1": ...}``. Nothing rewrites a statement at run
time. Where a statement must differ between the dialects it is written twice side by side, a
``{"sqlite": ..., "postgres": ...}`` pair picked with ``Database.dialect`` (no statement needs
one today).

Every statement runs inside ``transaction()``. On PostgreSQL that is psycopg's async pool, as
the worker's version store uses it: requests never wait on each other beyond the pool's
connections. On SQLite one connection serves the process; a transaction holds an
``asyncio.Lock`` and each statement runs on a thread (``asyncio.to_thread``), so an fsync
(``synchronous=full``) or a busy file never stalls other requests. The app's load (people
clicking) is far below what either serves.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import migraciones
from migraciones import Cambio, cerrojo_postgres, cerrojo_sqlite
from revision.esquema import ESQUEMA

SQLITE_FILE = "revision.sqlite"
APPLICATION_NAME = "fichas revisor"  # application_name of its PostgreSQL connections
POOL_MAX = 4


async def migrar_postgres(conn: Any) -> Cambio:
    """Migrate the app's tables on ``conn``, which holds the schema lock (``fichas migrar``)."""
    return await migraciones.migrar_postgres(conn, ESQUEMA)


def migrar_sqlite(data_dir: Path) -> Cambio:
    """Migrate ``revision.sqlite`` in ``data_dir``; the caller holds the folder's lock."""
    conn = _connect_sqlite(data_dir)
    try:
        return migraciones.migrar_sqlite(conn, ESQUEMA)
    finally:
        conn.close()


def exists(postgres_dsn: str | None, data_dir: Path) -> bool:
    """Whether a database is there to read (a report never creates an empty one by accident)."""
    return bool(postgres_dsn) or (data_dir / SQLITE_FILE).exists()


def _connect_sqlite(data_dir: Path) -> sqlite3.Connection:
    """The app's file: WAL, a decision survives a power cut, waits 5 s for a busy file."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / SQLITE_FILE, check_same_thread=False, isolation_level=None)
    conn.execute("pragma journal_mode=wal")
    conn.execute("pragma synchronous=full")
    conn.execute("pragma busy_timeout=5000")
    return conn


@dataclass(frozen=True)
class Rows:
    """What a statement gave: its rows (read in full) and how many rows it changed."""

    rows: list[Any]
    count: int

    def first(self) -> Any:
        """The first row, or None."""
        return self.rows[0] if self.rows else None


# ``await run(sql, params)`` inside a transaction: one statement, ``$n`` placeholders.
Run = Callable[..., Awaitable[Rows]]


class SqliteDatabase:
    """One connection; one transaction at a time (an asyncio lock), statements on a thread."""

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()

    def _execute(self, sql: str, params: Sequence[Any]) -> Rows:
        cursor = self._conn.execute(sql, {str(i): v for i, v in enumerate(params, start=1)})
        return Rows(cursor.fetchall(), cursor.rowcount)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Run]:
        """``begin immediate`` … ``commit`` (``rollback`` on an error)."""
        async with self._lock:
            await asyncio.to_thread(self._conn.execute, "begin immediate")
            try:

                async def run(sql: str, params: Sequence[Any] = ()) -> Rows:
                    return await asyncio.to_thread(self._execute, sql, tuple(params))

                yield run
            except BaseException:
                await asyncio.to_thread(self._conn.execute, "rollback")
                raise
            await asyncio.to_thread(self._conn.execute, "commit")

    async def close(self) -> None:
        async with self._lock:
            self._conn.close()


class PostgresDatabase:
    """psycopg's async pool; every connection checked before use (a server restart heals)."""

    dialect = "postgres"

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Run]:
        """A pooled connection in one transaction."""
        async with self._pool.connection() as conn, conn.transaction():

            async def run(sql: str, params: Sequence[Any] = ()) -> Rows:
                cursor = await conn.execute(sql, tuple(params))
                rows = await cursor.fetchall() if cursor.description else []
                return Rows(list(rows), cursor.rowcount)

            yield run

    async def close(self) -> None:
        await self._pool.close()


Database = SqliteDatabase | PostgresDatabase


async def open_database(postgres_dsn: str | None, data_dir: Path) -> Database:
    """Open the database the configuration names, migrated under the schema lock."""
    if postgres_dsn:
        from psycopg import AsyncRawCursor
        from psycopg_pool import AsyncConnectionPool

        from migraciones import postgres_connection_kwargs

        async with cerrojo_postgres(postgres_dsn) as conn:
            await migrar_postgres(conn)
        pool = AsyncConnectionPool(
            postgres_dsn,
            min_size=1,
            max_size=POOL_MAX,
            open=False,
            check=AsyncConnectionPool.check_connection,
            kwargs={
                "autocommit": True,
                "cursor_factory": AsyncRawCursor,
                "application_name": APPLICATION_NAME,
                **postgres_connection_kwargs(),
            },
        )
        await pool.open(wait=True)
        return PostgresDatabase(pool)
    async with cerrojo_sqlite(data_dir):
        await asyncio.to_thread(migrar_sqlite, data_dir)
    return SqliteDatabase(await asyncio.to_thread(_connect_sqlite, data_dir))


async def query(database: Database, sql: str, params: Sequence[Any] = ()) -> list[Any]:
    """A read in its own short transaction: its rows."""
    async with database.transaction() as run:
        return (await run(sql, params)).rows
