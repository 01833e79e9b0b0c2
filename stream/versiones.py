"""The version store: newest version handled per SKU, and one outcome record per ``event_id``.

Two records, kept in one transaction, fence every emission of the worker:

* ``fichas_versiones``: the newest version handled per SKU. A
  redelivered or late (zombie) older version finds a newer one there and is ``obsoleto``.
* ``fichas_resultados``: the outcome of each ``event_id`` with the SKU, the
  version and a fingerprint of the input. It is the one source of every emission: whoever
  claims an ``event_id`` first writes its outcome here, and every later emission of that
  ``event_id`` (redelivery, a second worker, a zombie) sends these stored bytes, never a new
  run's. An ``event_id`` that comes back with another SKU, version or content is refused.

``reclamar`` is the compare-and-set: under the SKU's row lock it reads the stored version and
the outcome of the ``event_id``, and records the new outcome only when the event is neither
superseded nor already decided. Superseded outcomes are deleted in the same transaction, and
``podar`` deletes records older than the retention, so both tables stay bounded.

``get`` and ``record`` (the newest version of a SKU, and raising it; protocol ``VersionStore``)
are usable from outside the worker, e.g. by an app that publishes a human decision and must
refuse an older version; ``resultado``, ``reclamar``, ``podar`` and ``tamanos`` (protocol
``ClaimStore``) are the worker's. What an event may become (new, already decided, obsolete,
a reused ``event_id``) is decided by one pure rule, ``dictaminar``, which the handler asks
before the graph and ``reclamar`` asks at the claim.
The store lives next to the checkpoints: ``versiones.sqlite`` in ``FICHAS_DATA_DIR``, or the
same PostgreSQL database.
"""

from __future__ import annotations

import enum
import hashlib
import json
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import migraciones
from esquemas import EventoCambio
from migraciones import (
    Cambio,
    Esquema,
    Migracion,
    cerrojo_postgres,
    cerrojo_sqlite,
    connect_sqlite,
    postgres_connection_kwargs,
)

SQLITE_FILE = "versiones.sqlite"


