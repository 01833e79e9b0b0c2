"""Each gate sequence's stored state, advanced every round by the newly decided prefix only.

One row of ``revision_secuencias`` per gate sequence (key id, family or ``*``): its restart
point ``desde``, its ``puerta.secuencial.EstadoSecuencia`` as JSON and the last arrival order
consumed ``posicion``. A round reads only the sequence's shadow-mode rows after ``posicion``
(indexed, in batches), stops at the first ficha that could count and is still undecided, and
advances the state by what it read; the page's counts are indexed counts over the same rows.
Invariants: a sequence's positions are the store-wide arrival order ``orden`` (the pooled
sequence of a key is all its families in that order, a family's its own rows), committed in
that order (``revision.almacen.cola``), so nothing ever lands behind a stored position; the state
only moves forward, written with a condition that never replaces a later one; a new restart
point starts a new state; a state of an older format (v1.5's) is recomputed from the rows and
replaces it. Advancing in rounds equals recomputing from scratch bit for bit
(``puerta.secuencial``). Why and what it costs: docs/revision.md, "El certificador".
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from esquemas.constantes import DECISION_APROBADA, DECISION_OBSOLETA, FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, id_puerta
from migraciones import Database
from puerta.secuencial import (
    FORMATO,
    REJILLA,
    EstadoSecuencia,
    Observacion,
    ResultadoSecuencial,
    avanzar,
    inicial,
    leer,
)
from revision.almacen.cola import ABIERTA, FilaSecuencia

LOTE = 1000  # rows read per query while advancing

_FILAS = (
    "select e.event_id, e.clave_id, e.clave, e.familia, e.puntuacion, e.codigo_ok, e.orden, "
    "e.llegada, i.estado, d.decision from revision_evidencias e "
    "join revision_items i on i.event_id = e.event_id "
    "left join revision_decisiones d on d.event_id = e.event_id "
)
SQL_FILAS_CONJUNTA = (
    _FILAS + "where e.clave_id = $1 and e.sombra = 1 and e.orden > $2 order by e.orden limit $3"
)
SQL_FILAS_FAMILIA = (
    _FILAS + "where e.clave_id = $1 and e.familia = $4 and e.sombra = 1 and e.orden > $2 "
    "order by e.orden limit $3"
)
_CUENTAS = (
    "select count(*), coalesce(sum(case when i.estado = $4 then 1 else 0 end), 0) "
    "from revision_evidencias e join revision_items i on i.event_id = e.event_id "
    "where e.clave_id = $1 and e.sombra = 1 and e.orden > $2 and e.codigo_ok = 1 "
    "and e.puntuacion >= $3"
)
SQL_CUENTAS_CONJUNTA = _CUENTAS
SQL_CUENTAS_FAMILIA = _CUENTAS + " and e.familia = $5"
SQL_LISTAR = (
    "select clave_id, familia, clave, desde, posicion, estado from revision_secuencias "
    "order by clave_id, familia"
)
# Only ever forward: a later restart, or the same restart further on.
SQL_GUARDAR = (
    "update revision_secuencias set desde = $3, posicion = $4, estado = $5 "
    "where clave_id = $1 and familia = $2 and (desde < $3 or (desde = $3 and posicion < $4) "
    "or estado is null)"
)
# A state of an older format, recomputed: replaces exactly the text that was read (a second
# writer that replaced it first wins, and this write changes nothing).
SQL_REEMPLAZAR = (
    "update revision_secuencias set desde = $3, posicion = $4, estado = $5 "
    "where clave_id = $1 and familia = $2 and estado = $6"
)


@dataclass(frozen=True)
class Guardada:
    """One row of ``revision_secuencias``: a gate sequence as the store has it.

    ``estado`` None: no state yet, or one of another format. ``anticuado``: the stored text of
    a state of an older format (v1.5's), which the next write replaces; ``posterior``: the
    stored state is of a newer format (a newer replica wrote it during a rolling upgrade), so
    this build recomputes in memory and never writes over it.
    """

    clave_id: str
    familia: str
    clave: ClavePuerta
    desde: int
    posicion: int
    estado: EstadoSecuencia | None
    anticuado: str | None = None
    posterior: bool = False


def numero_de_formato(formato: object) -> int | None:
    """N of a format name ``fichas-secuencia/N``; None for anything else."""
    familia, _, numero = str(formato).rpartition("/")
    if familia != FORMATO.rpartition("/")[0] or not numero.isdigit():
        return None
    return int(numero)


def leer_guardado(texto: str | None) -> tuple[EstadoSecuencia | None, str | None, bool]:
    """A stored state's text as (the state, or None; the text again when it is of an older
    format; whether it is of a newer one). ``ValueError`` if it is no state at all."""
    if texto is None:
        return None, None, False
    estado = EstadoSecuencia.de_json(texto)
    if estado is not None:
        return estado, None, False
    guardado = numero_de_formato(json.loads(texto).get("formato"))
    actual = numero_de_formato(FORMATO)
    if guardado is None or actual is None:
        raise ValueError(f"not a sequence state: {texto[:80]!r}")
    return None, (texto if guardado < actual else None), guardado > actual


@dataclass(frozen=True)
class Secuencia:
    """One gate's sequence now: how far its decided prefix reaches and what it certifies.

    Counts are of the fichas that can count (code checks passed, a score at or above the grid's
    most lenient λ) since the gate's last restart: ``llegadas`` arrived, ``decididas`` in the
    decided prefix, ``pendientes`` still open anywhere in the sequence; ``bloqueo`` is the first
    of them still open (what stops the prefix), None when every one was decided. ``estado`` is
    the stored state the result is read from.
    """

    familia: str
    clave: ClavePuerta
    desde: int
    llegadas: int
    decididas: int
    pendientes: int
    bloqueo: str | None
    resultado: ResultadoSecuencial
    estado: EstadoSecuencia

    @property
    def id(self) -> str:
        """The gate's record key on ``fichas.puerta``."""
        return id_puerta(self.familia, self.clave)

    @property
    def certificada(self) -> bool:
        """The decided prefix certifies some λ."""
        return self.resultado.umbral is not None

    @property
    def log10_evidencia(self) -> float:
        """log10 of the e-value at the λ where the walk stops (or at the most lenient, when
        every λ has crossed): it opens at log10(1/δ)."""
        umbrales = self.resultado.umbrales
        estado = next((u for u in umbrales if u.umbral == self.resultado.bloqueo), umbrales[-1])
        return math.log10(estado.e_valor) if estado.e_valor > 0 else -math.inf


