"""The version store: newest version handled per SKU, and one outcome record per ``event_id``.

Two records, kept in one transaction, fence every emission of the worker: the newest version
per SKU (a redelivered or zombie older version finds a newer one and is ``OBSOLETO``) and the
outcome of each ``event_id`` with its SKU, version and fingerprint, the one source of every
emission of it (a later emission sends these stored bytes, never a new run's).
``claim`` is the compare-and-set: under the SKU's row lock it reads both and records the
new outcome only when the rule (``versiones.regla.decidir_reclamo``) lets it; superseded
outcomes go in the same transaction and ``prune`` deletes what is older than the retention.

``VersionStore`` (``get``, ``record``) is what an app outside the worker needs; ``ClaimStore``
adds the worker's fence and upkeep. One class, ``SqlVersionStore``, serves both dialects on
the one ``migraciones.Database``: inline on the loop and ``synchronous=normal`` on SQLite
(``OPCIONES``; why: docs/stream.md, "The version store and the outcome records").
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol

from esquemas import EventoCambio
from migraciones import Database, StoreOptions, open_database
from versiones.migrations import ESQUEMA
from versiones.regla import (
    Clave,
    Dictamen,
    Reclamo,
    ResultadoGuardado,
    decidir_reclamo,
    dictaminar,
    mas_nueva,
)

SQLITE_FILE = "versiones.sqlite"
# On SQLite: inline on the worker's loop, WAL without fsync per commit; on PostgreSQL a small
# pool (one claim per lane at a time is short), no check before lending (the worker retries).
OPCIONES = StoreOptions(
    esquema=ESQUEMA, sqlite_file=SQLITE_FILE, synchronous="normal", on_thread=False, pool_max=4
)


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

    async def result(self, event_id: str) -> ResultadoGuardado | None:
        """The stored outcome of ``event_id``, or None."""
        ...

    async def claim(self, guardado: ResultadoGuardado) -> Reclamo:
        """Compare-and-set: record ``guardado`` unless superseded or already decided."""
        ...

    async def prune(self, retencion_s: float) -> int:
        """Delete records older than ``retencion_s`` seconds; the number of rows deleted."""
        ...

    async def sizes(self) -> dict[str, int]:
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
    existente = await store.result(evento.event_id)
    vigente = await store.get(evento.sku)
    dictamen = dictaminar(clave, mas_nueva(en_cola, vigente), existente)
    guardado = existente if dictamen is not Dictamen.OBSOLETO else None
    return clave, Reclamo(dictamen, guardado)


# The statements, the way LangGraph's checkpoint-postgres keeps them: constants, one text where
# the dialects agree (``$n`` placeholders, migraciones.database), a pair side by side where they
# do not. They differ in three things only: the clock (SQLite stores seconds since the epoch,
# PostgreSQL a ``timestamptz``), the larger of two values (``max`` / ``greatest``) and the row
# lock (``for update``; SQLite's one connection needs none).
SELECT_VERSION = "select version from fichas_versiones where sku = $1"
SELECT_RESULTADO = (
    "select event_id, sku, version, huella, destino, salida from fichas_resultados "
    "where event_id = $1"
)
DELETE_SUPERADOS = "delete from fichas_resultados where sku = $1 and version < $2"
_AHORA_SQLITE = "((julianday('now') - 2440587.5) * 86400.0)"
# The SKU's row, created at version 0 ("nothing handled") when it is missing, then read under
# the row lock: two claims of one SKU on PostgreSQL wait for each other here.
RESERVAR_SKU = {
    "sqlite": "insert into fichas_versiones (sku, version, actualizada_en) "
    f"values ($1, 0, {_AHORA_SQLITE}) on conflict (sku) do nothing",
    "postgres": "insert into fichas_versiones (sku, version, actualizada_en) "
    "values ($1, 0, now()) on conflict (sku) do nothing",
}
SELECT_VERSION_BLOQUEADA = {
    "sqlite": SELECT_VERSION,
    "postgres": SELECT_VERSION + " for update",
}
UPSERT_VERSION = {
    "sqlite": "insert into fichas_versiones (sku, version, actualizada_en) "
    f"values ($1, $2, {_AHORA_SQLITE}) on conflict (sku) do update set "
    "version = max(fichas_versiones.version, excluded.version), "
    "actualizada_en = excluded.actualizada_en",
    "postgres": "insert into fichas_versiones (sku, version, actualizada_en) "
    "values ($1, $2, now()) on conflict (sku) do update set "
    "version = greatest(fichas_versiones.version, excluded.version), "
    "actualizada_en = excluded.actualizada_en",
}
INSERT_RESULTADO = {
    "sqlite": "insert into fichas_resultados (event_id, sku, version, huella, destino, salida, "
    f"registrado_en) values ($1, $2, $3, $4, $5, $6, {_AHORA_SQLITE})",
    "postgres": "insert into fichas_resultados (event_id, sku, version, huella, destino, salida, "
    "registrado_en) values ($1, $2, $3, $4, $5, $6, now())",
}
# Retention: every record older than it goes, whatever its version (a row at 0, left by a
# claim that recorded nothing, included).
PODAR_RESULTADOS = {
    "sqlite": f"delete from fichas_resultados where registrado_en < {_AHORA_SQLITE} - $1",
    "postgres": "delete from fichas_resultados where registrado_en < now() - $1 * interval '1 s'",
}
PODAR_VERSIONES = {
    "sqlite": f"delete from fichas_versiones where actualizada_en < {_AHORA_SQLITE} - $1",
    "postgres": "delete from fichas_versiones where actualizada_en < now() - $1 * interval '1 s'",
}
TABLAS = ("fichas_versiones", "fichas_resultados")


class SqlVersionStore:
    """The version store on either dialect: the same methods, the statements above.

    One rule on both: a version row at 0 means "nothing handled" (``get`` answers None); it is
    what the claim's row lock creates for a SKU not seen yet, and retention deletes it like any
    other row.
    """

    def __init__(self, database: Database) -> None:
        self._database = database
        self.dialect = database.dialect

    async def get(self, sku: str) -> int | None:
        """The newest version handled for ``sku``, or None (no row, or a row at 0)."""
        return _version((await self._database.run(SELECT_VERSION, (sku,))).first())

    async def record(self, sku: str, version: int) -> None:
        """Raise the stored version of ``sku`` to ``version`` (never lowers it)."""
        await self._database.run(UPSERT_VERSION[self.dialect], (sku, version))

    async def result(self, event_id: str) -> ResultadoGuardado | None:
        """The stored outcome of ``event_id``, or None."""
        fila = (await self._database.run(SELECT_RESULTADO, (event_id,))).first()
        return None if fila is None else _guardado_de_fila(fila)

    async def claim(self, guardado: ResultadoGuardado) -> Reclamo:
        """Compare-and-set under the SKU's row lock, in one transaction."""
        d = self.dialect
        async with self._database.transaction() as run:
            await run(RESERVAR_SKU[d], (guardado.sku,))
            version = _version((await run(SELECT_VERSION_BLOQUEADA[d], (guardado.sku,))).first())
            fila = (await run(SELECT_RESULTADO, (guardado.event_id,))).first()
            existente = None if fila is None else _guardado_de_fila(fila)
            reclamo = decidir_reclamo(guardado, version, existente)
            if reclamo.dictamen is Dictamen.NUEVO:
                await run(INSERT_RESULTADO[d], _fila_resultado(guardado))
                await run(UPSERT_VERSION[d], (guardado.sku, guardado.version))
                await run(DELETE_SUPERADOS, (guardado.sku, guardado.version))
        return reclamo

    async def prune(self, retencion_s: float) -> int:
        """Delete outcome and version records older than the retention."""
        async with self._database.transaction() as run:
            resultados = await run(PODAR_RESULTADOS[self.dialect], (retencion_s,))
            versiones = await run(PODAR_VERSIONES[self.dialect], (retencion_s,))
        return resultados.count + versiones.count

    async def sizes(self) -> dict[str, int]:
        """Rows per table."""
        sizes: dict[str, int] = {}
        async with self._database.transaction() as run:
            for tabla in TABLAS:
                sizes[tabla] = int((await run(f"select count(*) from {tabla}")).first()[0])
        return sizes


