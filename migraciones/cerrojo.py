"""The lock held while a store's schema is set up or migrated: one process at a time.

PostgreSQL: the session-level advisory lock ``CLAVE_CERROJO`` (727274, the key of the release
before migrations, so both wait for each other during a rollout), on a connection of its own in
autocommit. SQLite: an exclusive ``flock`` on ``.migrar.lock`` in the data folder, covering its
three files at once (a local file system, which SQLite needs anyway).

Invariants: a waiter polls (``pg_try_advisory_lock``, every ``SONDEO_S``) and never blocks in
``pg_advisory_lock``, whose snapshot would deadlock with the checkpointer's ``CONCURRENTLY``
index builds; waiting is bounded (a log line every ``AVISO_S`` naming who is waited for, then
``EsperaAgotada`` after ``espera_max_s``). Why: docs/arquitectura.md, "Migrations and the schema
lock"; how operators meet it: docs/operacion.md, "Schemas and upgrades".
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
