"""The lock held while a store's schema is set up or migrated: one process at a time.

PostgreSQL: the session-level advisory lock ``CLAVE_CERROJO`` (727274, the key the version
store of the release before migrations already took around its ``create table`` statements,
so a process of that release starting during a rollout waits for a migration and vice versa).
It is held on a connection of its own, in autocommit, for the whole step. Whoever waits for it
polls ``pg_try_advisory_lock`` every ``SONDEO_S`` instead of blocking in ``pg_advisory_lock``:
the checkpointer's migrations build indexes ``CONCURRENTLY``, and such a build waits for every
transaction that holds a snapshot, which a backend blocked in ``select pg_advisory_lock(...)``
does. The build would wait for the waiter and the waiter for the lock holder (a deadlock the
server breaks by aborting one of them). A poller holds no snapshot between polls.

SQLite (the embedded data folder): an exclusive ``flock`` on ``.migrar.lock`` in the folder,
polled the same way. It covers the folder's three files at once, as the advisory lock covers
the database. Each migration also runs in a ``begin immediate`` transaction that reads the
version again (``migraciones.esquema``), so SQLite's own write lock alone would already keep
a migration from being applied twice; the file lock makes the whole step one at a time, as
on PostgreSQL (the checkpointer's tables, the switch to WAL). ``flock`` needs a local file
system, which a SQLite database needs anyway.

Waiting is bounded: a log line every ``AVISO_S`` seconds names who is waited for, and after
``espera_max_s`` ``EsperaAgotada`` says to look at the process holding it or run ``fichas
migrar``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

log = logging.getLogger("fichas.migraciones")

CLAVE_CERROJO = 727274
FICHERO_CERROJO = ".migrar.lock"
ESPERA_MAX_S = 300.0
AVISO_S = 5.0
SONDEO_S = 0.1
CONNECT_TIMEOUT_S = 10


class EsperaAgotada(RuntimeError):
    """The lock was not free within the bound."""


def _agotada(donde: str, espera_max_s: float) -> EsperaAgotada:
    """The error an operator reads when the bound runs out."""
    return EsperaAgotada(
        f"the schema lock on {donde} was still held after {espera_max_s:.0f} s: another "
        "process is migrating (or hangs holding it). Run `fichas migrar` to see the schema "
        "versions and finish the migration, then start this process again."
    )


async def _esperar(intentar: Any, donde: str, espera_max_s: float) -> None:
    """Poll ``intentar()`` until it takes the lock; a log line every ``AVISO_S``; bounded."""
    inicio = time.monotonic()
    aviso = inicio + AVISO_S
    while not await intentar():
        ahora = time.monotonic()
        if ahora - inicio > espera_max_s:
            raise _agotada(donde, espera_max_s)
        if ahora >= aviso:
            log.info(
                "waiting for the schema lock on %s (held by `fichas migrar` or another "
                "starting process) for %.0f s, up to %.0f s",
                donde,
                ahora - inicio,
                espera_max_s,
            )
            aviso = ahora + AVISO_S
        await asyncio.sleep(SONDEO_S)


@contextlib.asynccontextmanager
async def cerrojo_postgres(dsn: str, espera_max_s: float = ESPERA_MAX_S) -> AsyncIterator[Any]:
    """Hold ``pg_advisory_lock(CLAVE_CERROJO)``; yields the autocommit connection holding it.

    The connection has no statement timeout: a migration that rewrites a large table may take
    longer than the worker's 30 s limit, and it must not be cut halfway.
    """
    import psycopg

    conn = await psycopg.AsyncConnection.connect(
        dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_S
    )
    try:

        async def intentar() -> bool:
            cursor = await conn.execute("select pg_try_advisory_lock(%s)", (CLAVE_CERROJO,))
            row = await cursor.fetchone()
            return bool(row and row[0])

        await _esperar(intentar, "PostgreSQL", espera_max_s)
        try:
            yield conn
        finally:
            if not conn.closed:
                with contextlib.suppress(Exception):
                    await conn.execute("select pg_advisory_unlock(%s)", (CLAVE_CERROJO,))
    finally:
        await conn.close()  # a closed session releases the lock in any case


@contextlib.asynccontextmanager
async def cerrojo_sqlite(data_dir: Path, espera_max_s: float = ESPERA_MAX_S) -> AsyncIterator[None]:
    """Hold an exclusive ``flock`` on the data folder's ``.migrar.lock``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(data_dir / FICHERO_CERROJO, os.O_RDWR | os.O_CREAT, 0o644)
    try:

        async def intentar() -> bool:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            return True

        await _esperar(intentar, str(data_dir), espera_max_s)
        try:
            yield None
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
