"""The reviewer app's state: items, decisions (the outbox), versions seen, users, sessions.

One SQL text serves both back ends: embedded SQLite in ``FICHAS_DATA_DIR`` and PostgreSQL when
``FICHAS_POSTGRES_DSN`` is set (tables prefixed ``revision_`` so they live next to the worker's,
with the same names on both). Statements use PostgreSQL's own numbered placeholders ``$1``,
``$2``: on PostgreSQL they go to the server as written (psycopg's ``AsyncRawCursor``, no
rewriting); SQLite reads ``$1`` as a parameter named ``1``, bound from ``{"1": ...}``. Nothing
rewrites a statement at run time. Where a statement must differ between the dialects, it is
written twice side by side in a ``Migracion`` (today only the migrations would; none does).

Every method is a coroutine. On PostgreSQL they run on psycopg's async pool, as the worker's
version store does: requests never wait on each other beyond the pool's connections. On SQLite
one connection serves the process; a transaction holds an ``asyncio.Lock`` and each statement
runs on a thread (``asyncio.to_thread``), so an fsync (``synchronous=full``) or a busy file
never stalls other requests. The app's load (people clicking) is far below what either serves.

Sessions are found by the SHA-256 of their token (``revision.seguridad.hash_token``); the
token itself is never stored.

The schema is ``ESQUEMA``, numbered migrations (``migraciones``); ``abrir`` applies the missing
ones under the schema lock, as ``fichas migrar`` does.

Why the guarantees hold:
- one item per ``event_id``: the primary key, and ``insert ... on conflict do nothing``;
- one decision per item: deciding is a conditional update (``estado = 'abierta'``) and the
  decision row is written in the same transaction, so two reviewers racing get one winner;
- nothing lost between decision and publication: the decision row, with the publication it
  implies, is committed before anything is sent (``enviada = 0``), and only marked sent after
  the broker acknowledged both records (the outbox pattern).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import secrets
import sqlite3
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import migraciones
from esquemas.constantes import (
    DECISION_CORRECTA,
    DECISION_INCORRECTA,
    DECISION_OBSOLETA,
    MOTIVO_SIN_GARANTIA,
    REVISOR_SISTEMA,
    TIPO_MUESTRA,
)
from esquemas.puerta import ClavePuerta
from migraciones import Cambio, Esquema, Migracion, cerrojo_postgres, cerrojo_sqlite
from revision.decisiones import decision_de
from revision.item import Item

SQLITE_FILE = "revision.sqlite"
APLICACION = "fichas revisor"  # application_name of its PostgreSQL connections
POOL_MAX = 4
USO_S = 30.0  # a session's last use is written at most this often (idle timeout's resolution)

ABIERTA = "abierta"
DECIDIDA = "decidida"
OBSOLETA = "obsoleta"

# The schema of the release before migrations, as it created it on both dialects.
_ESQUEMA_0 = (
    """create table if not exists revision_items (
        event_id text primary key,
        tipo text not null,
        motivo text not null,
        sku text not null,
        version bigint not null,
        familia text not null,
        criterios text not null,
        datos text not null,
        recibido_en double precision not null,
        estado text not null,
        cerrado_en double precision
    )""",
    "create index if not exists revision_items_abiertos on revision_items (estado, recibido_en)",
    "create index if not exists revision_items_sku on revision_items (sku, estado)",
    """create table if not exists revision_decisiones (
        event_id text primary key,
        tipo text not null,
        decision text not null,
        familia text not null,
        criterios text not null,
        revisor text not null,
        decidida_en double precision not null,
        segundos double precision not null,
        registro text not null,
        publicacion text,
        enviada integer not null default 0
    )""",
    "create index if not exists revision_decisiones_pendientes on revision_decisiones (enviada)",
    "create table if not exists revision_skus (sku text primary key, version bigint not null)",
    "create table if not exists revision_usuarios (nombre text primary key, hash text not null)",
    """create table if not exists revision_sesiones (
        token text primary key, usuario text not null, csrf text not null,
        expira double precision not null
    )""",
)

# Recall of the gate (``retenidas``) reads the held-back items by reason, oldest first.
_ESQUEMA_1 = (
    "create index if not exists revision_items_motivo on revision_items (motivo, recibido_en)",
)

# Sessions keep the SHA-256 of their token, never the token (a dump opens no session), and
# when they were last used (the idle timeout); the old table, whose rows hold tokens in plain
# text, is dropped: everyone logs in once more. A reviewer can be disabled (``activo``). The
# secrets table holds the key that signs the login form's CSRF token, shared by every replica.
_ESQUEMA_2 = (
    "drop table if exists revision_sesiones",
    """create table revision_sesiones (
        token_sha256 text primary key, usuario text not null, csrf text not null,
        creada double precision not null, usada double precision not null,
        expira double precision not null
    )""",
    "create index revision_sesiones_usuario on revision_sesiones (usuario)",
    "alter table revision_usuarios add column activo integer not null default 1",
    "create table revision_secretos (nombre text primary key, valor text not null)",
)

# The gates' evidence (issue 29, docs/puerta.md "Abrir la puerta"): one row per item whose
# record carries the loop's key (``clave``, contract v1.3), written in the item's own
# transaction and kept as long as the store (never dependent on a topic's retention).
# ``orden`` is the store-wide arrival order (the pooled sequence of a key is its rows in this
# order); ``llegada`` the position in the (key, family) sequence, what ``Evidencia.llegada``
# carries. Both are computed inside the insert's transaction and held unique, so a second
# writer racing on the same number fails and its batch is read again, never numbered twice.
# ``sombra`` is 1 when the gate of the item's family and key was closed when the app stored it
# (shadow mode: every final ficha reaches people, unselected). ``revision_reinicios`` holds, per
# gate, where its sequence starts again after the online bound closed it.
_ESQUEMA_3 = (
    """create table revision_evidencias (
        event_id text primary key,
        clave_id text not null,
        clave text not null,
        familia text not null,
        puntuacion double precision,
        codigo_ok integer not null,
        sombra integer not null,
        orden bigint not null,
        llegada bigint not null
    )""",
    "create unique index revision_evidencias_orden on revision_evidencias (orden)",
    "create unique index revision_evidencias_llegada "
    "on revision_evidencias (clave_id, familia, llegada)",
    """create table revision_reinicios (
        familia text not null,
        clave_id text not null,
        cerrada_en text not null,
        desde bigint not null,
        primary key (familia, clave_id, cerrada_en)
    )""",
)

ESQUEMA = Esquema(
    nombre="revision",
    tabla="revision_migraciones",
    migraciones=(
        Migracion("the schema of the release before migrations", _ESQUEMA_0, _ESQUEMA_0),
        Migracion("items by reason, for the gate's held-back items", _ESQUEMA_1, _ESQUEMA_1),
        Migracion(
            "hashed session tokens, idle timeout, disabled reviewers, the login CSRF secret",
            _ESQUEMA_2,
            _ESQUEMA_2,
        ),
        Migracion(
            "the gates' evidence: key, score, code checks, shadow mode, arrival order; restarts",
            _ESQUEMA_3,
            _ESQUEMA_3,
        ),
    ),
)

# The store's statements on the gates' evidence (the same text on both dialects).
SQL_INSERTAR_EVIDENCIA = (
    "insert into revision_evidencias (event_id, clave_id, clave, familia, puntuacion, codigo_ok, "
    "sombra, orden, llegada) values ($1, $2, $3, $4, $5, $6, $7, "
    "(select coalesce(max(orden), -1) + 1 from revision_evidencias), "
    "(select coalesce(max(llegada), -1) + 1 from revision_evidencias "
    "where clave_id = $2 and familia = $4)) on conflict (event_id) do nothing"
)
SQL_REINICIAR = (
    "insert into revision_reinicios (familia, clave_id, cerrada_en, desde) values ($1, $2, $3, "
    "(select coalesce(max(orden), -1) + 1 from revision_evidencias)) "
    "on conflict (familia, clave_id, cerrada_en) do nothing"
)
SQL_REINICIOS = (
    "select familia, clave_id, max(desde) from revision_reinicios group by familia, clave_id"
)
SQL_SECUENCIAS = (
    "select e.event_id, e.clave_id, e.clave, e.familia, e.puntuacion, e.codigo_ok, e.orden, "
    "e.llegada, i.estado, d.decision from revision_evidencias e "
    "join revision_items i on i.event_id = e.event_id "
    "left join revision_decisiones d on d.event_id = e.event_id "
    "where e.sombra = 1 order by e.orden"
)


async def migrar_postgres(conn: Any) -> Cambio:
    """Migrate the store on ``conn``, which holds the schema lock (``fichas migrar``)."""
    return await migraciones.migrar_postgres(conn, ESQUEMA)


def migrar_sqlite(data_dir: Path) -> Cambio:
    """Migrate ``revision.sqlite`` in ``data_dir``; the caller holds the folder's lock."""
    conn = _conectar_sqlite(data_dir)
    try:
        return migraciones.migrar_sqlite(conn, ESQUEMA)
    finally:
        conn.close()


