"""The gate that opens itself: shadow-mode decisions in arrival order -> an anytime-valid test
-> the gate open on ``fichas.puerta`` (docs/puerta.md, "Abrir la puerta").

What is measured. While the gate of a family is closed (shadow mode) every final ficha of the
loop reaches people with its score (``grafo.nodos.decidir``: one loop whatever the gate says).
The app stores, for each item whose record carries the loop's key, its score, whether its code
checks passed, whether it arrived in shadow mode and its arrival position (``revision.almacen``,
``revision.flujo.llegada_de``). Per key, each family's shadow items, and all families' together
(the pooled gate ``*``), form a sequence in arrival order.

The prefix rule. The certifier advances only over the prefix of a sequence in which every ficha
was decided (or closed as obsolete: nobody judged it, it is skipped); the first ficha still open
stops it. Reviewers choose what to decide: if the certifier took decisions in the order people
made them, reviewers who decide the easy fichas first would feed the test a better precision
than the gate would publish at, and it would open early. In arrival order, which no label can
change, the bets of ``puerta.secuencial`` are placed before the labels are seen and its
guarantee holds. A ficha that could be an approval at no λ of the grid (code checks failed, no
score, or a score under the grid's most lenient λ) changes no e-process whether decided or not,
so it never blocks the prefix.

The test. ``puerta.secuencial.certificar_secuencia`` over that prefix, with the gate's
``OBJETIVO_PUERTA`` and ``DELTA_PUERTA``: a betting e-process per λ of a grid fixed in advance,
walked strict to lenient; the probability that a gate is *ever* opened at a λ whose precision is
below the objective is at most δ, however often the app looks (every few seconds and after each
decision). Evidence is per key: a sequence holds only fichas the loop of that key wrote, and
the state written carries that key, so decisions under another model, prompt or criteria
version never open a gate.

Opening. ``--apertura automatica`` (the default): the app writes the open ``EstadoPuerta``
(``abierta_por`` ``automatico``, ``origen_datos`` ``secuencial:sombra``, motivo ``certificada``,
λ, n, k, objetivo, delta) once, and not again while ``fichas.puerta`` shows that gate open under
this key. ``--apertura manual``: the app shows the gate as ready to open with its evidence, and a
reviewer opens it with one click (``abierta_por`` = their name); the certifier checks again at
that moment. The default is automatic because the product's promise is that the loop publishes
on its own where that is certified, and the anytime-valid guarantee needs no human look; manual
is for teams that want a person to own the first publication of a family.

Restarts. A gate closed by the online bound (``revision.vigilancia``, motivo
``cota_en_linea_bajo_objetivo``) starts a new sequence: only fichas stored after the closing
count towards opening it again. The old evidence certified a precision that the sample of its
publications has since shown, at risk δ, to be below the objective; the loop or its input moved,
and reopening on evidence gathered before the move would reopen the very gate the bound just
closed. A family's sequence also restarts when the pooled gate that governed it is closed that
way (the bound measured the mix that family was part of). The restart point is written to the
store (``revision_reinicios``) the first time the app sees the closure, so a restart of the app
keeps it.

Nothing else is kept in memory that the store does not have: every round recomputes from the
store.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    DECISION_APROBADA,
    DECISION_OBSOLETA,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_CERTIFICADA,
    MOTIVO_PUERTA_COTA_BAJA,
    OBJETIVO_PUERTA,
    ORIGEN_SECUENCIAL_SOMBRA,
)
from esquemas.puerta import ClavePuerta, EstadoPuerta, id_puerta
from puerta.secuencial import REJILLA, Observacion, ResultadoSecuencial, certificar_secuencia
from revision.almacen import ABIERTA, Almacen, FilaSecuencia
from revision.rondas import en_rondas, sin_propagar

log = logging.getLogger(__name__)

APERTURA_AUTOMATICA = "automatica"
APERTURA_MANUAL = "manual"
APERTURAS = (APERTURA_AUTOMATICA, APERTURA_MANUAL)
REVISAR_S = 5.0  # how often the sequences are recomputed (and unsent openings retried)


@dataclass(frozen=True)
class Secuencia:
    """One gate's sequence now: how far its decided prefix reaches and what it certifies.

    Counts are of the fichas that can count (code checks passed, a score at or above the grid's
    most lenient λ) since the gate's last restart: ``llegadas`` arrived, ``decididas`` in the
    decided prefix, ``pendientes`` still open anywhere in the sequence; ``bloqueo`` is the first
    of them still open (what stops the prefix), None when every one was decided.
    """

    familia: str
    clave: ClavePuerta
    desde: int
    llegadas: int
    decididas: int
    pendientes: int
    bloqueo: str | None
    resultado: ResultadoSecuencial

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
    as obsolete (a newer version overtook it, nobody judged it): None, skipped.
    """
    if fila.estado == ABIERTA or fila.decision is None:
        return None
    if fila.decision == DECISION_OBSOLETA:
        aprobada: bool | None = None
    else:
        aprobada = fila.decision == DECISION_APROBADA
    return Observacion(fila.puntuacion, fila.codigo_ok, aprobada)