def cuenta(fila: FilaSecuencia, rejilla: Sequence[float] = REJILLA) -> bool:
    """Whether a ficha could be an approval at some λ of the grid (else it never blocks)."""
    return fila.codigo_ok and fila.puntuacion is not None and fila.puntuacion >= min(rejilla)


def observacion(fila: FilaSecuencia) -> Observacion | None:
    """The decided ficha as the test sees it; None while it is open.

    Approved as is: True; rejected or edited (not publishable as generated): False; closed
    as obsolete (a newer version overtook it, nobody judged it): None, which the opener counts
    as a failure at every λ it reaches (v1.6: leaving a ficha undecided until it is superseded
    never helps a gate open; ``puerta.secuencial.Observacion``).
    """
    if fila.estado == ABIERTA or fila.decision is None:
        return None
    if fila.decision == DECISION_OBSOLETA:
        aprobada: bool | None = None
    else:
        aprobada = fila.decision == DECISION_APROBADA
    return Observacion(fila.puntuacion, fila.codigo_ok, aprobada)


def prefijo(
    filas: Sequence[FilaSecuencia], rejilla: Sequence[float] = REJILLA
) -> tuple[list[tuple[int, Observacion]], str | None]:
    """The decided prefix of ``filas`` (in arrival order) as (position, observation) pairs, and
    the first ficha that can count still open (None: none). Pure.

    An open ficha that can count at no λ of ``rejilla`` reaches none of them, so it changes
    no e-process: it is passed with ``aprobada`` None, and the position moves past it.
    """
    decididas: list[tuple[int, Observacion]] = []
    for fila in filas:
        obs = observacion(fila)
        if obs is None:
            if cuenta(fila, rejilla):
                return decididas, fila.event_id
            obs = Observacion(fila.puntuacion, fila.codigo_ok, None)
        decididas.append((fila.orden, obs))
    return decididas, None


