"""The gates' evidence in the review store: what an arriving item leaves for the certifier.

An item that carries the loop's key is stored with its key, score and arrival positions (in
the item's own transaction, ``revision.almacen.cola``); a shadow-mode item makes its gates'
sequences known; a gate closed by the online bound starts its sequence again. ``Evidencias``
holds the reads, the base of the queue's store. docs/puerta.md, docs/revision.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from esquemas.constantes import FAMILIA_TODAS, TIPO_REVISION
from esquemas.estado_puerta import ClavePuerta
from migraciones import Database, Run

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


class _ColumnasSecuencia(NamedTuple):
    """A row of ``SQL_SECUENCIAS`` (and of ``revision.certificador.secuencias``' reads)."""

    event_id: str
    clave_id: str
    clave: str  # JSON of the loop's key
    familia: str
    puntuacion: float | None
    codigo_ok: int
    orden: int
    llegada: int
    estado: str
    decision: str | None


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
        fila = _ColumnasSecuencia._make(r)
        return cls(
            event_id=str(fila.event_id),
            clave=ClavePuerta.model_validate_json(fila.clave),
            familia=str(fila.familia),
            puntuacion=None if fila.puntuacion is None else float(fila.puntuacion),
            codigo_ok=bool(fila.codigo_ok),
            orden=int(fila.orden),
            llegada=int(fila.llegada),
            estado=str(fila.estado),
            decision=None if fila.decision is None else str(fila.decision),
        )


async def guardar_llegada(run: Run, event_id: str, familia: str, llegada: Llegada) -> None:
    """Store an item's evidence inside the caller's transaction (the item's own): its arrival
    positions are taken there, so nothing ever lands behind a stored position."""
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


class Evidencias:
    """The gates' evidence on the review store's database: the base of ``Almacen``."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @property
    def database(self) -> Database:
        """The database under this store, for the stores that share it (the certifier's)."""
        return self._database

    async def _query(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        """A read of one statement: its rows."""
        return (await self._database.run(sql, params)).rows

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
