"""The review queue's store: items, decisions (the outbox), versions seen, the gates' evidence.

Apart from the reviewers' accounts (``revision.almacen.cuentas``): this store changes with what is
reviewed, that one with who may review. Both run on the app's one database
(``revision.almacen.database``: a ``migraciones.Database`` on SQLite in ``FICHAS_DATA_DIR`` or
PostgreSQL, its schema in ``revision.almacen.migrations``), with the same SQL strategy: the
statements below are module constants, one text for both dialects (none needs a pair), ``$n``
placeholders.

Why the guarantees hold:
- one item per id (``revision.almacen.item.id_item``): the primary key, and ``insert ... on conflict
  do nothing``;
- one decision per item: deciding is a conditional update (``estado = 'abierta'``) and the
  decision row is written in the same transaction, so two reviewers racing get one winner;
- nothing lost between decision and publication: the decision row, with the publication it
  implies, is committed before anything is sent (``enviada = 0``), and only marked sent after
  the broker acknowledged both records (the outbox pattern);
- a candidate's item is a label only: its decision row is stored as sent (nothing to send),
  and no live figure reads it (docs/revision.md, "La vista candidata").
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from esquemas.constantes import (
    DECISION_CORRECTA,
    DECISION_INCORRECTA,
    DECISION_OBSOLETA,
    FAMILIA_TODAS,
    MOTIVO_SIN_GARANTIA,
    REVISOR_SISTEMA,
    TIPO_MUESTRA,
    TIPO_REVISION,
)
from esquemas.estado_puerta import ClavePuerta
from migraciones import Database, Run
from revision.almacen.database import open_database
from revision.almacen.decisiones import decision_de
from revision.almacen.item import Item

ABIERTA = "abierta"
DECIDIDA = "decidida"
OBSOLETA = "obsoleta"

# ---------------------------------------------------------------------------- the statements

# An item with its evidence (if any), which every decision on it carries (``Evidencia``).
_ITEM_SELECT = (
    "select i.event_id, i.tipo, i.motivo, i.sku, i.version, i.familia, i.criterios, i.datos, "
    "i.recibido_en, i.estado, i.cerrado_en, i.candidata, e.clave, e.puntuacion, e.codigo_ok, "
    "e.llegada, e.sombra "
    "from revision_items i left join revision_evidencias e on e.event_id = i.event_id"
)
_DECISION_COLUMNS = (
    "event_id, tipo, decision, familia, criterios, revisor, decidida_en, segundos, registro, "
    "publicacion, enviada"
)

SQL_ITEM = f"{_ITEM_SELECT} where i.event_id = $1"
SQL_INSERTAR_ITEM = (
    "insert into revision_items (event_id, tipo, motivo, sku, version, familia, criterios, "
    "datos, recibido_en, estado, cerrado_en, candidata) values "
    "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict (event_id) do nothing"
)
# Each queue view (the main queue, the candidate's) is its own: ``candidata`` 0 or 1.
SQL_ABIERTOS = (
    f"{_ITEM_SELECT} where i.estado = $1 and i.candidata = $2 order by i.recibido_en, i.event_id"
)
SQL_SIGUIENTE = (
    "select event_id from revision_items where estado = $1 and candidata = $3 "
    "and event_id <> $2 order by recibido_en, event_id limit 1"
)
SQL_CUENTA_VISTA = "select count(*) from revision_items where estado = $1 and candidata = $2"
SQL_CERRAR_ITEM = "update revision_items set estado = $1, cerrado_en = $2 where event_id = $3"
# The arbiter between reviewers racing on one item, and between a reviewer and supersession.
SQL_DECIDIR_ITEM = (
    "update revision_items set estado = $1, cerrado_en = $2 where event_id = $3 and estado = $4"
)
# The closed items with their decision and whether they arrived in shadow mode: what
# ``fichas calibrar --recalificar`` re-scores (shadow-mode items only).
SQL_CERRADOS = (
    _ITEM_SELECT.replace(
        " from ",
        ", (select d.decision from revision_decisiones d where d.event_id = i.event_id) from ",
        1,
    )
    + " where i.estado <> $1 and i.candidata = 0 order by i.recibido_en, i.event_id"
)

SQL_VERSION_VISTA = "select version from revision_skus where sku = $1"
SQL_SUBIR_VERSION = (
    "insert into revision_skus (sku, version) values ($1, $2) on conflict (sku) do update "
    "set version = case when excluded.version > revision_skus.version "
    "then excluded.version else revision_skus.version end"
)
SQL_ABIERTOS_ANTERIORES = f"{_ITEM_SELECT} where i.sku = $1 and i.estado = $2 and i.version < $3"

SQL_INSERTAR_DECISION = (
    f"insert into revision_decisiones ({_DECISION_COLUMNS}) values "
    "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
)
SQL_DECISION = f"select {_DECISION_COLUMNS} from revision_decisiones where event_id = $1"
SQL_PENDIENTES = (
    f"select {_DECISION_COLUMNS} from revision_decisiones where enviada = 0 order by decidida_en"
)
SQL_PENDIENTES_ANTERIORES = (
    f"select {_DECISION_COLUMNS} from revision_decisiones where enviada = 0 "
    "and decidida_en < $1 order by decidida_en"
)
SQL_MARCAR_ENVIADA = "update revision_decisiones set enviada = 1 where event_id = $1"
# The live figures (trust, metrics, recall, re-scoring) read the live items' decisions only: a
# candidate's decisions are labels of another loop, counted apart (``candidatas_*``).
_DE_VIVAS = (
    "from revision_decisiones d join revision_items i on i.event_id = d.event_id "
    "where i.candidata = 0"
)
_DECISION_COLUMNS_D = ", ".join(f"d.{c.strip()}" for c in _DECISION_COLUMNS.split(","))
SQL_DECISIONES = f"select {_DECISION_COLUMNS_D} {_DE_VIVAS} order by d.decidida_en"
SQL_DECISIONES_DE_TIPO = (
    f"select {_DECISION_COLUMNS_D} {_DE_VIVAS} and d.tipo = $1 order by d.decidida_en"
)

# What the metrics and the gate's monitors read.
SQL_RESUMEN_ABIERTOS = (
    "select motivo, count(*), min(recibido_en) from revision_items where estado = $1 "
    "and candidata = 0 group by motivo"
)
SQL_DECISIONES_RESUMIDAS = (
    f"select d.tipo, d.decision, d.familia, d.criterios, d.revisor, d.segundos {_DE_VIVAS} "
    "order by d.decidida_en"
)
# The candidate's queue and labels, per family and key (``revision.web.metricas``).
SQL_CANDIDATAS_ABIERTAS = (
    "select i.familia, coalesce(e.clave_id, ''), count(*) from revision_items i "
    "left join revision_evidencias e on e.event_id = i.event_id "
    "where i.estado = $1 and i.candidata = 1 group by i.familia, coalesce(e.clave_id, '')"
)
SQL_CANDIDATAS_DECISIONES = (
    "select d.familia, coalesce(e.clave_id, ''), d.decision, count(*) "
    "from revision_decisiones d join revision_items i on i.event_id = d.event_id "
    "left join revision_evidencias e on e.event_id = d.event_id "
    "where i.candidata = 1 group by d.familia, coalesce(e.clave_id, ''), d.decision"
)
# The keys the app knows as a candidate's (from its items), and the key of the newest live
# item with a key: what the Puertas page sets side by side.
SQL_CLAVES_CANDIDATAS = (
    "select e.clave_id, min(e.clave) from revision_evidencias e "
    "join revision_items i on i.event_id = e.event_id where i.candidata = 1 group by e.clave_id"
)
SQL_CLAVE_VIVA = (
    "select e.clave from revision_evidencias e join revision_items i on i.event_id = e.event_id "
    "where i.candidata = 0 and i.tipo = $1 order by e.orden desc limit 1"
)
SQL_VEREDICTOS_MUESTRA = (
    "select d.event_id, d.decision, i.datos from revision_decisiones d "
    "join revision_items i on i.event_id = d.event_id "
    "where d.tipo = $1 and d.decision in ($2, $3) order by d.decidida_en, d.event_id"
)
# The verdicts taken since a moment, for the online bound's incremental read on every replica.
SQL_VEREDICTOS_DESDE = (
    "select d.event_id, d.decision, i.datos, d.decidida_en from revision_decisiones d "
    "join revision_items i on i.event_id = d.event_id "
    "where d.tipo = $1 and d.decision in ($2, $3) and d.decidida_en >= $4 "
    "order by d.decidida_en, d.event_id"
)
SQL_RETENIDAS = (
    "select i.event_id, i.familia, d.decision from revision_items i "
    "left join revision_decisiones d on d.event_id = i.event_id "
    "where i.motivo = $1 and i.candidata = 0 order by i.recibido_en, i.event_id"
)
SQL_CUENTAS_DECISIONES = (
    f"select d.tipo, d.decision, count(*) {_DE_VIVAS} group by d.tipo, d.decision"
)

# The gates' evidence.
SQL_INSERTAR_EVIDENCIA = (
    "insert into revision_evidencias (event_id, clave_id, clave, familia, puntuacion, codigo_ok, "
    "sombra, orden, llegada) values ($1, $2, $3, $4, $5, $6, $7, "
    "(select coalesce(max(orden), -1) + 1 from revision_evidencias), "
    "(select coalesce(max(llegada), -1) + 1 from revision_evidencias "
    "where clave_id = $2 and familia = $4)) on conflict (event_id) do nothing"
)
# A shadow-mode item makes its gates' sequences known to the certifier
# (``revision.certificador.secuencias``): its family's and its key's pooled one, created once, their
# state filled by the certifier.
SQL_REGISTRAR_SECUENCIA = (
    "insert into revision_secuencias (clave_id, familia, clave, desde, posicion, estado) "
    "values ($1, $2, $3, 0, -1, null) on conflict (clave_id, familia) do nothing"
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

# ---------------------------------------------------------------------------- what it holds


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
    family and key was closed when the app stored it (``revision.almacen.flujo.llegada_de``).
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

    @classmethod
    def de_fila(cls, r: Sequence[Any]) -> FilaSecuencia:
        """From a row of ``SQL_SECUENCIAS``'s columns (also ``revision.certificador.secuencias``'
        reads)."""
        return cls(
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


class Almacen:
    """The review queue's store; SQLite or PostgreSQL behind the same coroutines."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @classmethod
    async def abrir(cls, postgres_dsn: str | None, data_dir: Path) -> Almacen:
        """Open the database the configuration names (migrated under the schema lock) for this
        store alone; the app shares one with the accounts instead (``revision.web.app``)."""
        return cls(await open_database(postgres_dsn, data_dir))

    @property
    def database(self) -> Database:
        """The database under this store, for the stores that share it (the certifier's)."""
        return self._database

    async def cerrar(self) -> None:
        """Close the database (the connection or the pool)."""
        await self._database.close()

    async def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """A read of one statement: its rows."""
        return (await self._database.run(sql, params)).rows

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
        candidata: bool = False,
    ) -> list[Decision]:
        """Store an item once per id and apply supersession in one transaction.

        Returns the decisions ``obsoleta`` written for older open items of the SKU (and for this
        item itself when a newer version was already seen), for the caller to send. ``llegada``
        (when the record carries the loop's key) is stored in the same transaction as the
        gates' evidence, with its arrival positions. ``candidata``: a candidate loop's item
        (``event_id`` is then its id, ``revision.almacen.item.id_item``).
        """
        async with self._database.transaction() as run:
            previa = await _max_version(run, sku)
            estado = OBSOLETA if previa is not None and previa > version else ABIERTA
            insertado = await run(
                SQL_INSERTAR_ITEM,
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
                    int(candidata),
                ),
            )
            if not insertado.count:
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
                if llegada.sombra:
                    for secuencia in (familia, FAMILIA_TODAS):
                        await run(
                            SQL_REGISTRAR_SECUENCIA,
                            (llegada.clave.texto(), secuencia, llegada.clave.model_dump_json()),
                        )
            cerradas = await _supersede(run, sku, version, ahora)
            if estado == OBSOLETA:
                item = await _item_row(run, event_id)
                assert item is not None
                cerradas.append(await _insert_obsoleta(run, item, ahora))
            return cerradas

    async def observar_version(self, sku: str, version: int, ahora: float) -> list[Decision]:
        """A version of ``sku`` was published: close older open items, remember the version."""
        async with self._database.transaction() as run:
            return await _supersede(run, sku, version, ahora)

    async def version_vista(self, sku: str) -> int | None:
        """The newest version of ``sku`` this app has seen on any topic it reads."""
        async with self._database.transaction() as run:
            return await _max_version(run, sku)

    async def item(self, event_id: str) -> Item | None:
        """One item, whatever its state."""
        async with self._database.transaction() as run:
            return await _item_row(run, event_id)

    async def abiertos(self, candidata: bool = False) -> list[Item]:
        """Every open item of one queue view (the main queue, or the candidate's), oldest
        first (filters are applied by the caller)."""
        rows = await self._query(SQL_ABIERTOS, (ABIERTA, int(candidata)))
        return [_item(row) for row in rows]

    async def siguiente(self, despues_de: str, candidata: bool = False) -> str | None:
        """The oldest open item of the same view other than ``despues_de`` (where "next"
        takes a reviewer)."""
        rows = await self._query(SQL_SIGUIENTE, (ABIERTA, despues_de, int(candidata)))
        return str(rows[0][0]) if rows else None

    async def cuenta_abiertos(self, candidata: bool) -> int:
        """How many items are open in one queue view (its tab's count)."""
        rows = await self._query(SQL_CUENTA_VISTA, (ABIERTA, int(candidata)))
        return int(rows[0][0])

    # ------------------------------------------------------------------ decisions

    async def decidir(self, item: Item, cierre: Cierre) -> Decision | None:
        """Close an open item with a decision; None when it was not open any more.

        The conditional update is the arbiter between reviewers racing on one item and
        between a reviewer and the supersession of the item.
        """
        async with self._database.transaction() as run:
            cerrado = await run(
                SQL_DECIDIR_ITEM, (DECIDIDA, cierre.decidida_en, item.event_id, ABIERTA)
            )
            if not cerrado.count:
                return None
            return await _insert_decision(run, item, cierre)

    async def decision(self, event_id: str) -> Decision | None:
        """The decision of an item, if any."""
        rows = await self._query(SQL_DECISION, (event_id,))
        return _decision(rows[0]) if rows else None

    async def pendientes(self, anteriores_a: float | None = None) -> list[Decision]:
        """Decisions whose records the broker has not acknowledged yet, oldest first."""
        if anteriores_a is None:
            rows = await self._query(SQL_PENDIENTES)
        else:
            rows = await self._query(SQL_PENDIENTES_ANTERIORES, (anteriores_a,))
        return [_decision(row) for row in rows]

    async def marcar_enviada(self, event_id: str) -> None:
        """The broker acknowledged the decision's records."""
        async with self._database.transaction() as run:
            await run(SQL_MARCAR_ENVIADA, (event_id,))

    async def decisiones(self, tipo: str | None = None) -> list[Decision]:
        """Every decision (of one kind), oldest first: the input of the trust figures."""
        if tipo is None:
            rows = await self._query(SQL_DECISIONES)
        else:
            rows = await self._query(SQL_DECISIONES_DE_TIPO, (tipo,))
        return [_decision(row) for row in rows]

    async def resumen_abiertos(self) -> tuple[dict[str, int], float | None]:
        """Open items per reason and the arrival time of the oldest (for ``/metrics``)."""
        rows = await self._query(SQL_RESUMEN_ABIERTOS, (ABIERTA,))
        cuentas = {str(m): int(n) for m, n, _ in rows}
        primero = min((float(t) for _, _, t in rows), default=None)
        return cuentas, primero

    async def decisiones_resumidas(self) -> list[tuple[str, str, str, list[str], str, float]]:
        """(tipo, decision, familia, criterios, revisor, segundos) of every decision, oldest
        first: what the metrics need, without the stored records."""
        rows = await self._query(SQL_DECISIONES_RESUMIDAS)
        return [
            (str(t), str(d), str(f), list(json.loads(c)), str(r), float(sg))
            for t, d, f, c, r, sg in rows
        ]

    async def veredictos_muestra(self) -> list[tuple[str, str, dict[str, Any]]]:
        """(event_id, decision, the published record) of every ``correcta``/``incorrecta``
        verdict on the sample, in the order they were taken: the input the online bound of
        ``revision.certificador.vigilancia`` is rebuilt from at start-up (no state of its own to
        migrate)."""
        rows = await self._query(
            SQL_VEREDICTOS_MUESTRA, (TIPO_MUESTRA, DECISION_CORRECTA, DECISION_INCORRECTA)
        )
        return [(str(e), str(d), dict(json.loads(datos))) for e, d, datos in rows]

    async def veredictos_desde(self, desde: float) -> list[tuple[str, str, dict[str, Any], float]]:
        """(event_id, decision, the published record, decidida_en) of every sample verdict
        taken at or after ``desde`` (by any replica), in the order they were taken."""
        rows = await self._query(
            SQL_VEREDICTOS_DESDE, (TIPO_MUESTRA, DECISION_CORRECTA, DECISION_INCORRECTA, desde)
        )
        return [(str(e), str(d), dict(json.loads(datos)), float(t)) for e, d, datos, t in rows]

    async def retenidas(self) -> list[tuple[str, str, str | None]]:
        """(event_id, familia, decision or None while open) of every item the gate held back
        (motivo ``sin_garantia``), oldest first: what recall is measured on."""
        rows = await self._query(SQL_RETENIDAS, (MOTIVO_SIN_GARANTIA,))
        return [(str(e), str(f), None if d is None else str(d)) for e, f, d in rows]

    async def cerrados(self) -> list[tuple[Item, str | None, bool | None]]:
        """(item, its decision, whether it arrived in shadow mode) of every closed item, in
        arrival order: the stored fichas with people's labels that ``fichas calibrar
        --recalificar`` re-scores. Shadow mode is None for an item stored without evidence.
        Read-only; an item closed ``obsoleta`` is returned too, so the command can count what
        it leaves out."""
        rows = await self._query(SQL_CERRADOS, (ABIERTA,))
        return [
            (
                _item(row[:17]),
                None if row[17] is None else str(row[17]),
                None if row[16] is None else bool(row[16]),
            )
            for row in rows
        ]

    async def cuentas_decisiones(self) -> dict[tuple[str, str], int]:
        """Decisions on live items per (tipo, decision), for the ``_total`` counter read at
        scrape time."""
        rows = await self._query(SQL_CUENTAS_DECISIONES)
        return {(str(t), str(d)): int(n) for t, d, n in rows}

    # ------------------------------------------------------------------ a candidate loop's

    async def candidatas_abiertas(self) -> dict[tuple[str, str], int]:
        """Open candidate items per (family, key id; empty without a key): its queue depth."""
        rows = await self._query(SQL_CANDIDATAS_ABIERTAS, (ABIERTA,))
        return {(str(f), str(c)): int(n) for f, c, n in rows}

    async def candidatas_decisiones(self) -> dict[tuple[str, str, str], int]:
        """Decisions on candidate items per (family, key id, decision): its labels."""
        rows = await self._query(SQL_CANDIDATAS_DECISIONES)
        return {(str(f), str(c), str(d)): int(n) for f, c, d, n in rows}

    async def claves_candidatas(self) -> dict[str, ClavePuerta]:
        """The keys of every candidate item stored, by id: what the app knows as a
        candidate's key."""
        rows = await self._query(SQL_CLAVES_CANDIDATAS)
        return {str(c): ClavePuerta.model_validate_json(k) for c, k in rows}

    async def clave_viva(self) -> ClavePuerta | None:
        """The key of the newest live review item that carries one: the live loop's key as
        the app last saw it (None before any)."""
        rows = await self._query(SQL_CLAVE_VIVA, (TIPO_REVISION,))
        return ClavePuerta.model_validate_json(rows[0][0]) if rows else None

    # ------------------------------------------------------------------ the gates' evidence

    async def secuencias(self) -> list[FilaSecuencia]:
        """Every shadow-mode item with its state and decision, in store-wide arrival order: the
        whole evidence, for a recomputation from scratch (tests, ``bench.certificador``). The
        certifier itself reads only each sequence's rows after its position
        (``revision.certificador.secuencias``)."""
        rows = await self._query(SQL_SECUENCIAS)
        return [FilaSecuencia.de_fila(r) for r in rows]

    async def reiniciar(self, familia: str, clave_id: str, cerrada_en: str) -> None:
        """The gate (``familia`` or ``*``, key id) was closed by the online bound at
        ``cerrada_en``: its sequence starts again after every item stored so far. Once per
        closure (a closure seen again changes nothing)."""
        async with self._database.transaction() as run:
            await run(SQL_REINICIAR, (familia, clave_id, cerrada_en))

    async def reinicios(self) -> dict[tuple[str, str], int]:
        """(familia, key id) -> the store-wide arrival order its sequence starts at now."""
        rows = await self._query(SQL_REINICIOS)
        return {(str(f), str(c)): int(d) for f, c, d in rows}


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
        evidencia=_evidencia(row[5], row[12:16]) if len(row) > 12 else None,
        candidata=bool(row[11]),
        sombra=len(row) > 16 and bool(row[16]),
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