def _conectar_sqlite(data_dir: Path) -> sqlite3.Connection:
    """The store's file: WAL, a decision survives a power cut, waits 5 s for a busy file."""
    data_dir.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(data_dir / SQLITE_FILE, check_same_thread=False, isolation_level=None)
    conn.execute("pragma journal_mode=wal")
    conn.execute("pragma synchronous=full")
    conn.execute("pragma busy_timeout=5000")
    return conn


@dataclass(frozen=True)
class Filas:
    """What a statement gave: its rows (read in full) and how many rows it changed."""

    filas: list[Any]
    cuenta: int

    def primera(self) -> Any:
        """The first row, or None."""
        return self.filas[0] if self.filas else None


Run = Callable[..., Awaitable[Filas]]


@dataclass(frozen=True)
class Decision:
    """A stored decision: its record for ``fichas.decisiones`` and the publication it implies."""

    event_id: str
    tipo: str
    decision: str
    familia: str
    criterios: list[str]
    revisor: str
    decidida_en: float
    segundos: float
    registro: dict[str, Any]
    publicacion: dict[str, Any] | None
    enviada: bool


@dataclass(frozen=True)
class Cierre:
    """What the store needs to close an item: the decision record and its publication."""

    decision: str
    criterios: list[str]
    revisor: str
    decidida_en: float
    registro: dict[str, Any]
    publicacion: dict[str, Any] | None


