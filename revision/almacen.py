"""The reviewer app's state: items, decisions (the outbox), versions seen, users, sessions.

One small SQL dialect serves both back ends: embedded SQLite in ``FICHAS_DATA_DIR`` and
PostgreSQL when ``FICHAS_POSTGRES_DSN`` is set (tables prefixed ``revision_`` so they live next
to the worker's). Every method is synchronous and short; the web app calls them through
``asyncio.to_thread`` so a slow database never stalls other requests. One connection per
process, guarded by a lock: the app's load (people clicking) is far below what that serves.

Why the guarantees hold:
- one item per ``event_id``: the primary key, and ``insert ... on conflict do nothing``;
- one decision per item: deciding is a conditional update (``estado = 'abierta'``) and the
  decision row is written in the same transaction, so two reviewers racing get one winner;
- nothing lost between decision and publication: the decision row, with the publication it
  implies, is committed before anything is sent (``enviada = 0``), and only marked sent after
  the broker acknowledged both records (the outbox pattern).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from esquemas.constantes import (
    DECISION_CORRECTA,
    DECISION_INCORRECTA,
    DECISION_OBSOLETA,
    MOTIVO_SIN_GARANTIA,
    REVISOR_SISTEMA,
    TIPO_MUESTRA,
)
from revision.decisiones import registro_decision
from revision.item import Item

SQLITE_FILE = "revision.sqlite"

ABIERTA = "abierta"
DECIDIDA = "decidida"
OBSOLETA = "obsoleta"

ESQUEMA = (
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


class _Cursor(Protocol):
    rowcount: int

    def fetchall(self) -> list[Any]: ...

    def fetchone(self) -> Any: ...


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


class Almacen:
    """The store on one connection; SQLite or PostgreSQL behind the same methods."""

    def __init__(self, conn: Any, postgres: bool, dsn: str | None = None) -> None:
        self._conn = conn
        self._postgres = postgres
        self._dsn = dsn
        self._lock = threading.Lock()

    @classmethod
    def abrir(cls, postgres_dsn: str | None, data_dir: Path) -> Almacen:
        """Open (and create if missing) the store the configuration names."""
        if postgres_dsn:
            import psycopg

            conn: Any = psycopg.connect(postgres_dsn, autocommit=True)
            almacen = cls(conn, postgres=True, dsn=postgres_dsn)
        else:
            data_dir.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                data_dir / SQLITE_FILE, check_same_thread=False, isolation_level=None
            )
            conn.execute("pragma journal_mode=wal")
            conn.execute("pragma synchronous=full")  # a decision survives a power cut
            conn.execute("pragma busy_timeout=5000")
            almacen = cls(conn, postgres=False)
        with almacen._transaction() as run:
            for sentencia in ESQUEMA:
                run(sentencia)
        return almacen

    def cerrar(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()

    # ------------------------------------------------------------------ plumbing

    @contextmanager
    def _transaction(self) -> Iterator[Any]:
        """One transaction; yields ``run(sql, params) -> cursor`` with ``?`` placeholders."""
        with self._lock:
            if self._postgres:
                if self._conn.closed:  # the server restarted or the link broke: a new one
                    import psycopg

                    self._conn = psycopg.connect(self._dsn or "", autocommit=True)
                with self._conn.transaction():

                    def run_pg(sql: str, params: Sequence[Any] = ()) -> _Cursor:
                        return self._conn.execute(sql.replace("?", "%s"), tuple(params))  # type: ignore[no-any-return]

                    yield run_pg
                return
            self._conn.execute("begin immediate")
            try:

                def run_sqlite(sql: str, params: Sequence[Any] = ()) -> _Cursor:
                    return self._conn.execute(sql, tuple(params))  # type: ignore[no-any-return]

                yield run_sqlite
            except BaseException:
                self._conn.execute("rollback")
                raise
            self._conn.execute("commit")

    def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """A read in its own short transaction."""
        with self._transaction() as run:
            return list(run(sql, params).fetchall())

    # ------------------------------------------------------------------ items

    def guardar_item(
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
    ) -> list[Decision]:
        """Store an item once per ``event_id`` and apply supersession in one transaction.

        Returns the decisions ``obsoleta`` written for older open items of the SKU (and for this
        item itself when a newer version was already seen), for the caller to send.
        """
        with self._transaction() as run:
            previa = _max_version(run, sku)
            estado = OBSOLETA if previa is not None and previa > version else ABIERTA
            insertado = run(
                "insert into revision_items (event_id, tipo, motivo, sku, version, familia, "
                "criterios, datos, recibido_en, estado, cerrado_en) values "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict (event_id) do nothing",
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
            ).rowcount
            if not insertado:
                return []
            cerradas = _supersede(run, sku, version, ahora)
            if estado == OBSOLETA:
                item = _item_row(run, event_id)
                assert item is not None
                cerradas.append(_insert_obsoleta(run, item, ahora))
            return cerradas

    def observar_version(self, sku: str, version: int, ahora: float) -> list[Decision]:
        """A version of ``sku`` was published: close older open items, remember the version."""
        with self._transaction() as run:
            return _supersede(run, sku, version, ahora)

    def version_vista(self, sku: str) -> int | None:
        """The newest version of ``sku`` this app has seen on any topic it reads."""
        with self._transaction() as run:
            return _max_version(run, sku)

    def item(self, event_id: str) -> Item | None:
        """One item, whatever its state."""
        with self._transaction() as run:
            return _item_row(run, event_id)

    def abiertos(self) -> list[Item]:
        """Every open item, oldest first (the queue; filters are applied by the caller)."""
        rows = self._query(
            f"select {_ITEM_COLUMNS} from revision_items where estado = ? "
            "order by recibido_en, event_id",
            (ABIERTA,),
        )
        return [_item(row) for row in rows]

    def siguiente(self, despues_de: str) -> str | None:
        """The oldest open item other than ``despues_de`` (where "next" takes a reviewer)."""
        rows = self._query(
            "select event_id from revision_items where estado = ? and event_id <> ? "
            "order by recibido_en, event_id limit 1",
            (ABIERTA, despues_de),
        )
        return str(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ decisions

    def decidir(self, item: Item, cierre: Cierre) -> Decision | None:
        """Close an open item with a decision; None when it was not open any more.

        The conditional update is the arbiter between reviewers racing on one item and
        between a reviewer and the supersession of the item.
        """
        with self._transaction() as run:
            cerrado = run(
                "update revision_items set estado = ?, cerrado_en = ? "
                "where event_id = ? and estado = ?",
                (DECIDIDA, cierre.decidida_en, item.event_id, ABIERTA),
            ).rowcount
            if not cerrado:
                return None
            return _insert_decision(run, item, cierre)

    def decision(self, event_id: str) -> Decision | None:
        """The decision of an item, if any."""
        rows = self._query(
            f"select {_DECISION_COLUMNS} from revision_decisiones where event_id = ?", (event_id,)
        )
        return _decision(rows[0]) if rows else None

    def pendientes(self, anteriores_a: float | None = None) -> list[Decision]:
        """Decisions whose records the broker has not acknowledged yet, oldest first."""
        sql = f"select {_DECISION_COLUMNS} from revision_decisiones where enviada = 0"
        params: tuple[Any, ...] = ()
        if anteriores_a is not None:
            sql += " and decidida_en < ?"
            params = (anteriores_a,)
        return [_decision(row) for row in self._query(sql + " order by decidida_en", params)]

    def marcar_enviada(self, event_id: str) -> None:
        """The broker acknowledged the decision's records."""
        with self._transaction() as run:
            run("update revision_decisiones set enviada = 1 where event_id = ?", (event_id,))

    def decisiones(self, tipo: str | None = None) -> list[Decision]:
        """Every decision (of one kind), oldest first: the input of the trust figures."""
        sql = f"select {_DECISION_COLUMNS} from revision_decisiones"
        params: tuple[Any, ...] = ()
        if tipo is not None:
            sql += " where tipo = ?"
            params = (tipo,)
        return [_decision(row) for row in self._query(sql + " order by decidida_en", params)]

    def resumen_abiertos(self) -> tuple[dict[str, int], float | None]:
        """Open items per reason and the arrival time of the oldest (for ``/metrics``)."""
        rows = self._query(
            "select motivo, count(*), min(recibido_en) from revision_items where estado = ? "
            "group by motivo",
            (ABIERTA,),
        )
        cuentas = {str(m): int(n) for m, n, _ in rows}
        primero = min((float(t) for _, _, t in rows), default=None)
        return cuentas, primero

    def decisiones_resumidas(self) -> list[tuple[str, str, str, list[str], str, float]]:
        """(tipo, decision, familia, criterios, revisor, segundos) of every decision, oldest
        first: what the metrics need, without the stored records."""
        rows = self._query(
            "select tipo, decision, familia, criterios, revisor, segundos "
            "from revision_decisiones order by decidida_en"
        )
        return [
            (str(t), str(d), str(f), list(json.loads(c)), str(r), float(sg))
            for t, d, f, c, r, sg in rows
        ]

    def veredictos_muestra(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(event_id, decision, the published record) of every ``correcta``/``incorrecta``
        verdict on the sample, in the order they were taken: the input the online bound of
        ``revision.vigilancia`` is rebuilt from at start-up (no state of its own to migrate)."""
        rows = self._query(
            "select d.event_id, d.decision, i.datos from revision_decisiones d "
            "join revision_items i on i.event_id = d.event_id "
            "where d.tipo = ? and d.decision in (?, ?) order by d.decidida_en, d.event_id",
            (TIPO_MUESTRA, DECISION_CORRECTA, DECISION_INCORRECTA),
        )
        return [(str(e), str(d), dict(json.loads(datos))) for e, d, datos in rows]

    def retenidas(self) -> list[tuple[str, str, str | None]]:
        """(event_id, familia, decision or None while open) of every item the gate held back
        (motivo ``sin_garantia``), oldest first: what recall is measured on."""
        rows = self._query(
            "select i.event_id, i.familia, d.decision from revision_items i "
            "left join revision_decisiones d on d.event_id = i.event_id "
            "where i.motivo = ? order by i.recibido_en, i.event_id",
            (MOTIVO_SIN_GARANTIA,),
        )
        return [(str(e), str(f), None if d is None else str(d)) for e, f, d in rows]

    def cuentas_decisiones(self) -> dict[tuple[str, str], int]:
        """Decisions per (tipo, decision), for the ``_total`` counter read at scrape time."""
        rows = self._query(
            "select tipo, decision, count(*) from revision_decisiones group by tipo, decision"
        )
        return {(str(t), str(d)): int(n) for t, d, n in rows}

    # ------------------------------------------------------------------ users and sessions

    def guardar_usuario(self, nombre: str, hash_: str) -> None:
        """Add a reviewer or replace their password hash."""
        with self._transaction() as run:
            run(
                "insert into revision_usuarios (nombre, hash) values (?, ?) "
                "on conflict (nombre) do update set hash = excluded.hash",
                (nombre, hash_),
            )

    def hash_de(self, nombre: str) -> str | None:
        """The stored password hash of a reviewer."""
        rows = self._query("select hash from revision_usuarios where nombre = ?", (nombre,))
        return str(rows[0][0]) if rows else None

    def abrir_sesion(self, token: str, usuario: str, csrf: str, expira: float) -> None:
        """Store a session; expired ones are purged on the way."""
        with self._transaction() as run:
            run("delete from revision_sesiones where expira < ?", (time.time(),))
            run(
                "insert into revision_sesiones (token, usuario, csrf, expira) values (?, ?, ?, ?)",
                (token, usuario, csrf, expira),
            )

    def sesion(self, token: str) -> tuple[str, str] | None:
        """(reviewer, CSRF token) of a live session."""
        rows = self._query(
            "select usuario, csrf from revision_sesiones where token = ? and expira >= ?",
            (token, time.time()),
        )
        return (str(rows[0][0]), str(rows[0][1])) if rows else None

    def cerrar_sesion(self, token: str) -> None:
        """Forget a session (logout)."""
        with self._transaction() as run:
            run("delete from revision_sesiones where token = ?", (token,))


_ITEM_COLUMNS = (
    "event_id, tipo, motivo, sku, version, familia, criterios, datos, recibido_en, estado, "
    "cerrado_en"
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
    )


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


def _item_row(run: Any, event_id: str) -> Item | None:
    row = run(f"select {_ITEM_COLUMNS} from revision_items where event_id = ?", (event_id,))
    found = row.fetchone()
    return _item(found) if found else None


def _max_version(run: Any, sku: str) -> int | None:
    row = run("select version from revision_skus where sku = ?", (sku,)).fetchone()
    return int(row[0]) if row else None


def _supersede(run: Any, sku: str, version: int, ahora: float) -> list[Decision]:
    """Raise the SKU's newest version and close its older open items as ``obsoleta``."""
    run(
        "insert into revision_skus (sku, version) values (?, ?) on conflict (sku) do update "
        "set version = case when excluded.version > revision_skus.version "
        "then excluded.version else revision_skus.version end",
        (sku, version),
    )
    viejos = run(
        f"select {_ITEM_COLUMNS} from revision_items where sku = ? and estado = ? and version < ?",
        (sku, ABIERTA, version),
    ).fetchall()
    cerradas = []
    for row in viejos:
        item = _item(row)
        run(
            "update revision_items set estado = ?, cerrado_en = ? where event_id = ?",
            (OBSOLETA, ahora, item.event_id),
        )
        cerradas.append(_insert_obsoleta(run, item, ahora))
    return cerradas


def _insert_obsoleta(run: Any, item: Item, ahora: float) -> Decision:
    """The system's decision for a superseded item (no publication)."""
    cierre = Cierre(
        decision=DECISION_OBSOLETA,
        criterios=[],
        revisor=REVISOR_SISTEMA,
        decidida_en=ahora,
        registro=registro_decision(item, DECISION_OBSOLETA, REVISOR_SISTEMA, ahora),
        publicacion=None,
    )
    return _insert_decision(run, item, cierre)


def _insert_decision(run: Any, item: Item, cierre: Cierre) -> Decision:
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
    run(
        f"insert into revision_decisiones ({_DECISION_COLUMNS}) values "
        "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)",
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
    "Item",
]