async def _item_row(run: Run, event_id: str) -> Item | None:
    found = (await run(SQL_ITEM, (event_id,))).first()
    return _item(found) if found else None


async def _max_version(run: Run, sku: str) -> int | None:
    row = (await run(SQL_VERSION_VISTA, (sku,))).first()
    return int(row[0]) if row else None


async def _supersede(run: Run, sku: str, version: int, ahora: float) -> list[Decision]:
    """Raise the SKU's newest version and close its older open items as ``obsoleta``."""
    await run(SQL_SUBIR_VERSION, (sku, version))
    viejos = await run(SQL_ABIERTOS_ANTERIORES, (sku, ABIERTA, version))
    cerradas = []
    for row in viejos.rows:
        item = _item(row)
        await run(SQL_CERRAR_ITEM, (OBSOLETA, ahora, item.event_id))
        cerradas.append(await _insert_obsoleta(run, item, ahora))
    return cerradas


async def _insert_obsoleta(run: Run, item: Item, ahora: float) -> Decision:
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


async def _insert_decision(run: Run, item: Item, cierre: Cierre) -> Decision:
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
        publicacion=None if item.candidata else cierre.publicacion,
        enviada=item.candidata,
    )
    await run(
        SQL_INSERTAR_DECISION,
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
            # A candidate's decision is a label only: nothing to send (docs/revision.md).
            int(item.candidata),
        ),
    )
    return decision


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
