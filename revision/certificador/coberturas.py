"""Each family's coverage sequences: its own e-process at the pooled λ since its certification.

The pooled gate may cover a family only when the family's own evidence certifies the pooled λ_*
(``puerta.cobertura``). That evidence is a sequence of its own: per key, family and pooled
certification (the pooled record's ``actualizada_en``), one row of ``revision_coberturas``
whose e-process at the single λ_* starts at the first arrival after the certifier first saw that
certification (the row of ``*`` records it; so λ_*, chosen on data that include the family's, is
fixed before every ficha it tests), advanced each round by the family's newly decided prefix: the
same shadow-mode rows and prefix rule as its own sequence (``revision.certificador.secuencias``),
at the grid (λ_*,). Invariants: the start is recorded once, by the lease holder, and never moves;
a state only moves forward; a new pooled certification starts new rows (old ones stay, unread).
Why: docs/puerta.md, "Coverage", and docs/revision.md, "Cobertura".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import EstadoPuerta
from migraciones import Database
from puerta.cobertura import secuencia_de_cobertura
from puerta.resolucion import registro
from puerta.secuencial import EstadoSecuencia
from revision.certificador.secuencias import AlmacenSecuencias, Secuencia, avanzar_filas

SQL_LEER = (
    "select familia, desde, estado from revision_coberturas "
    "where clave_id = $1 and conjunta_en = $2"
)
# When the certifier first saw a pooled certification: the row of ``*`` holds the first arrival
# after every item stored then (the store-wide order), where every family's sequence starts.
SQL_VISTA = (
    "insert into revision_coberturas (clave_id, familia, conjunta_en, clave, desde, posicion, "
    "estado) values ($1, '*', $2, $3, "
    "(select coalesce(max(orden), -1) + 1 from revision_evidencias), -1, null) "
    "on conflict (clave_id, familia, conjunta_en) do nothing"
)
# A family's state: created at the start the pooled row holds, then only ever forward.
SQL_GUARDAR = (
    "insert into revision_coberturas (clave_id, familia, conjunta_en, clave, desde, posicion, "
    "estado) values ($1, $2, $3, $4, $5, $6, $7) "
    "on conflict (clave_id, familia, conjunta_en) do update set posicion = excluded.posicion, "
    "estado = excluded.estado where revision_coberturas.posicion < excluded.posicion "
    "or revision_coberturas.estado is null"
)


@dataclass(frozen=True)
class ClaveCobertura:
    """Which coverage sequence: the family's gate id and the pooled certification's instant."""

    puerta: str
    conjunta_en: str


def conjunta_abierta(sec: Secuencia, estados: Mapping[str, EstadoPuerta]) -> EstadoPuerta | None:
    """The open pooled record of the family's key, whose λ a coverage sequence tests; None
    when the pooled gate of that key is not open at a λ (or ``sec`` is the pooled sequence)."""
    if sec.familia == FAMILIA_TODAS:
        return None
    conjunta = registro(FAMILIA_TODAS, sec.clave, estados)
    if conjunta is None or not conjunta.abierta or conjunta.umbral is None:
        return None
    return conjunta


class AlmacenCoberturas:
    """The certifier's reads and writes of ``revision_coberturas``."""

    def __init__(self, database: Database) -> None:
        self._database = database
        self._filas = AlmacenSecuencias(database)

    async def leer(
        self, conjunta: EstadoPuerta, guardar: bool
    ) -> tuple[int | None, dict[str, EstadoSecuencia | None]]:
        """(the start of every family's sequence under ``conjunta``, None while the certifier
        has not seen it; each family's stored state). The lease holder (``guardar``) records
        the first sight."""
        clave_id, instante = conjunta.clave.texto(), conjunta.actualizada_en.isoformat()
        if guardar:
            await self._database.run(
                SQL_VISTA, (clave_id, instante, conjunta.clave.model_dump_json())
            )
        inicio: int | None = None
        estados: dict[str, EstadoSecuencia | None] = {}
        for familia, desde, texto in (
            await self._database.run(SQL_LEER, (clave_id, instante))
        ).rows:
            if familia == FAMILIA_TODAS:
                inicio = int(desde)
            else:
                estados[str(familia)] = None if texto is None else EstadoSecuencia.de_json(texto)
        return inicio, estados

    async def avanzar(
        self,
        sec: Secuencia,
        conjunta: EstadoPuerta,
        partida: EstadoSecuencia,
        guardar: bool,
        nueva: bool,
    ) -> EstadoSecuencia:
        """The family's coverage sequence advanced by its newly decided prefix; written when
        ``guardar`` (the lease holder) and it moved, or is ``nueva`` (never written)."""
        estado, _ = await avanzar_filas(self._filas, sec.clave.texto(), sec.familia, partida)
        if guardar and (nueva or estado is not partida):
            await self._database.run(
                SQL_GUARDAR,
                (
                    sec.clave.texto(),
                    sec.familia,
                    conjunta.actualizada_en.isoformat(),
                    sec.clave.model_dump_json(),
                    estado.desde,
                    estado.posicion,
                    estado.a_json(),
                ),
            )
        return estado


def conjuntas_abiertas(estados: Mapping[str, EstadoPuerta]) -> list[EstadoPuerta]:
    """Every key's open pooled record the topic shows (a hold is not a record of the gate)."""
    claves = {e.clave.texto(): e.clave for e in estados.values() if e.familia == FAMILIA_TODAS}
    abiertas = [registro(FAMILIA_TODAS, clave, estados) for clave in claves.values()]
    return [e for e in abiertas if e is not None and e.abierta and e.umbral is not None]


async def avanzar_coberturas(
    almacen: AlmacenCoberturas,
    secuencias: list[Secuencia],
    estados: Mapping[str, EstadoPuerta],
    objetivo: float,
    delta: float,
    guardar: bool,
) -> dict[ClaveCobertura, EstadoSecuencia]:
    """Every family's coverage sequence under its key's open pooled certification, advanced
    (none before the certifier has seen that certification). The lease holder records the
    first sight of every open pooled certification, whether or not a family has evidence yet:
    a family's first fichas after it count."""
    vistas = {c.id: await almacen.leer(c, guardar) for c in conjuntas_abiertas(estados)}
    coberturas: dict[ClaveCobertura, EstadoSecuencia] = {}
    for sec in secuencias:
        conjunta = conjunta_abierta(sec, estados)
        if conjunta is None or conjunta.id not in vistas:
            continue
        inicio, guardados = vistas[conjunta.id]
        if inicio is None:
            continue
        guardado = guardados.get(sec.familia)
        partida = guardado or secuencia_de_cobertura(conjunta, inicio, objetivo, delta)
        estado = await almacen.avanzar(sec, conjunta, partida, guardar, guardado is None)
        coberturas[ClaveCobertura(sec.id, conjunta.actualizada_en.isoformat())] = estado
    return coberturas


def desde_conjunta(
    coberturas: Mapping[ClaveCobertura, EstadoSecuencia],
    sec: Secuencia | None,
    estados: Mapping[str, EstadoPuerta],
) -> EstadoSecuencia | None:
    """The family's coverage sequence for the pooled certification ``estados`` show now (None:
    no open pooled gate, or not begun)."""
    if sec is None:
        return None
    conjunta = conjunta_abierta(sec, estados)
    if conjunta is None:
        return None
    return coberturas.get(ClaveCobertura(sec.id, conjunta.actualizada_en.isoformat()))