def _version(fila: Any) -> int | None:
    """The version a ``SELECT_VERSION`` read: None for no row, or for a row at 0."""
    if fila is None or int(fila[0]) <= 0:
        return None
    return int(fila[0])


def _guardado_de_fila(row: Any) -> ResultadoGuardado:
    """A stored row (event_id, sku, version, huella, destino, salida) as a ``ResultadoGuardado``."""
    salida = row[5] if isinstance(row[5], dict) else json.loads(row[5])
    return ResultadoGuardado(
        str(row[0]), str(row[1]), int(row[2]), str(row[3]), str(row[4]), salida
    )


def _fila_resultado(guardado: ResultadoGuardado) -> tuple[str, str, int, str, str, str]:
    """The columns of an outcome record, in ``INSERT_RESULTADO``'s order; the outcome as
    compact JSON, so re-emission gives the same bytes."""
    salida = json.dumps(guardado.salida, ensure_ascii=False, separators=(",", ":"))
    return (
        guardado.event_id,
        guardado.sku,
        guardado.version,
        guardado.huella,
        guardado.destino,
        salida,
    )


@asynccontextmanager
async def open_version_store(postgres_dsn: str | None, data_dir: Path) -> AsyncIterator[ClaimStore]:
    """Open the store that matches the checkpointer configuration, migrated under the lock."""
    database = await open_database(postgres_dsn, data_dir, OPCIONES)
    try:
        yield SqlVersionStore(database)
    finally:
        await database.close()