def secuencia(
    filas: Iterable[FilaSecuencia],
    familia: str,
    clave: ClavePuerta,
    desde: int,
    objetivo: float = OBJETIVO_PUERTA,
    delta: float = DELTA_PUERTA,
    rejilla: Sequence[float] = REJILLA,
) -> Secuencia:
    """The gate's sequence from the shadow items ``filas`` (in arrival order, already of this
    gate: its key, and its family unless pooled), from arrival ``desde`` on. Pure."""
    prefijo: list[Observacion] = []
    llegadas = decididas = pendientes = 0
    bloqueo: str | None = None
    for fila in filas:
        if fila.orden < desde:
            continue
        relevante = cuenta(fila, rejilla)
        llegadas += relevante
        obs = observacion(fila)
        if obs is None:
            pendientes += relevante
            if relevante and bloqueo is None:
                bloqueo = fila.event_id
            continue
        if bloqueo is None:
            prefijo.append(obs)
            decididas += relevante
    return Secuencia(
        familia=familia,
        clave=clave,
        desde=desde,
        llegadas=llegadas,
        decididas=decididas,
        pendientes=pendientes,
        bloqueo=bloqueo,
        resultado=certificar_secuencia(prefijo, objetivo, delta, rejilla),
    )


def secuencias(
    filas: Sequence[FilaSecuencia],
    reinicios: Mapping[tuple[str, str], int],
    objetivo: float = OBJETIVO_PUERTA,
    delta: float = DELTA_PUERTA,
    rejilla: Sequence[float] = REJILLA,
) -> list[Secuencia]:
    """Every gate's sequence: per key, each family seen and the pooled ``*``. Pure.

    ``filas``: the shadow items in store-wide arrival order (``Almacen.secuencias``);
    ``reinicios``: (familia or ``*``, key id) -> where that gate's sequence starts now.
    """
    por_clave: dict[str, list[FilaSecuencia]] = {}
    for fila in filas:
        por_clave.setdefault(fila.clave.texto(), []).append(fila)
    resultado = []
    for clave_id, de_clave in sorted(por_clave.items()):
        clave = de_clave[0].clave
        conjunta = reinicios.get((FAMILIA_TODAS, clave_id), 0)
        resultado.append(
            secuencia(de_clave, FAMILIA_TODAS, clave, conjunta, objetivo, delta, rejilla)
        )
        for familia in sorted({f.familia for f in de_clave}):
            desde = max(conjunta, reinicios.get((familia, clave_id), 0))
            propias = [f for f in de_clave if f.familia == familia]
            resultado.append(secuencia(propias, familia, clave, desde, objetivo, delta, rejilla))
    return resultado


def abierta(estado: EstadoPuerta | None, clave: ClavePuerta) -> bool:
    """Whether ``fichas.puerta`` shows this gate open under exactly this key."""
    return estado is not None and estado.abierta and estado.clave == clave


def estado_abierto(sec: Secuencia, abierta_por: str, ahora: datetime) -> EstadoPuerta:
    """The open record the certifier writes: λ, n, k of the walk, who opened it."""
    res = sec.resultado
    assert res.umbral is not None, "only a certified sequence opens a gate"
    return EstadoPuerta(
        familia=sec.familia,
        clave=sec.clave,
        abierta=True,
        umbral=res.umbral,
        objetivo=res.objetivo,
        delta=res.delta,
        n=res.n,
        k=res.k,
        origen_datos=ORIGEN_SECUENCIAL_SOMBRA,
        motivo=MOTIVO_PUERTA_CERTIFICADA,
        actualizada_en=ahora,
        abierta_por=abierta_por,
    )


def por_abrir(secs: Iterable[Secuencia], estados: Mapping[str, EstadoPuerta]) -> list[Secuencia]:
    """The certified sequences whose gate is not open under their key: ready to open. Pure."""
    return [s for s in secs if s.certificada and not abierta(estados.get(s.id), s.clave)]


