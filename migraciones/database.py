"""The one store layer: a ``Database`` of rows and transactions on SQLite or PostgreSQL.

Every store of the project's own SQL runs here, written once with ``$1``, ``$2`` placeholders
(SQLite gets them as ``?1``, ``?2``, converted once per statement by ``sqlite_sql``). Invariants:
one transaction at a time per SQLite connection, ``begin immediate`` … ``commit``, ``rollback``
on any error; on PostgreSQL each transaction and each ``run`` on a pooled autocommit
connection. What each store chooses is its ``StoreOptions``. Why, and every store's values:
docs/arquitectura.md, "The store layer".
"""

from __future__ import annotations

import asyncio
import functools
import re
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from migraciones.cerrojo import cerrojo_postgres, cerrojo_sqlite
from migraciones.conexion import Synchronous, connect_sqlite, open_pool
from migraciones.numeradas import Cambio, Esquema, migrar_postgres, migrar_sqlite

_PLACEHOLDER = re.compile(r"\$(\d+)")
BEGIN, COMMIT, ROLLBACK = "begin immediate", "commit", "rollback"


@dataclass(slots=True)
class Rows:
    """What a statement gave: its rows (read in full) and how many rows it changed."""

    rows: list[Any]
    count: int

    def first(self) -> Any:
        """The first row, or None."""
        return self.rows[0] if self.rows else None


# ``await run(sql, params)`` inside a transaction: one statement, ``$n`` placeholders.
Run = Callable[..., Awaitable[Rows]]


class Database(Protocol):
    """Rows and transactions, the same on both dialects (``dialect``: "sqlite", "postgres")."""

    dialect: str

    async def run(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """One statement, committed on its own."""
        ...

    def transaction(self) -> AbstractAsyncContextManager[Run]:
        """The statements run through the yielded ``Run`` in one transaction, committed on
        exit, rolled back on an error."""
        ...

    async def close(self) -> None:
        """Close the connection or the pool."""
        ...


@functools.lru_cache(maxsize=1024)
def sqlite_sql(sql: str) -> str:
    """``sql`` with ``$n`` as SQLite's ``?n`` (bound by position from the same tuple)."""
    return _PLACEHOLDER.sub(r"?\1", sql)


class SqliteDatabase:
    """One connection, one transaction at a time; statements inline or on a thread.

    Inline (``on_thread=False``) runs each statement on the event loop's thread: for a
    statement of tens of microseconds a thread hop costs more; a busy file or an fsync then
    blocks the loop. On a thread (``asyncio.to_thread``) the loop never waits on the file.
    """

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection, *, on_thread: bool) -> None:
        conn.isolation_level = None  # autocommit: the transactions below are explicit
        self._conn = conn
        self._on_thread = on_thread
        self._lock = asyncio.Lock()

    def _execute(self, sql: str, params: Sequence[Any]) -> Rows:
        cursor = self._conn.execute(sqlite_sql(sql), params)
        return Rows(cursor.fetchall(), cursor.rowcount)

    async def _call(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """One statement on the connection, inline or on a thread; the caller holds the lock."""
        if self._on_thread:
            return await asyncio.to_thread(self._execute, sql, params)
        return self._execute(sql, params)

    async def run(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """One statement in autocommit (no ``begin``/``commit`` of its own)."""
        if not self._on_thread and not self._lock.locked():
            return self._execute(sql, params)  # nothing can interleave: no await until done
        async with self._lock:
            return await self._call(sql, params)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Run]:
        """``begin immediate`` … ``commit`` (``rollback`` on an error, the commit's included)."""
        async with self._lock:
            await self._call(BEGIN)
            try:
                yield self._call
                await self._call(COMMIT)
            except BaseException:
                if self._conn.in_transaction:
                    await self._call(ROLLBACK)
                raise

    async def close(self) -> None:
        """Close the connection once the running transaction ends."""
        async with self._lock:
            self._conn.close()


class PostgresDatabase:
    """psycopg's async pool of raw-cursor autocommit connections."""

    dialect = "postgres"

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def run(self, sql: str, params: Sequence[Any] = ()) -> Rows:
        """One statement on a pooled connection in autocommit (no BEGIN/COMMIT round trips)."""
        async with self._pool.connection() as conn:
            return await _execute(conn, sql, params)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Run]:
        """A pooled connection in one transaction."""
        async with self._pool.connection() as conn, conn.transaction():

            async def run(sql: str, params: Sequence[Any] = ()) -> Rows:
                return await _execute(conn, sql, params)

            yield run

    async def close(self) -> None:
        """Close the pool."""
        await self._pool.close()


async def _execute(conn: Any, sql: str, params: Sequence[Any]) -> Rows:
    """A psycopg statement's rows (none for a statement without) and row count."""
    cursor = await conn.execute(sql, params)
    rows = await cursor.fetchall() if cursor.description else []
    return Rows(list(rows), int(cursor.rowcount))


@dataclass(frozen=True)
class StoreOptions:
    """Where a store lives and how it is opened: every choice that differs between stores.

    ``sqlite_file``: its file in the data folder; ``synchronous`` and ``on_thread``: SQLite's
    durability and where its statements run; ``pool_max``, ``check`` and ``application_name``:
    its PostgreSQL pool (``check``: test each connection before lending it).
    """

    esquema: Esquema
    sqlite_file: str
    synchronous: Synchronous
    on_thread: bool
    pool_max: int
    check: bool = False
    application_name: str | None = None


def migrar_archivo(data_dir: Path, options: StoreOptions) -> Cambio:
    """Migrate the store's SQLite file in ``data_dir``; the caller holds the folder's lock."""
    conn = connect_sqlite(data_dir / options.sqlite_file, synchronous=options.synchronous)
    try:
        return migrar_sqlite(conn, options.esquema)
    finally:
        conn.close()


async def open_database(
    postgres_dsn: str | None, data_dir: Path, options: StoreOptions
) -> Database:
    """The store's database: PostgreSQL when a DSN is given, else its SQLite file in
    ``data_dir``; migrated under the schema lock first. The caller closes it."""
    if postgres_dsn:
        from psycopg import AsyncRawCursor

        async with cerrojo_postgres(postgres_dsn) as conn:
            await migrar_postgres(conn, options.esquema)
        extra = {"application_name": options.application_name} if options.application_name else {}
        pool = await open_pool(
            postgres_dsn,
            max_size=options.pool_max,
            check=options.check,
            cursor_factory=AsyncRawCursor,
            **extra,
        )
        return PostgresDatabase(pool)
    async with cerrojo_sqlite(data_dir):
        await asyncio.to_thread(migrar_archivo, data_dir, options)
    conn = connect_sqlite(data_dir / options.sqlite_file, synchronous=options.synchronous)
    return SqliteDatabase(conn, on_thread=options.on_thread)
