"""The review queue's store: items, decisions (the outbox), versions seen, what figures read.

Apart from the reviewers' accounts (``revision.almacen.cuentas``), on the app's one database
(``revision.almacen.database``, schema in ``revision.almacen.migrations``); statements are
module constants, one text for both dialects, ``$n`` placeholders. The gates' evidence each
item leaves is ``revision.almacen.evidencia`` (the base class), the rows by name
``revision.almacen.filas``.

Invariants:
- one item per id (``revision.almacen.item.id_item``): the primary key, and ``insert ... on
  conflict do nothing``;
- one decision per item: deciding is a conditional update (``estado = 'abierta'``) and the
  decision row is written in the same transaction, so two reviewers racing get one winner;
- nothing lost between decision and publication: the decision row, with the publication it
  implies, is committed before anything is sent (``enviada = 0``), and only marked sent after
  the broker acknowledged both records (the outbox pattern);
- a candidate's item is a label only: its decision row is stored as sent (nothing to send).
Why: docs/revision.md, "La base de datos" and "La vista candidata".
"""

from __future__ import annotations

import json
from pathlib import Path

from esquemas.constantes import (
    DECISION_CORRECTA,
    DECISION_INCORRECTA,
    DECISION_OBSOLETA,
    MOTIVO_SIN_GARANTIA,
    REVISOR_SISTEMA,
    TIPO_MUESTRA,
)
from migraciones import Run
from revision.almacen.database import open_database
from revision.almacen.decisiones import decision_de
from revision.almacen.evidencia import Evidencias, FilaSecuencia, Llegada, guardar_llegada
from revision.almacen.filas import (
    ABIERTA,
    DECIDIDA,
    DECISION_COLUMNS,
    ITEM_SELECT,
    OBSOLETA,
    Cierre,
    Decision,
    DecisionResumida,
    FilaItem,
    ItemNuevo,
    ResumenAbiertos,
    VeredictoMuestra,
    decision_de_fila,
    item_de_fila,
)
from revision.almacen.item import Item

# ---------------------------------------------------------------------------- the statements

