"""Numbered migrations: the pattern of ``langgraph/checkpoint/postgres/base.py``, on both dialects.

A store declares an ``Esquema``: the name of its migrations table and a tuple of ``Migracion``
whose positions are their versions; the table holds one row ``v`` per applied migration, and
the store's version is the highest ``v`` (``None`` without the table). ``migrar_*`` applies
every migration above it.

Invariants: each migration runs in its own transaction with the insert of its ``v`` (applied
entirely and once, or not at all; DDL is transactional on both dialects); a store's list is the
same on SQLite and PostgreSQL (statements side by side where they differ), so a version means
one schema on either; migration 0 of a store is exactly the schema of the release before
migrations, idempotent, so such a database is recognised by the missing table alone. The
caller holds ``migraciones.cerrojo``'s lock; the primary key on ``v`` refuses a second
application if it did not. Why: docs/arquitectura.md, "Migrations and the schema lock".
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Migracion:
    """One schema step; the statements of each dialect, written side by side."""

    descripcion: str
    sqlite: tuple[str, ...]
    postgres: tuple[str, ...]


@dataclass(frozen=True)
class Esquema:
    """A store's migrations: ``migraciones[v]`` is version ``v``; ``tabla`` records them."""

    nombre: str
    tabla: str
    migraciones: tuple[Migracion, ...]

    @property
    def ultima(self) -> int:
        """The version this code expects after migrating."""
        return len(self.migraciones) - 1


@dataclass(frozen=True)
class Cambio:
    """A store's schema version before and after one ``migrar`` (None: no migrations table)."""

    almacen: str
    dialecto: str
    antes: int | None
    despues: int | None

    def linea(self) -> str:
        """What ``fichas migrar`` prints for the store."""
        antes = "none" if self.antes is None else str(self.antes)
        despues = "none" if self.despues is None else str(self.despues)
        estado = "up to date" if self.antes == self.despues else "migrated"
        return f"{self.almacen} ({self.dialecto}): schema version {antes} -> {despues} ({estado})"


def _crear_tabla(tabla: str) -> str:
    """The migrations table, the same on both dialects."""
    return f"create table if not exists {tabla} (v integer primary key)"


# ---------------------------------------------------------------------------- SQLite


def version_sqlite(conn: sqlite3.Connection, esquema: Esquema) -> int | None:
    """Highest applied version; None when the migrations table is not in the file."""
    hay = conn.execute(
        "select 1 from sqlite_master where type = 'table' and name = $1", {"1": esquema.tabla}
    ).fetchone()
    if hay is None:
        return None
    row = conn.execute(f"select max(v) from {esquema.tabla}").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def migrar_sqlite(conn: sqlite3.Connection, esquema: Esquema) -> Cambio:
    """Apply the missing migrations, each in a ``begin immediate`` transaction.

    The version is read again inside each write transaction, so even a process that does not
    hold the data folder's lock never applies a migration twice: SQLite lets one writer in.
    """
    antes = version_sqlite(conn, esquema)
    for v, migracion in enumerate(esquema.migraciones):
        conn.execute("begin immediate")
        try:
            conn.execute(_crear_tabla(esquema.tabla))
            actual = version_sqlite(conn, esquema)
            if actual is None or actual < v:
                for sentencia in migracion.sqlite:
                    conn.execute(sentencia)
                conn.execute(f"insert into {esquema.tabla} (v) values ($1)", {"1": v})
        except BaseException:
            conn.execute("rollback")
            raise
        conn.execute("commit")
    return Cambio(esquema.nombre, "sqlite", antes, version_sqlite(conn, esquema))


# ---------------------------------------------------------------------------- PostgreSQL


async def version_postgres(conn: Any, esquema: Esquema) -> int | None:
    """Highest applied version; None when the migrations table is not in the database."""
    cursor = await conn.execute("select to_regclass(%s)::text", (esquema.tabla,))
    row = await cursor.fetchone()
    if row is None or _valor(row) is None:
        return None
    cursor = await conn.execute(f"select max(v) from {esquema.tabla}")
    row = await cursor.fetchone()
    return None if row is None or _valor(row) is None else int(_valor(row))


async def migrar_postgres(conn: Any, esquema: Esquema) -> Cambio:
    """Apply the missing migrations on an autocommit connection, each in one transaction."""
    antes = await version_postgres(conn, esquema)
    await conn.execute(_crear_tabla(esquema.tabla))
    actual = await version_postgres(conn, esquema)
    for v, migracion in enumerate(esquema.migraciones):
        if actual is not None and v <= actual:
            continue
        async with conn.transaction():
            for sentencia in migracion.postgres:
                await conn.execute(sentencia)
            await conn.execute(f"insert into {esquema.tabla} (v) values (%s)", (v,))
    return Cambio(esquema.nombre, "postgres", antes, await version_postgres(conn, esquema))


def _valor(row: Any) -> Any:
    """The first column of a row, whatever the connection's row factory (tuple or dict)."""
    if isinstance(row, dict):
        return next(iter(row.values()))
    return row[0]