@dataclass(frozen=True)
class Llegada:
    """What the store keeps of an arriving item as a gate's evidence (docs/puerta.md).

    ``clave``: the key of the loop that wrote the ficha. ``puntuacion``: its final attempt's
    score (None: no score). ``codigo_ok``: its code checks passed. ``sombra``: the gate of its
    family and key was closed when the app stored it (``revision.flujo.llegada_de``).
    """

    clave: ClavePuerta
    puntuacion: float | None
    codigo_ok: bool
    sombra: bool


@dataclass(frozen=True)
class FilaSecuencia:
    """One shadow-mode item of a gate's sequence, as the certifier reads it."""

    event_id: str
    clave: ClavePuerta
    familia: str
    puntuacion: float | None
    codigo_ok: bool
    orden: int  # store-wide arrival order: the pooled sequence
    llegada: int  # position in the (key, family) sequence
    estado: str  # the item's: abierta, decidida, obsoleta
    decision: str | None


class _Sqlite:
    """One connection; one transaction at a time (an asyncio lock), statements on a thread."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._lock = asyncio.Lock()

    def _ejecutar(self, sql: str, params: Sequence[Any]) -> Filas:
        cursor = self._conn.execute(sql, {str(i): v for i, v in enumerate(params, start=1)})
        return Filas(cursor.fetchall(), cursor.rowcount)

    @asynccontextmanager
    async def transaccion(self) -> AsyncIterator[Run]:
        """``begin immediate`` … ``commit`` (``rollback`` on an error)."""
        async with self._lock:
            await asyncio.to_thread(self._conn.execute, "begin immediate")
            try:

                async def run(sql: str, params: Sequence[Any] = ()) -> Filas:
                    return await asyncio.to_thread(self._ejecutar, sql, tuple(params))

                yield run
            except BaseException:
                await asyncio.to_thread(self._conn.execute, "rollback")
                raise
            await asyncio.to_thread(self._conn.execute, "commit")

    async def cerrar(self) -> None:
        async with self._lock:
            self._conn.close()


class _Postgres:
    """psycopg's async pool; every connection checked before use (a server restart heals)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    @asynccontextmanager
    async def transaccion(self) -> AsyncIterator[Run]:
        """A pooled connection in one transaction."""
        async with self._pool.connection() as conn, conn.transaction():

            async def run(sql: str, params: Sequence[Any] = ()) -> Filas:
                cursor = await conn.execute(sql, tuple(params))
                filas = await cursor.fetchall() if cursor.description else []
                return Filas(list(filas), cursor.rowcount)

            yield run

    async def cerrar(self) -> None:
        await self._pool.close()