SQL_ITEM = f"{ITEM_SELECT} where i.event_id = $1"
SQL_INSERTAR_ITEM = (
    "insert into revision_items (event_id, tipo, motivo, sku, version, familia, criterios, "
    "datos, recibido_en, estado, cerrado_en, candidata) values "
    "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) on conflict (event_id) do nothing"
)
# Each queue view (the main queue, the candidate's) is its own: ``candidata`` 0 or 1.
SQL_ABIERTOS = (
    f"{ITEM_SELECT} where i.estado = $1 and i.candidata = $2 order by i.recibido_en, i.event_id"
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
    ITEM_SELECT.replace(
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
# A sampled publication is never superseded (v1.6): it was published and seen, and its verdict
# still counts for the gate that let it through (``revision.certificador.publicacion``).
SQL_ABIERTOS_ANTERIORES = (
    f"{ITEM_SELECT} where i.sku = $1 and i.estado = $2 and i.version < $3 and i.tipo <> $4"
)
# The sample's arrival order (``revision_muestras``), numbered in the item's transaction.
SQL_NUMERAR_MUESTRA = (
    "insert into revision_muestras (event_id, orden) values "
    "($1, (select coalesce(max(orden), -1) + 1 from revision_muestras)) "
    "on conflict (event_id) do nothing"
)

SQL_INSERTAR_DECISION = (
    f"insert into revision_decisiones ({DECISION_COLUMNS}) values "
    "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)"
)
SQL_DECISION = f"select {DECISION_COLUMNS} from revision_decisiones where event_id = $1"
SQL_PENDIENTES = (
    f"select {DECISION_COLUMNS} from revision_decisiones where enviada = 0 order by decidida_en"
)
SQL_PENDIENTES_ANTERIORES = (
    f"select {DECISION_COLUMNS} from revision_decisiones where enviada = 0 "
    "and decidida_en < $1 order by decidida_en"
)
SQL_MARCAR_ENVIADA = "update revision_decisiones set enviada = 1 where event_id = $1"
# The live figures (trust, metrics, recall, re-scoring) read the live items' decisions only: a
# candidate's decisions are labels of another loop, counted apart (``candidatas_*``).
_DE_VIVAS = (
    "from revision_decisiones d join revision_items i on i.event_id = d.event_id "
    "where i.candidata = 0"
)
_DECISION_COLUMNS_D = ", ".join(f"d.{c.strip()}" for c in DECISION_COLUMNS.split(","))
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
SQL_VEREDICTOS_MUESTRA = (
    "select d.event_id, d.decision, i.datos from revision_decisiones d "
    "join revision_items i on i.event_id = d.event_id "
    "where d.tipo = $1 and d.decision in ($2, $3) order by d.decidida_en, d.event_id"
)
SQL_RETENIDAS = (
    "select i.event_id, i.familia, d.decision from revision_items i "
    "left join revision_decisiones d on d.event_id = i.event_id "
    "where i.motivo = $1 and i.candidata = 0 order by i.recibido_en, i.event_id"
)
SQL_CUENTAS_DECISIONES = (
    f"select d.tipo, d.decision, count(*) {_DE_VIVAS} group by d.tipo, d.decision"
)


class Almacen(Evidencias):
    """The review queue's store; SQLite or PostgreSQL behind the same coroutines."""

    @classmethod
    async def abrir(cls, postgres_dsn: str | None, data_dir: Path) -> Almacen:
        """Open the database the configuration names (migrated under the schema lock) for this
        store alone; the app shares one with the accounts instead (``revision.web.app``)."""
        return cls(await open_database(postgres_dsn, data_dir))

    async def cerrar(self) -> None:
        """Close the database (the connection or the pool)."""
        await self._database.close()

    # ------------------------------------------------------------------ items

    async def guardar_item(
        self, nuevo: ItemNuevo, ahora: float, llegada: Llegada | None = None
    ) -> list[Decision]:
        """Store an item once per id and apply supersession in one transaction.

        Returns the decisions ``obsoleta`` written for older open items of the SKU (and for this
        item itself when a newer version was already seen), for the caller to send; a sampled
        publication is never closed so (``SQL_ABIERTOS_ANTERIORES``). ``llegada`` (when the
        record carries the loop's key) is stored in the same transaction as the gates'
        evidence, with its arrival positions; a live sample item takes its number in the
        sample's arrival order there too.
        """
        muestra = nuevo.tipo == TIPO_MUESTRA
        async with self._database.transaction() as run:
            previa = await _max_version(run, nuevo.sku)
            nueva = previa is None or previa <= nuevo.version
            estado = ABIERTA if muestra or nueva else OBSOLETA
            insertado = await run(
                SQL_INSERTAR_ITEM,
                (
                    nuevo.event_id,
                    nuevo.tipo,
                    nuevo.motivo,
                    nuevo.sku,
                    nuevo.version,
                    nuevo.familia,
                    json.dumps(nuevo.criterios),
                    json.dumps(nuevo.datos, ensure_ascii=False),
                    ahora,
                    estado,
                    ahora if estado == OBSOLETA else None,
                    int(nuevo.candidata),
                ),
            )
            if not insertado.count:
                return []
            if llegada is not None:
                await guardar_llegada(run, nuevo.event_id, nuevo.familia, llegada)
            if muestra and not nuevo.candidata:
                await run(SQL_NUMERAR_MUESTRA, (nuevo.event_id,))
            cerradas = await _supersede(run, nuevo.sku, nuevo.version, ahora)
            if estado == OBSOLETA:
                item = await _item_row(run, nuevo.event_id)
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
        return [item_de_fila(row) for row in rows]

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
        return decision_de_fila(rows[0]) if rows else None

    async def pendientes(self, anteriores_a: float | None = None) -> list[Decision]:
        """Decisions whose records the broker has not acknowledged yet, oldest first."""
        if anteriores_a is None:
            rows = await self._query(SQL_PENDIENTES)
        else:
            rows = await self._query(SQL_PENDIENTES_ANTERIORES, (anteriores_a,))
        return [decision_de_fila(row) for row in rows]

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
        return [decision_de_fila(row) for row in rows]

    async def resumen_abiertos(self) -> ResumenAbiertos:
        """Open items per reason and the arrival time of the oldest (for ``/metrics``)."""
        rows = await self._query(SQL_RESUMEN_ABIERTOS, (ABIERTA,))
        cuentas = {str(motivo): int(n) for motivo, n, _ in rows}
        primero = min((float(recibido) for _, _, recibido in rows), default=None)
        return ResumenAbiertos(cuentas, primero)

    async def decisiones_resumidas(self) -> list[DecisionResumida]:
        """Every live decision without its stored records, oldest first: what the metrics
        need."""
        rows = await self._query(SQL_DECISIONES_RESUMIDAS)
        return [
            DecisionResumida(
                tipo=str(tipo),
                decision=str(decision),
                familia=str(familia),
                criterios=list(json.loads(criterios)),
                revisor=str(revisor),
                segundos=float(segundos),
            )
            for tipo, decision, familia, criterios, revisor, segundos in rows
        ]

    async def veredictos_muestra(self) -> list[VeredictoMuestra]:
        """Every ``correcta``/``incorrecta`` verdict on the sample, in the order they were
        taken: the recall's C when no monitor counts it (``revision.web.metricas``). The
        closing tests read the sample in publication order instead
        (``revision.certificador.publicacion``)."""
        rows = await self._query(
            SQL_VEREDICTOS_MUESTRA, (TIPO_MUESTRA, DECISION_CORRECTA, DECISION_INCORRECTA)
        )
        return [
            VeredictoMuestra(str(event_id), str(decision), dict(json.loads(datos)))
            for event_id, decision, datos in rows
        ]

    async def retenidas(self) -> list[tuple[str, str, str | None]]:
        """(event_id, familia, decision or None while open) of every item the gate held back
        (motivo ``sin_garantia``), oldest first: what recall is measured on. Plain tuples
        while ``revision.certificador.confianza`` types them so."""
        rows = await self._query(SQL_RETENIDAS, (MOTIVO_SIN_GARANTIA,))
        return [
            (str(event_id), str(familia), None if decision is None else str(decision))
            for event_id, familia, decision in rows
        ]

    async def cerrados(self) -> list[tuple[Item, str | None, bool | None]]:
        """(item, its decision, whether it arrived in shadow mode) of every closed item, in
        arrival order: the stored fichas with people's labels that ``fichas calibrar
        --recalificar`` re-scores. Shadow mode is None for an item stored without evidence.
        Read-only; an item closed ``obsoleta`` is returned too, so the command can count what
        it leaves out. Plain tuples while ``herramientas.calibrar.recalificar`` types them so."""
        rows = await self._query(SQL_CERRADOS, (ABIERTA,))
        cerrados: list[tuple[Item, str | None, bool | None]] = []
        for row in rows:
            fila = FilaItem._make(row[: len(FilaItem._fields)])
            decision = row[len(FilaItem._fields)]
            cerrados.append(
                (
                    item_de_fila(row),
                    None if decision is None else str(decision),
                    None if fila.sombra is None else bool(fila.sombra),
                )
            )
        return cerrados

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


async def _item_row(run: Run, event_id: str) -> Item | None:
    found = (await run(SQL_ITEM, (event_id,))).first()
    return item_de_fila(found) if found else None


async def _max_version(run: Run, sku: str) -> int | None:
    row = (await run(SQL_VERSION_VISTA, (sku,))).first()
    return int(row[0]) if row else None


async def _supersede(run: Run, sku: str, version: int, ahora: float) -> list[Decision]:
    """Raise the SKU's newest version and close its older open items as ``obsoleta`` (review
    items only: a sampled publication keeps waiting for its verdict)."""
    await run(SQL_SUBIR_VERSION, (sku, version))
    viejos = await run(SQL_ABIERTOS_ANTERIORES, (sku, ABIERTA, version, TIPO_MUESTRA))
    cerradas = []
    for row in viejos.rows:
        item = item_de_fila(row)
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
    "DecisionResumida",
    "FilaSecuencia",
    "Item",
    "ItemNuevo",
    "Llegada",
    "ResumenAbiertos",
    "VeredictoMuestra",
]