Escritor = Callable[[EstadoPuerta], Any]


@dataclass
class Apertura:
    """The app's certifier: recompute, restart after closures, open (or offer to open).

    ``estados`` returns the current states of ``fichas.puerta`` (``LectorPuertas.estados``);
    ``escribir`` writes one record there (an awaitable).
    """

    almacen: Almacen
    estados: Callable[[], Mapping[str, EstadoPuerta]]
    escribir: Escritor
    modo: str = APERTURA_AUTOMATICA
    objetivo: float = OBJETIVO_PUERTA
    delta: float = DELTA_PUERTA
    rejilla: Sequence[float] = REJILLA
    secuencias: list[Secuencia] = field(default_factory=list)
    # (family, key id) -> open records this process wrote: the counter on /metrics.
    abiertas: dict[tuple[str, str], int] = field(default_factory=dict)
    _enviadas: set[tuple[str, int]] = field(default_factory=set)
    _reiniciadas: set[tuple[str, str, str]] = field(default_factory=set)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        if self.modo not in APERTURAS:
            raise ValueError(f"apertura must be one of {APERTURAS}, got {self.modo!r}")

    async def _reiniciar(self, estados: Mapping[str, EstadoPuerta]) -> None:
        """Write the restart point of every gate the online bound closed, once per closure."""
        for estado in estados.values():
            if estado.abierta or estado.motivo != MOTIVO_PUERTA_COTA_BAJA:
                continue
            marca = (estado.familia, estado.clave.texto(), estado.actualizada_en.isoformat())
            if marca in self._reiniciadas:
                continue
            await self.almacen.reiniciar(*marca)
            self._reiniciadas.add(marca)

    async def calcular(self) -> list[Secuencia]:
        """Restarts, then every sequence from the store (the test runs on a thread).

        Safe to call concurrently with ``revisar`` (the Puertas page does): both compute from
        the store, and a restart point written twice is written once (its primary key).
        """
        await self._reiniciar(self.estados())
        filas = await self.almacen.secuencias()
        reinicios = await self.almacen.reinicios()
        self.secuencias = await asyncio.to_thread(
            secuencias, filas, reinicios, self.objetivo, self.delta, self.rejilla
        )
        return self.secuencias

    def listas(self) -> list[Secuencia]:
        """Gates ready to open now (certified, not open under their key)."""
        return por_abrir(self.secuencias, self.estados())

    async def revisar(self) -> list[EstadoPuerta]:
        """Recompute; in automatic mode write every gate ready to open; the records written.

        An opening already written by this process for this sequence (same start) is not
        written again while the reader has not caught up with it; a failed write is retried by
        the next call.
        """
        async with self._lock:
            await self.calcular()
            if self.modo != APERTURA_AUTOMATICA:
                return []
            escritos = []
            for sec in self.listas():
                marca = (sec.id, sec.desde)
                if marca in self._enviadas:
                    continue
                estado = await self._abrir(sec, ABIERTA_POR_AUTOMATICO)
                self._enviadas.add(marca)
                escritos.append(estado)
            return escritos

    async def abrir(self, puerta_id: str, revisor: str) -> EstadoPuerta | None:
        """A reviewer's click (manual mode): open the gate if, checked again now, it is
        certified and not open; None otherwise (nothing written)."""
        async with self._lock:
            await self.calcular()
            sec = next((s for s in self.listas() if s.id == puerta_id), None)
            if sec is None:
                return None
            return await self._abrir(sec, revisor)

    async def _abrir(self, sec: Secuencia, abierta_por: str) -> EstadoPuerta:
        """Write the open record and count it."""
        estado = estado_abierto(sec, abierta_por, datetime.now(UTC))
        await self.escribir(estado)
        clave = (sec.familia, sec.clave.texto())
        self.abiertas[clave] = self.abiertas.get(clave, 0) + 1
        log.warning(
            "gate %s opened by %s at λ %.2f: %d decided approvals, %d rejected, in arrival order "
            "(e-value crossed 1/δ = %.0f)",
            estado.id,
            abierta_por,
            estado.umbral or 0.0,
            estado.n,
            estado.k,
            1 / estado.delta,
        )
        return estado

    async def vigilar(self) -> None:
        """Now and every few seconds, until cancelled."""
        await en_rondas(self.revisar, REVISAR_S, "certifying the gates")

    async def revisar_o_registrar(self) -> None:
        """``revisar``, with a failure logged (the next round retries) instead of raised."""
        await sin_propagar(self.revisar, "certifying the gates")