def huella(evento: EventoCambio) -> str:
    """Fingerprint of an event's content: sha256 of its canonical JSON (key order ignored)."""
    datos = evento.model_dump(mode="json")
    canonical = json.dumps(datos, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Clave:
    """What makes an event the same event: its SKU, its version and its content's fingerprint."""

    sku: str
    version: int
    huella: str

    @classmethod
    def de_evento(cls, evento: EventoCambio) -> Clave:
        """The key of an event as it arrived."""
        return cls(evento.sku, evento.version, huella(evento))


@dataclass(frozen=True)
class ResultadoGuardado:
    """The stored outcome of one ``event_id``: what was decided, for which input."""

    event_id: str
    sku: str
    version: int
    huella: str
    destino: str
    salida: dict[str, Any]

    @property
    def clave(self) -> Clave:
        """The key of the event this outcome was decided for."""
        return Clave(self.sku, self.version, self.huella)


class Dictamen(enum.Enum):
    """What the claim rule decided (not ``esquemas.Veredicto``, the evaluator's judgement)."""

    NUEVO = "nuevo"  # nothing decided yet: run it (before the graph), record it (at the claim)
    REGISTRADO = "registrado"  # already decided for this event_id: emit the stored outcome
    OBSOLETO = "obsoleto"  # a newer version of the SKU is known: emit nothing
    REUTILIZADO = "reutilizado"  # the event_id was seen with another SKU, version or content


@dataclass(frozen=True)
class Reclamo:
    """The decision and the outcome to emit (the stored one when it already existed)."""

    dictamen: Dictamen
    guardado: ResultadoGuardado | None


def obsoleta(version: int, vigente: int | None) -> bool:
    """The one rule of an obsolete version: a newer version of the same SKU is known.

    ``vigente`` is the newest version known elsewhere (queued behind the event, recorded in
    the store, or None when there is none); ``dictaminar`` is its one caller. Versions start at
    1 (``EventoCambio.version``), so a stored 0 never makes one obsolete.
    """
    return vigente is not None and vigente > version


def mas_nueva(*versiones: int | None) -> int | None:
    """The newest of the versions known (None when none is)."""
    return max((v for v in versiones if v is not None), default=None)


def dictaminar(clave: Clave, vigente: int | None, existente: ResultadoGuardado | None) -> Dictamen:
    """The claim rule, pure: asked once before the graph and once at the claim.

    Those are the two steps after which the answer can change: before the graph it is asked
    with what the lane and the store know (an event the rule does not let through costs no
    LLM call); at the claim, under the SKU's lock, with what the store knows after the run (a
    newer version handled meanwhile, or another run that won). An ``event_id`` seen with
    another SKU, version or content is refused first, then a newer version makes it obsolete.
    """
    if existente is not None and existente.clave != clave:
        return Dictamen.REUTILIZADO
    if obsoleta(clave.version, vigente):
        return Dictamen.OBSOLETO
    return Dictamen.REGISTRADO if existente is not None else Dictamen.NUEVO


def decidir_reclamo(
    guardado: ResultadoGuardado, stored_version: int | None, existente: ResultadoGuardado | None
) -> Reclamo:
    """The compare-and-set of both backends: ``dictaminar``, and the outcome it lets emit."""
    dictamen = dictaminar(guardado.clave, stored_version, existente)
    if dictamen is Dictamen.NUEVO:
        return Reclamo(dictamen, guardado)
    if dictamen is Dictamen.OBSOLETO:
        return Reclamo(dictamen, None)
    return Reclamo(dictamen, existente)


class VersionStore(Protocol):
    """The newest version handled per SKU: what an app outside the worker reads and raises
    (the reviewer app refuses to publish a human decision on an older version)."""

    async def get(self, sku: str) -> int | None:
        """The newest version handled for ``sku``, or None."""
        ...

    async def record(self, sku: str, version: int) -> None:
        """Raise the stored version of ``sku`` to ``version`` (never lowers it)."""
        ...


class ClaimStore(VersionStore, Protocol):
    """The worker's fence: the outcome per ``event_id``, claimed together with the version,
    and the upkeep (retention, sizes) of both records."""

    async def resultado(self, event_id: str) -> ResultadoGuardado | None:
        """The stored outcome of ``event_id``, or None."""
        ...

    async def reclamar(self, guardado: ResultadoGuardado) -> Reclamo:
        """Compare-and-set: record ``guardado`` unless superseded or already decided."""
        ...

    async def podar(self, retencion_s: float) -> int:
        """Delete records older than ``retencion_s`` seconds; the number of rows deleted."""
        ...

    async def tamanos(self) -> dict[str, int]:
        """Rows per table (for measurements and tests)."""
        ...


async def dictamen_previo(
    store: ClaimStore, evento: EventoCambio, en_cola: int | None
) -> tuple[Clave, Reclamo]:
    """The claim rule before the graph: what the store knows of this ``event_id`` and SKU, and
    ``en_cola``, the newest version queued behind the event in its lane.

    ``Dictamen.NUEVO`` means "run it"; any other answer ends the event without an LLM call.
    The event's key comes back too: the claim after the run needs its fingerprint.
    """
    clave = Clave.de_evento(evento)
    existente = await store.resultado(evento.event_id)
    vigente = await store.get(evento.sku)
    dictamen = dictaminar(clave, mas_nueva(en_cola, vigente), existente)
    guardado = existente if dictamen is not Dictamen.OBSOLETO else None
    return clave, Reclamo(dictamen, guardado)


def _guardado_de_fila(row: Any) -> ResultadoGuardado:
    """A stored row (event_id, sku, version, huella, destino, salida) as a ``ResultadoGuardado``."""
    salida = row[5] if isinstance(row[5], dict) else json.loads(row[5])
    return ResultadoGuardado(
        str(row[0]), str(row[1]), int(row[2]), str(row[3]), str(row[4]), salida
    )


def _fila_resultado(guardado: ResultadoGuardado) -> tuple[str, str, int, str, str, str]:
    """The columns of an outcome record both stores insert, in their order."""
    return (
        guardado.event_id,
        guardado.sku,
        guardado.version,
        guardado.huella,
        guardado.destino,
        _salida_json(guardado),
    )


def _salida_json(guardado: ResultadoGuardado) -> str:
    """The outcome as stored: compact JSON, so re-emission gives the same bytes."""
    return json.dumps(guardado.salida, ensure_ascii=False, separators=(",", ":"))


# The statements, the way LangGraph's checkpoint-postgres keeps them: constants, one text where
# the dialects agree (written with psycopg's ``%s``; the SQLite connection reads it as ``?``),
# a pair side by side where they do not. They differ in three things only: the clock (SQLite
# stores seconds since the epoch, PostgreSQL a ``timestamptz``), the larger of two values
# (``max`` / ``greatest``) and the row lock (``for update``; SQLite's one connection needs none).
SELECT_VERSION = "select version from fichas_versiones where sku = %s"
SELECT_RESULTADO = (
    "select event_id, sku, version, huella, destino, salida from fichas_resultados "
    "where event_id = %s"
)
DELETE_SUPERADOS = "delete from fichas_resultados where sku = %s and version < %s"
_AHORA_SQLITE = "((julianday('now') - 2440587.5) * 86400.0)"
# The SKU's row, created at version 0 ("nothing handled") when it is missing, then read under
# the row lock: two claims of one SKU on PostgreSQL wait for each other here.
RESERVAR_SKU = {
    "sqlite": "insert into fichas_versiones (sku, version, actualizada_en) "
    f"values (%s, 0, {_AHORA_SQLITE}) on conflict (sku) do nothing",
    "postgres": "insert into fichas_versiones (sku, version, actualizada_en) "
    "values (%s, 0, now()) on conflict (sku) do nothing",
}
SELECT_VERSION_BLOQUEADA = {
    "sqlite": SELECT_VERSION,
    "postgres": SELECT_VERSION + " for update",
}
UPSERT_VERSION = {
    "sqlite": "insert into fichas_versiones (sku, version, actualizada_en) "
    f"values (%s, %s, {_AHORA_SQLITE}) on conflict (sku) do update set "
    "version = max(fichas_versiones.version, excluded.version), "
    "actualizada_en = excluded.actualizada_en",
    "postgres": "insert into fichas_versiones (sku, version, actualizada_en) "
    "values (%s, %s, now()) on conflict (sku) do update set "
    "version = greatest(fichas_versiones.version, excluded.version), "
    "actualizada_en = excluded.actualizada_en",
}
INSERT_RESULTADO = {
    "sqlite": "insert into fichas_resultados (event_id, sku, version, huella, destino, salida, "
    f"registrado_en) values (%s, %s, %s, %s, %s, %s, {_AHORA_SQLITE})",
    "postgres": "insert into fichas_resultados (event_id, sku, version, huella, destino, salida, "
    "registrado_en) values (%s, %s, %s, %s, %s, %s, now())",
}
# Retention: every record older than it goes, whatever its version (a row at 0, left by a
# claim that recorded nothing, included).
PODAR_RESULTADOS = {
    "sqlite": f"delete from fichas_resultados where registrado_en < {_AHORA_SQLITE} - %s",
    "postgres": "delete from fichas_resultados where registrado_en < now() - %s * interval '1 s'",
}
PODAR_VERSIONES = {
    "sqlite": f"delete from fichas_versiones where actualizada_en < {_AHORA_SQLITE} - %s",
    "postgres": "delete from fichas_versiones where actualizada_en < now() - %s * interval '1 s'",
}
TABLAS = ("fichas_versiones", "fichas_resultados")


class Run(Protocol):
    """One statement on the connection of the current transaction: its rows, its row count."""

    async def __call__(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[list[Any], int]: ...


class _SqliteConnection:
    """One sqlite3 connection used inline on the event loop's thread.

    One indexed lookup or upsert on a WAL file is tens of microseconds; sending it to a
    worker thread and back (aiosqlite) cost more than the statement (see grafo.checkpointer).
    Nothing awaits inside a transaction, so one worker's lanes never interleave in one.
    """

    dialect = "sqlite"

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    async def run(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[list[Any], int]:
        """One statement, committed on its own."""
        with self._conn:
            return self._run(sql, params)

    def _run(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[list[Any], int]:
        cursor = self._conn.execute(sql.replace("%s", "?"), params)
        return cursor.fetchall(), cursor.rowcount

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Run]:
        """The statements of the block in one transaction, committed on exit."""
        with self._conn:

            async def run(sql: str, params: tuple[Any, ...] = ()) -> tuple[list[Any], int]:
                return self._run(sql, params)

            yield run


class _PostgresConnection:
    """A psycopg pool: each transaction on a connection of its own."""

    dialect = "postgres"

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    async def run(self, sql: str, params: tuple[Any, ...] = ()) -> tuple[list[Any], int]:
        """One statement on a pooled connection in autocommit (no BEGIN/COMMIT round trips)."""
        async with self._pool.connection() as conn:
            return await _execute(conn, sql, params)

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Run]:
        """The statements of the block in one transaction, committed on exit."""
        async with self._pool.connection() as conn, conn.transaction():

            async def run(sql: str, params: tuple[Any, ...] = ()) -> tuple[list[Any], int]:
                return await _execute(conn, sql, params)

            yield run


async def _execute(conn: Any, sql: str, params: tuple[Any, ...]) -> tuple[list[Any], int]:
    """A psycopg statement's rows (none for a statement without) and row count."""
    cursor = await conn.execute(sql, params)
    filas = await cursor.fetchall() if cursor.description else []
    return list(filas), int(cursor.rowcount)


class SqlVersionStore:
    """The version store on either dialect: the same methods, the statements above.

    One rule on both: a version row at 0 means "nothing handled" (``get`` answers None); it is
    what the claim's row lock creates for a SKU not seen yet, and retention deletes it like any
    other row.
    """

    def __init__(self, connection: _SqliteConnection | _PostgresConnection) -> None:
        self._connection = connection
        self.dialect = connection.dialect

    async def get(self, sku: str) -> int | None:
        """The newest version handled for ``sku``, or None (no row, or a row at 0)."""
        filas, _ = await self._connection.run(SELECT_VERSION, (sku,))
        return _version(filas)

    async def record(self, sku: str, version: int) -> None:
        """Raise the stored version of ``sku`` to ``version`` (never lowers it)."""
        await self._connection.run(UPSERT_VERSION[self.dialect], (sku, version))

    async def resultado(self, event_id: str) -> ResultadoGuardado | None:
        """The stored outcome of ``event_id``, or None."""
        filas, _ = await self._connection.run(SELECT_RESULTADO, (event_id,))
        return _guardado_de_fila(filas[0]) if filas else None

    async def reclamar(self, guardado: ResultadoGuardado) -> Reclamo:
        """Compare-and-set under the SKU's row lock, in one transaction."""
        d = self.dialect
        async with self._connection.transaction() as run:
            await run(RESERVAR_SKU[d], (guardado.sku,))
            filas, _ = await run(SELECT_VERSION_BLOQUEADA[d], (guardado.sku,))
            existentes, _ = await run(SELECT_RESULTADO, (guardado.event_id,))
            existente = _guardado_de_fila(existentes[0]) if existentes else None
            reclamo = decidir_reclamo(guardado, _version(filas), existente)
            if reclamo.dictamen is Dictamen.NUEVO:
                await run(INSERT_RESULTADO[d], _fila_resultado(guardado))
                await run(UPSERT_VERSION[d], (guardado.sku, guardado.version))
                await run(DELETE_SUPERADOS, (guardado.sku, guardado.version))
        return reclamo

    async def podar(self, retencion_s: float) -> int:
        """Delete outcome and version records older than the retention."""
        async with self._connection.transaction() as run:
            _, a = await run(PODAR_RESULTADOS[self.dialect], (retencion_s,))
            _, b = await run(PODAR_VERSIONES[self.dialect], (retencion_s,))
        return a + b

    async def tamanos(self) -> dict[str, int]:
        """Rows per table."""
        sizes: dict[str, int] = {}
        async with self._connection.transaction() as run:
            for tabla in TABLAS:
                filas, _ = await run(f"select count(*) from {tabla}")
                sizes[tabla] = int(filas[0][0])
        return sizes


def _version(filas: list[Any]) -> int | None:
    """The version a ``SELECT_VERSION`` read: None for no row, or for a row at 0."""
    if not filas or int(filas[0][0]) <= 0:
        return None
    return int(filas[0][0])


# The schema of the release before migrations, as it left a database: migration 0 of both
# dialects. On PostgreSQL that release also ran, at every start, the ``alter``s below (the
# type change only when the column was not bigint yet); here they are unconditional and
# idempotent: ``type bigint`` on a bigint column changes nothing, ``add column if not exists``
# skips a column that is there. On SQLite it added ``actualizada_en`` to a ``versiones`` table of
# an older release after ``pragma table_info``; SQLite has no ``add column if not exists``, so
# migration 0 does not: a data folder last opened by a release older than that one (commit
# 186e170, before the retention) must be opened once by the release before migrations first
# (docs/operacion.md).
_POSTGRES_0 = (
    "create table if not exists fichas_versiones "
    "(sku text primary key, version bigint not null, "
    "actualizada_en timestamptz not null default now())",
    "alter table fichas_versiones alter column version type bigint",
    "alter table fichas_versiones add column if not exists "
    "actualizada_en timestamptz not null default now()",
    "create table if not exists fichas_resultados "
    "(event_id text primary key, sku text not null, version bigint not null, "
    "huella text not null, destino text not null, salida text not null, "
    "registrado_en timestamptz not null default now())",
    "create index if not exists fichas_resultados_sku on fichas_resultados (sku, version)",
    "create index if not exists fichas_resultados_edad on fichas_resultados (registrado_en)",
    "create index if not exists fichas_versiones_edad on fichas_versiones (actualizada_en)",
)
_SQLITE_0 = (
    "create table if not exists versiones "
    "(sku text primary key, version integer not null, actualizada_en real not null default 0)",
    "create table if not exists resultados "
    "(event_id text primary key, sku text not null, version integer not null, "
    "huella text not null, destino text not null, salida text not null, "
    "registrado_en real not null)",
    "create index if not exists resultados_sku on resultados (sku, version)",
    "create index if not exists resultados_edad on resultados (registrado_en)",
    "create index if not exists versiones_edad on versiones (actualizada_en)",
)
# SQLite's tables take the names they have on PostgreSQL (indexes too).
_SQLITE_1 = (
    "alter table versiones rename to fichas_versiones",
    "alter table resultados rename to fichas_resultados",
    "drop index resultados_sku",
    "drop index resultados_edad",
    "drop index versiones_edad",
    "create index fichas_resultados_sku on fichas_resultados (sku, version)",
    "create index fichas_resultados_edad on fichas_resultados (registrado_en)",
    "create index fichas_versiones_edad on fichas_versiones (actualizada_en)",
)

ESQUEMA = Esquema(
    nombre="versiones",
    tabla="fichas_migraciones",
    migraciones=(
        Migracion("the schema of the release before migrations", _SQLITE_0, _POSTGRES_0),
        Migracion("the same table names on SQLite as on PostgreSQL", _SQLITE_1, ()),
    ),
)


async def migrar_postgres(conn: Any) -> Cambio:
    """Migrate the store on ``conn``, which holds the schema lock (``fichas migrar``)."""
    return await migraciones.migrar_postgres(conn, ESQUEMA)


def migrar_sqlite(data_dir: Path) -> Cambio:
    """Migrate ``versiones.sqlite`` in ``data_dir``; the caller holds the folder's lock."""
    conn = connect_sqlite(data_dir / SQLITE_FILE)
    try:
        return migraciones.migrar_sqlite(conn, ESQUEMA)
    finally:
        conn.close()


@asynccontextmanager
async def open_version_store(postgres_dsn: str | None, data_dir: Path) -> AsyncIterator[ClaimStore]:
    """Open the store that matches the checkpointer configuration, migrated under the lock."""
    if postgres_dsn:
        from psycopg_pool import AsyncConnectionPool

        pool = AsyncConnectionPool(
            postgres_dsn,
            min_size=1,
            max_size=4,
            open=False,
            kwargs={"autocommit": True, **postgres_connection_kwargs()},
        )
        async with cerrojo_postgres(postgres_dsn) as conn:
            await migrar_postgres(conn)
        await pool.open(wait=True)
        try:
            yield SqlVersionStore(_PostgresConnection(pool))
        finally:
            await pool.close()
        return
    async with cerrojo_sqlite(data_dir):
        migrar_sqlite(data_dir)
    sqlite = connect_sqlite(data_dir / SQLITE_FILE)
    try:
        yield SqlVersionStore(_SqliteConnection(sqlite))
    finally:
        sqlite.close()