class Almacen:
    """The store; SQLite or PostgreSQL behind the same coroutines."""

    def __init__(self, base: _Sqlite | _Postgres) -> None:
        self._base = base

    @classmethod
    async def abrir(cls, postgres_dsn: str | None, data_dir: Path) -> Almacen:
        """Open the store the configuration names, migrated under the schema lock."""
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
                    "application_name": APLICACION,
                    **postgres_connection_kwargs(),
                },
            )
            await pool.open(wait=True)
            return cls(_Postgres(pool))
        async with cerrojo_sqlite(data_dir):
            await asyncio.to_thread(migrar_sqlite, data_dir)
        return cls(_Sqlite(await asyncio.to_thread(_conectar_sqlite, data_dir)))

    async def cerrar(self) -> None:
        """Close the connection or the pool."""
        await self._base.cerrar()

    def _transaction(self) -> Any:
        """One transaction; yields ``await run(sql, params) -> Filas`` (``$n`` placeholders)."""
        return self._base.transaccion()

    async def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """A read in its own short transaction."""
        async with self._transaction() as run:
            return (await run(sql, params)).filas

    # ------------------------------------------------------------------ items

    async def guardar_item(
        self,
        event_id: str,
        tipo: str,
        motivo: str,
        sku: str,
        version: int,
        familia: str,
        criterios: list[str],
        datos: dict[str, Any],
        ahora: float,
        llegada: Llegada | None = None,
    ) -> list[Decision]:
        """Store an item once per ``event_id`` and apply supersession in one transaction.

        Returns the decisions ``obsoleta`` written for older open items of the SKU (and for this
        item itself when a newer version was already seen), for the caller to send. ``llegada``
        (when the record carries the loop's key) is stored in the same transaction as the
        gates' evidence, with its arrival positions.
        """
        async with self._transaction() as run:
            previa = await _max_version(run, sku)
            estado = OBSOLETA if previa is not None and previa > version else ABIERTA
            insertado = await run(
                "insert into revision_items (event_id, tipo, motivo, sku, version, familia, "
                "criterios, datos, recibido_en, estado, cerrado_en) values "
                "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) on conflict (event_id) do nothing",
                (
                    event_id,
                    tipo,
                    motivo,
                    sku,
                    version,
                    familia,
                    json.dumps(criterios),
                    json.dumps(datos, ensure_ascii=False),
                    ahora,
                    estado,
                    ahora if estado == OBSOLETA else None,
                ),
            )
            if not insertado.cuenta:
                return []
            if llegada is not None:
                await run(
                    SQL_INSERTAR_EVIDENCIA,
                    (
                        event_id,
                        llegada.clave.texto(),
                        llegada.clave.model_dump_json(),
                        familia,
                        llegada.puntuacion,
                        int(llegada.codigo_ok),
                        int(llegada.sombra),
                    ),
                )
            cerradas = await _supersede(run, sku, version, ahora)
            if estado == OBSOLETA:
                item = await _item_row(run, event_id)
                assert item is not None
                cerradas.append(await _insert_obsoleta(run, item, ahora))
            return cerradas

    async def observar_version(self, sku: str, version: int, ahora: float) -> list[Decision]:
        """A version of ``sku`` was published: close older open items, remember the version."""
        async with self._transaction() as run:
            return await _supersede(run, sku, version, ahora)

    async def version_vista(self, sku: str) -> int | None:
        """The newest version of ``sku`` this app has seen on any topic it reads."""
        async with self._transaction() as run:
            return await _max_version(run, sku)

    async def item(self, event_id: str) -> Item | None:
        """One item, whatever its state."""
        async with self._transaction() as run:
            return await _item_row(run, event_id)

    async def abiertos(self) -> list[Item]:
        """Every open item, oldest first (the queue; filters are applied by the caller)."""
        rows = await self._query(
            f"{_ITEM_SELECT} where i.estado = $1 order by i.recibido_en, i.event_id", (ABIERTA,)
        )
        return [_item(row) for row in rows]

    async def siguiente(self, despues_de: str) -> str | None:
        """The oldest open item other than ``despues_de`` (where "next" takes a reviewer)."""
        rows = await self._query(
            "select event_id from revision_items where estado = $1 and event_id <> $2 "
            "order by recibido_en, event_id limit 1",
            (ABIERTA, despues_de),
        )
        return str(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ decisions

    async def decidir(self, item: Item, cierre: Cierre) -> Decision | None:
        """Close an open item with a decision; None when it was not open any more.

        The conditional update is the arbiter between reviewers racing on one item and
        between a reviewer and the supersession of the item.
        """
        async with self._transaction() as run:
            cerrado = await run(
                "update revision_items set estado = $1, cerrado_en = $2 "
                "where event_id = $3 and estado = $4",
                (DECIDIDA, cierre.decidida_en, item.event_id, ABIERTA),
            )
            if not cerrado.cuenta:
                return None
            return await _insert_decision(run, item, cierre)

    async def decision(self, event_id: str) -> Decision | None:
        """The decision of an item, if any."""
        rows = await self._query(
            f"select {_DECISION_COLUMNS} from revision_decisiones where event_id = $1", (event_id,)
        )
        return _decision(rows[0]) if rows else None

    async def pendientes(self, anteriores_a: float | None = None) -> list[Decision]:
        """Decisions whose records the broker has not acknowledged yet, oldest first."""
        sql = f"select {_DECISION_COLUMNS} from revision_decisiones where enviada = 0"
        params: tuple[Any, ...] = ()
        if anteriores_a is not None:
            sql += " and decidida_en < $1"
            params = (anteriores_a,)
        return [_decision(row) for row in await self._query(sql + " order by decidida_en", params)]

    async def marcar_enviada(self, event_id: str) -> None:
        """The broker acknowledged the decision's records."""
        async with self._transaction() as run:
            await run("update revision_decisiones set enviada = 1 where event_id = $1", (event_id,))

    async def decisiones(self, tipo: str | None = None) -> list[Decision]:
        """Every decision (of one kind), oldest first: the input of the trust figures."""
        sql = f"select {_DECISION_COLUMNS} from revision_decisiones"
        params: tuple[Any, ...] = ()
        if tipo is not None:
            sql += " where tipo = $1"
            params = (tipo,)
        return [_decision(row) for row in await self._query(sql + " order by decidida_en", params)]

    async def resumen_abiertos(self) -> tuple[dict[str, int], float | None]:
        """Open items per reason and the arrival time of the oldest (for ``/metrics``)."""
        rows = await self._query(
            "select motivo, count(*), min(recibido_en) from revision_items where estado = $1 "
            "group by motivo",
            (ABIERTA,),
        )
        cuentas = {str(m): int(n) for m, n, _ in rows}
        primero = min((float(t) for _, _, t in rows), default=None)
        return cuentas, primero

    async def decisiones_resumidas(self) -> list[tuple[str, str, str, list[str], str, float]]:
        """(tipo, decision, familia, criterios, revisor, segundos) of every decision, oldest
        first: what the metrics need, without the stored records."""
        rows = await self._query(
            "select tipo, decision, familia, criterios, revisor, segundos "
            "from revision_decisiones order by decidida_en"
        )
        return [
            (str(t), str(d), str(f), list(json.loads(c)), str(r), float(sg))
            for t, d, f, c, r, sg in rows
        ]

    async def veredictos_muestra(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(event_id, decision, the published record) of every ``correcta``/``incorrecta``
        verdict on the sample, in the order they were taken: the input the online bound of
        ``revision.vigilancia`` is rebuilt from at start-up (no state of its own to migrate)."""
        rows = await self._query(
            "select d.event_id, d.decision, i.datos from revision_decisiones d "
            "join revision_items i on i.event_id = d.event_id "
            "where d.tipo = $1 and d.decision in ($2, $3) order by d.decidida_en, d.event_id",
            (TIPO_MUESTRA, DECISION_CORRECTA, DECISION_INCORRECTA),
        )
        return [(str(e), str(d), dict(json.loads(datos))) for e, d, datos in rows]

    async def retenidas(self) -> list[tuple[str, str, str | None]]:
        """(event_id, familia, decision or None while open) of every item the gate held back
        (motivo ``sin_garantia``), oldest first: what recall is measured on."""
        rows = await self._query(
            "select i.event_id, i.familia, d.decision from revision_items i "
            "left join revision_decisiones d on d.event_id = i.event_id "
            "where i.motivo = $1 order by i.recibido_en, i.event_id",
            (MOTIVO_SIN_GARANTIA,),
        )
        return [(str(e), str(f), None if d is None else str(d)) for e, f, d in rows]

    async def cerrados(self) -> list[tuple[Item, str | None]]:
        """(item, its decision) of every closed item, in arrival order: the stored fichas with
        people's labels that ``fichas calibrar --recalificar`` re-scores. Read-only; an item
        closed ``obsoleta`` is returned too, so the command can count what it leaves out."""
        decision = "(select d.decision from revision_decisiones d where d.event_id = i.event_id)"
        rows = await self._query(
            f"{_ITEM_SELECT.replace(' from ', f', {decision} from ', 1)} "
            "where i.estado <> $1 order by i.recibido_en, i.event_id",
            (ABIERTA,),
        )
        return [(_item(row[:15]), None if row[15] is None else str(row[15])) for row in rows]

    async def cuentas_decisiones(self) -> dict[tuple[str, str], int]:
        """Decisions per (tipo, decision), for the ``_total`` counter read at scrape time."""
        rows = await self._query(
            "select tipo, decision, count(*) from revision_decisiones group by tipo, decision"
        )
        return {(str(t), str(d)): int(n) for t, d, n in rows}

    # ------------------------------------------------------------------ the gates' evidence

    async def secuencias(self) -> list[FilaSecuencia]:
        """Every shadow-mode item with its state and decision, in store-wide arrival order:
        what ``revision.apertura`` cuts into each gate's sequence."""
        rows = await self._query(SQL_SECUENCIAS)
        return [
            FilaSecuencia(
                event_id=str(r[0]),
                clave=ClavePuerta.model_validate_json(r[2]),
                familia=str(r[3]),
                puntuacion=None if r[4] is None else float(r[4]),
                codigo_ok=bool(r[5]),
                orden=int(r[6]),
                llegada=int(r[7]),
                estado=str(r[8]),
                decision=None if r[9] is None else str(r[9]),
            )
            for r in rows
        ]

    async def reiniciar(self, familia: str, clave_id: str, cerrada_en: str) -> None:
        """The gate (``familia`` or ``*``, key id) was closed by the online bound at
        ``cerrada_en``: its sequence starts again after every item stored so far. Once per
        closure (a closure seen again changes nothing)."""
        async with self._transaction() as run:
            await run(SQL_REINICIAR, (familia, clave_id, cerrada_en))

    async def reinicios(self) -> dict[tuple[str, str], int]:
        """(familia, key id) -> the store-wide arrival order its sequence starts at now."""
        rows = await self._query(SQL_REINICIOS)
        return {(str(f), str(c)): int(d) for f, c, d in rows}

    # ------------------------------------------------------------------ users and sessions

    async def guardar_usuario(self, nombre: str, hash_: str) -> None:
        """Add a reviewer or replace their password hash (enabling them again); every session
        of theirs ends, so a password changed after a leak shuts out whoever had it."""
        async with self._transaction() as run:
            await run(
                "insert into revision_usuarios (nombre, hash, activo) values ($1, $2, 1) "
                "on conflict (nombre) do update set hash = excluded.hash, activo = 1",
                (nombre, hash_),
            )
            await run("delete from revision_sesiones where usuario = $1", (nombre,))

    async def dar_de_baja(self, nombre: str) -> bool:
        """Disable a reviewer and end their sessions; False when there is no such reviewer.
        The row stays, so their past decisions still name someone the store knows."""
        async with self._transaction() as run:
            cambiado = await run(
                "update revision_usuarios set activo = 0 where nombre = $1", (nombre,)
            )
            await run("delete from revision_sesiones where usuario = $1", (nombre,))
            return bool(cambiado.cuenta)

    async def hash_de(self, nombre: str) -> str | None:
        """The stored password hash of an enabled reviewer."""
        rows = await self._query(
            "select hash from revision_usuarios where nombre = $1 and activo = 1", (nombre,)
        )
        return str(rows[0][0]) if rows else None

    async def abrir_sesion(
        self, token_sha256: str, usuario: str, csrf: str, ahora: float, expira: float
    ) -> None:
        """Store a session by its token's hash; it replaces any other session of the reviewer
        (a new login ends the old one), and expired ones are purged on the way."""
        async with self._transaction() as run:
            await run("delete from revision_sesiones where expira < $1", (ahora,))
            await run("delete from revision_sesiones where usuario = $1", (usuario,))
            await run(
                "insert into revision_sesiones (token_sha256, usuario, csrf, creada, usada, "
                "expira) values ($1, $2, $3, $4, $4, $5)",
                (token_sha256, usuario, csrf, ahora, expira),
            )

    async def sesion(
        self, token_sha256: str, ahora: float, inactividad_s: float
    ) -> tuple[str, str] | None:
        """(reviewer, CSRF token) of a live session: not expired, used within
        ``inactividad_s``, of a reviewer who still exists and is enabled. Marks it used (at
        most once every ``USO_S``, or a quarter of the idle timeout if shorter, so reading a
        page is not a write each time)."""
        async with self._transaction() as run:
            fila = (
                await run(
                    "select s.usuario, s.csrf, s.token_sha256 from revision_sesiones s "
                    "join revision_usuarios u on u.nombre = s.usuario "
                    "where s.token_sha256 = $1 and s.expira >= $2 and s.usada >= $3 "
                    "and u.activo = 1",
                    (token_sha256, ahora, ahora - inactividad_s),
                )
            ).primera()
            if fila is None or not hmac.compare_digest(str(fila[2]), token_sha256):
                return None
            await run(
                "update revision_sesiones set usada = $1 where token_sha256 = $2 and usada < $3",
                (ahora, token_sha256, ahora - min(USO_S, inactividad_s / 4)),
            )
            return str(fila[0]), str(fila[1])

    async def cerrar_sesion(self, token_sha256: str) -> None:
        """Forget a session (logout)."""
        async with self._transaction() as run:
            await run("delete from revision_sesiones where token_sha256 = $1", (token_sha256,))

    async def secreto(self, nombre: str) -> bytes:
        """A server-side secret by name, made at random on first use and shared by every
        process on this store (the key of the login form's CSRF token)."""
        async with self._transaction() as run:
            await run(
                "insert into revision_secretos (nombre, valor) values ($1, $2) "
                "on conflict (nombre) do nothing",
                (nombre, secrets.token_hex(32)),
            )
            fila = (
                await run("select valor from revision_secretos where nombre = $1", (nombre,))
            ).primera()
            return bytes.fromhex(str(fila[0]))


# An item with its evidence (if any), which every decision on it carries (``Evidencia``).
_ITEM_SELECT = (
    "select i.event_id, i.tipo, i.motivo, i.sku, i.version, i.familia, i.criterios, i.datos, "
    "i.recibido_en, i.estado, i.cerrado_en, e.clave, e.puntuacion, e.codigo_ok, e.llegada "
    "from revision_items i left join revision_evidencias e on e.event_id = i.event_id"
)
_DECISION_COLUMNS = (
    "event_id, tipo, decision, familia, criterios, revisor, decidida_en, segundos, registro, "
    "publicacion, enviada"
)


def _item(row: Sequence[Any]) -> Item:
    return Item(
        event_id=str(row[0]),
        tipo=str(row[1]),
        motivo=str(row[2]),
        sku=str(row[3]),
        version=int(row[4]),
        familia=str(row[5]),
        criterios=list(json.loads(row[6])),
        datos=dict(json.loads(row[7])),
        recibido_en=float(row[8]),
        estado=str(row[9]),
        cerrado_en=None if row[10] is None else float(row[10]),
        evidencia=_evidencia(row[5], row[11:15]) if len(row) > 11 else None,
    )


def _evidencia(familia: str, columnas: Sequence[Any]) -> dict[str, Any] | None:
    """The ``Evidencia`` of an item (JSON-ready), or None: no key, or no score (contract v1.3:
    a decision on a ficha without a score is evidence of nothing)."""
    clave, puntuacion, codigo_ok, llegada = columnas
    if clave is None or puntuacion is None:
        return None
    return {
        "familia": str(familia),
        "clave": json.loads(clave),
        "puntuacion": float(puntuacion),
        "codigo_ok": bool(codigo_ok),
        "llegada": int(llegada),
    }


def _decision(row: Sequence[Any]) -> Decision:
    return Decision(
        event_id=str(row[0]),
        tipo=str(row[1]),
        decision=str(row[2]),
        familia=str(row[3]),
        criterios=list(json.loads(row[4])),
        revisor=str(row[5]),
        decidida_en=float(row[6]),
        segundos=float(row[7]),
        registro=dict(json.loads(row[8])),
        publicacion=None if row[9] is None else dict(json.loads(row[9])),
        enviada=bool(row[10]),
    )


async def _item_row(run: Any, event_id: str) -> Item | None:
    filas = await run(f"{_ITEM_SELECT} where i.event_id = $1", (event_id,))
    found = filas.primera()
    return _item(found) if found else None


async def _max_version(run: Any, sku: str) -> int | None:
    row = (await run("select version from revision_skus where sku = $1", (sku,))).primera()
    return int(row[0]) if row else None


async def _supersede(run: Any, sku: str, version: int, ahora: float) -> list[Decision]:
    """Raise the SKU's newest version and close its older open items as ``obsoleta``."""
    await run(
        "insert into revision_skus (sku, version) values ($1, $2) on conflict (sku) do update "
        "set version = case when excluded.version > revision_skus.version "
        "then excluded.version else revision_skus.version end",
        (sku, version),
    )
    viejos = await run(
        f"{_ITEM_SELECT} where i.sku = $1 and i.estado = $2 and i.version < $3",
        (sku, ABIERTA, version),
    )
    cerradas = []
    for row in viejos.filas:
        item = _item(row)
        await run(
            "update revision_items set estado = $1, cerrado_en = $2 where event_id = $3",
            (OBSOLETA, ahora, item.event_id),
        )
        cerradas.append(await _insert_obsoleta(run, item, ahora))
    return cerradas


async def _insert_obsoleta(run: Any, item: Item, ahora: float) -> Decision:
    """The system's decision for a superseded item (no publication)."""
    cierre = Cierre(
        decision=DECISION_OBSOLETA,
        criterios=[],
        revisor=REVISOR_SISTEMA,
        decidida_en=ahora,
        registro=decision_de(item, DECISION_OBSOLETA, REVISOR_SISTEMA, ahora),
        publicacion=None,
    )
    return await _insert_decision(run, item, cierre)


async def _insert_decision(run: Any, item: Item, cierre: Cierre) -> Decision:
    """Write the decision row (the outbox entry) inside the caller's transaction."""
    decision = Decision(
        event_id=item.event_id,
        tipo=item.tipo,
        decision=cierre.decision,
        familia=item.familia,
        criterios=cierre.criterios,
        revisor=cierre.revisor,
        decidida_en=cierre.decidida_en,
        segundos=max(0.0, cierre.decidida_en - item.recibido_en),
        registro=cierre.registro,
        publicacion=cierre.publicacion,
        enviada=False,
    )
    await run(
        f"insert into revision_decisiones ({_DECISION_COLUMNS}) values "
        "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0)",
        (
            decision.event_id,
            decision.tipo,
            decision.decision,
            decision.familia,
            json.dumps(decision.criterios),
            decision.revisor,
            decision.decidida_en,
            decision.segundos,
            json.dumps(decision.registro, ensure_ascii=False),
            None
            if decision.publicacion is None
            else json.dumps(decision.publicacion, ensure_ascii=False),
        ),
    )
    return decision


def existe(postgres_dsn: str | None, data_dir: Path) -> bool:
    """Whether a store is there to read (a report never creates an empty one by accident)."""
    return bool(postgres_dsn) or (data_dir / SQLITE_FILE).exists()


__all__ = [
    "ABIERTA",
    "DECIDIDA",
    "OBSOLETA",
    "TIPO_MUESTRA",
    "Almacen",
    "Cierre",
    "Decision",
    "FilaSecuencia",
    "Item",
    "Llegada",
]