class AlmacenSecuencias:
    """The certifier's reads and writes of ``revision_secuencias`` and of the evidence rows."""

    def __init__(self, database: Database) -> None:
        self._database = database

    async def listar(self) -> list[Guardada]:
        """Every gate sequence the store knows, with its stored state."""
        rows = (await self._database.run(SQL_LISTAR)).rows
        guardadas = []
        for c, f, k, d, p, e in rows:
            estado, anticuado, posterior = leer_guardado(None if e is None else str(e))
            guardadas.append(
                Guardada(
                    clave_id=str(c),
                    familia=str(f),
                    clave=ClavePuerta.model_validate_json(k),
                    desde=int(d),
                    posicion=int(p),
                    estado=estado,
                    anticuado=anticuado,
                    posterior=posterior,
                )
            )
        return guardadas

    async def filas_tras(
        self, clave_id: str, familia: str, posicion: int, limite: int = LOTE
    ) -> list[FilaSecuencia]:
        """The sequence's shadow-mode rows after ``posicion``, in arrival order, at most
        ``limite`` of them."""
        if familia == FAMILIA_TODAS:
            rows = await self._database.run(SQL_FILAS_CONJUNTA, (clave_id, posicion, limite))
        else:
            rows = await self._database.run(
                SQL_FILAS_FAMILIA, (clave_id, posicion, limite, familia)
            )
        return [FilaSecuencia.de_fila(r) for r in rows.rows]

    async def cuentas_tras(
        self, clave_id: str, familia: str, posicion: int, minimo: float
    ) -> tuple[int, int]:
        """(rows that can count, of them still open) after ``posicion``: indexed counts."""
        params: tuple[Any, ...] = (clave_id, posicion, minimo, ABIERTA)
        if familia == FAMILIA_TODAS:
            row = (await self._database.run(SQL_CUENTAS_CONJUNTA, params)).first()
        else:
            row = (await self._database.run(SQL_CUENTAS_FAMILIA, (*params, familia))).first()
        return int(row[0]), int(row[1])

    async def guardar(
        self, clave_id: str, familia: str, estado: EstadoSecuencia, anticuado: str | None = None
    ) -> None:
        """Write the state if it is ahead of the stored one (never backwards); with
        ``anticuado``, in place of that stored text of an older format (recomputed)."""
        valores = (clave_id, familia, estado.desde, estado.posicion, estado.a_json())
        if anticuado is not None:
            await self._database.run(SQL_REEMPLAZAR, (*valores, anticuado))
        else:
            await self._database.run(SQL_GUARDAR, valores)


@functools.lru_cache(maxsize=1024)
def resultado_de(estado: EstadoSecuencia) -> ResultadoSecuencial:
    """``leer``, remembered per state: a sequence with no new decision costs no walk (and no
    ``faltan``, which plays approvals forward) in the next round."""
    return leer(estado)


def estado_de_partida(
    guardada: Guardada,
    desde: int,
    objetivo: float,
    delta: float,
    rejilla: Sequence[float] = REJILLA,
) -> EstadoSecuencia:
    """The state to advance from: the stored one, or a new one when there is none, a later
    restart point, or other constants (objective, δ, grid) than the stored state's."""
    estado = guardada.estado
    if (
        estado is None
        or estado.desde < desde
        or estado.objetivo != objetivo
        or estado.delta != delta
        or estado.rejilla != tuple(rejilla)
    ):
        return inicial(objetivo, delta, rejilla, desde=desde)
    return estado


async def avanzar_filas(
    almacen: AlmacenSecuencias,
    clave_id: str,
    familia: str,
    partida: EstadoSecuencia,
    lote: int = LOTE,
) -> tuple[EstadoSecuencia, str | None]:
    """``partida`` advanced by the decided prefix of the sequence's rows after its position
    (the family's shadow-mode rows, or the key's for ``*``), at its own grid; and the first
    ficha that can count at that grid still open (None: none).

    Reads the rows in batches until that ficha (or the end); each batch is advanced on a
    thread, so a long first round (after an upgrade) never stalls the app's event loop.
    """
    estado = partida
    while True:
        filas = await almacen.filas_tras(clave_id, familia, estado.posicion, lote)
        decididas, bloqueo = prefijo(filas, estado.rejilla)
        if decididas:
            estado = await asyncio.to_thread(avanzar, estado, decididas)
        if bloqueo is not None or len(filas) < lote:
            return estado, bloqueo


async def avanzar_secuencia(
    almacen: AlmacenSecuencias,
    guardada: Guardada,
    desde: int,
    objetivo: float,
    delta: float,
    rejilla: Sequence[float] = REJILLA,
    guardar: bool = True,
    lote: int = LOTE,
) -> Secuencia:
    """Advance one sequence by its newly decided prefix (``avanzar_filas``); its state written
    when ``guardar`` (never over a state of a newer format)."""
    partida = estado_de_partida(guardada, desde, objetivo, delta, rejilla)
    estado, bloqueo = await avanzar_filas(
        almacen, guardada.clave_id, guardada.familia, partida, lote
    )
    cambiado = estado is not partida or guardada.estado is not partida
    if guardar and cambiado and not guardada.posterior:
        await almacen.guardar(guardada.clave_id, guardada.familia, estado, guardada.anticuado)
    tras, pendientes = await almacen.cuentas_tras(
        guardada.clave_id, guardada.familia, estado.posicion, min(rejilla)
    )
    return Secuencia(
        familia=guardada.familia,
        clave=guardada.clave,
        desde=estado.desde,
        llegadas=estado.decididas + tras,
        decididas=estado.decididas,
        pendientes=pendientes,
        bloqueo=bloqueo,
        resultado=resultado_de(estado),
        estado=estado,
    )
