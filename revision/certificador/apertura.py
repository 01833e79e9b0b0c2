"""The certifier: gates opened from shadow-mode evidence, and families the pooled gate covers.

Each round (at start-up, every ``cada_s`` seconds, after each review decision) advances every
gate sequence by its newly decided prefix (``revision.certificador.secuencias``: per key, each
family and the pooled ``*``, in arrival order), and each family's coverage sequence at the open
pooled λ (``revision.certificador.coberturas``). On the replica that holds the lease
(``revision.certificador.lease``) it then writes to ``fichas.puerta``: restart points after the
closures by what people said of publications; the open record of every certified gate in the
automatic scope that is not open nor held, or open at a stricter λ than its sequence now certifies
(``--apertura automatica``); the covered record of every family the open pooled gate covers on its
own evidence, and the closed record of a covered family its exclusion e-process caught
(``puerta.cobertura``). ``--apertura manual`` leaves openings and coverage to a reviewer's click.
Invariants: a round (and a click) decides on one reading of the gates; evidence is per key; a held
gate, or one a promotion replaced (``sustituida``), is never opened nor covered; the app never opens
a family outside ``--apertura-familias`` nor the pooled gate under ``--sin-puerta-conjunta`` (a
reviewer may open such a family's own gate with a click); every record goes through
``revision.certificador.escritura``, once per mark. Why: docs/puerta.md ("La puerta que se abre
sola", "Coverage") and docs/revision.md ("El certificador").
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_CERTIFICADA,
    MOTIVO_PUERTA_CUBIERTA,
    MOTIVO_PUERTA_SUSTITUIDA,
    MOTIVOS_VIGILANCIA,
    OBJETIVO_PUERTA,
    ORIGEN_SECUENCIAL_SOMBRA,
)
from esquemas.estado_puerta import EstadoPuerta
from puerta.alcance import Alcance
from puerta.cobertura import cobertura, escritura
from puerta.resolucion import registro
from puerta.retencion import retencion
from puerta.secuencial import REJILLA, EstadoSecuencia
from revision.almacen.cola import Almacen
from revision.certificador.coberturas import (
    AlmacenCoberturas,
    ClaveCobertura,
    avanzar_coberturas,
    desde_conjunta,
)
from revision.certificador.escritura import EscritorPuerta, marca
from revision.certificador.gobierno import EnJuego, en_juego
from revision.certificador.lease import Lease
from revision.certificador.rondas import en_rondas, sin_propagar
from revision.certificador.secuencias import (
    AlmacenSecuencias,
    Guardada,
    Secuencia,
    avanzar_secuencia,
)

log = logging.getLogger(__name__)

APERTURA_AUTOMATICA = "automatica"
APERTURA_MANUAL = "manual"
APERTURAS = (APERTURA_AUTOMATICA, APERTURA_MANUAL)
REVISAR_S = 5.0  # how often the sequences are advanced (and unsent writes retried)

__all__ = ["APERTURAS", "APERTURA_AUTOMATICA", "APERTURA_MANUAL", "Apertura", "Secuencia"]


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


def abierta_propia(sec: Secuencia, estados: Mapping[str, EstadoPuerta]) -> bool:
    """Whether the gate is open under its key on its own certification (a covered record
    does not count: the family's own certification replaces it)."""
    estado = registro(sec.familia, sec.clave, estados)
    return estado is not None and estado.abierta and estado.motivo != MOTIVO_PUERTA_CUBIERTA


def relajable(sec: Secuencia, estados: Mapping[str, EstadoPuerta]) -> bool:
    """Whether the gate is open on its own certification at a stricter λ than its sequence
    now certifies: its evidence (an open gate's sequence keeps growing with the blind shadow
    share) lets λ relax. Never the other way: closing is the bound's and the detector's job.
    Never the pooled gate: its λ is the one every covered family certified, and a new pooled
    record would uncover them all (docs/revision.md, "Una puerta abierta relaja su λ")."""
    estado = registro(sec.familia, sec.clave, estados)
    umbral = sec.resultado.umbral
    return (
        sec.familia != FAMILIA_TODAS
        and abierta_propia(sec, estados)
        and estado is not None
        and estado.umbral is not None
        and umbral is not None
        and umbral < estado.umbral
    )


def sustituida(sec: Secuencia, estados: Mapping[str, EstadoPuerta]) -> bool:
    """Whether the gate's key was replaced by a promoted candidate (``fichas puerta
    promover`` closed it with motivo ``sustituida``): its evidence still certifies, but no
    worker runs the key any more, so nothing reopens it (docs/operacion.md, "Promoting a
    candidate")."""
    estado = registro(sec.familia, sec.clave, estados)
    return estado is not None and estado.motivo == MOTIVO_PUERTA_SUSTITUIDA


def por_abrir(
    secs: Sequence[Secuencia], estados: Mapping[str, EstadoPuerta], alcance: Alcance
) -> list[Secuencia]:
    """Certified sequences whose gate is not open on its own (or is, at a stricter λ than the
    sequence now certifies: ``relajable``), not held, not replaced by a promotion, and that
    someone may open (the pooled gate not under ``--sin-puerta-conjunta``): ready to open (or
    to relax). Pure."""
    return [
        s
        for s in secs
        if s.certificada
        and (not abierta_propia(s, estados) or relajable(s, estados))
        and retencion(s.familia, s.clave, estados) is None
        and not sustituida(s, estados)
        and (s.familia != FAMILIA_TODAS or alcance.conjunta)
    ]


def desde(guardada: Guardada, reinicios: Mapping[tuple[str, str], int]) -> int:
    """Where a sequence starts now: its own last restart, and for a family also the pooled
    gate's of its key (the bound measured the mix the family was part of)."""
    conjunta = reinicios.get((FAMILIA_TODAS, guardada.clave_id), 0)
    if guardada.familia == FAMILIA_TODAS:
        return conjunta
    return max(conjunta, reinicios.get((guardada.familia, guardada.clave_id), 0))


Escritor = Callable[[EstadoPuerta], Any]


@dataclass
class Apertura:
    """The app's certifier: advance the sequences, restart after closures, open and cover.

    ``estados`` returns the current states of ``fichas.puerta`` (``LectorPuertas.estados``);
    ``escribir`` writes one record there (an awaitable); ``lease`` None: the only certifier.
    """

    almacen: Almacen
    estados: Callable[[], Mapping[str, EstadoPuerta]]
    escribir: Escritor
    modo: str = APERTURA_AUTOMATICA
    alcance: Alcance = field(default_factory=Alcance)
    lease: Lease | None = None
    objetivo: float = OBJETIVO_PUERTA
    delta: float = DELTA_PUERTA
    rejilla: Sequence[float] = REJILLA
    cada_s: float = REVISAR_S
    secuencias: list[Secuencia] = field(default_factory=list)
    # Each family's coverage sequence under its key's open pooled certification.
    coberturas: dict[ClaveCobertura, EstadoSecuencia] = field(default_factory=dict)
    # (family, key id) -> records this process wrote: the counters on /metrics.
    abiertas: dict[tuple[str, str], int] = field(default_factory=dict)
    cubiertas: dict[tuple[str, str, str], int] = field(default_factory=dict)
    rondas: int = 0
    _reiniciadas: set[tuple[str, str, str]] = field(default_factory=set)
    _lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        if self.modo not in APERTURAS:
            raise ValueError(f"apertura must be one of {APERTURAS}, got {self.modo!r}")
        self._store = AlmacenSecuencias(self.almacen.database)
        self._coberturas = AlmacenCoberturas(self.almacen.database)
        self._escritor = EscritorPuerta(self.almacen.database, self.escribir)

    @property
    def titular(self) -> bool:
        """Whether this replica runs the rounds that write (it holds the lease)."""
        return self.lease is None or self.lease.held

    async def _reiniciar(self, estados: Mapping[str, EstadoPuerta]) -> None:
        """Write the restart point of every gate closed by what people said of its
        publications (the online bound or the change detector), once per closure."""
        for estado in estados.values():
            if estado.abierta or estado.motivo not in MOTIVOS_VIGILANCIA:
                continue
            marca_ = (estado.familia, estado.clave.texto(), estado.actualizada_en.isoformat())
            if marca_ in self._reiniciadas:
                continue
            await self.almacen.reiniciar(*marca_)
            self._reiniciadas.add(marca_)

    async def reiniciar(self) -> None:
        """On the lease holder, the restart points of the closures ``fichas.puerta`` shows:
        the app's start-up writes them before its consumer stores any new item."""
        async with self._lock:
            if self.titular:
                await self._reiniciar(self.estados())

    async def calcular(
        self, guardar: bool = False, estados: Mapping[str, EstadoPuerta] | None = None
    ) -> list[Secuencia]:
        """Every sequence, and every coverage sequence under an open pooled gate, advanced by
        its newly decided prefix; the states written back when ``guardar`` (the holder's
        rounds). ``estados``: the round's one view of the gates (default: the reader's now).
        Safe to call concurrently (the Puertas page does): a state is written only ahead of
        the stored one, and advancing is deterministic."""
        vistos = self.estados() if estados is None else estados
        reinicios = await self.almacen.reinicios()
        secuencias = []
        for guardada in await self._store.listar():
            secuencias.append(
                await avanzar_secuencia(
                    self._store,
                    guardada,
                    desde(guardada, reinicios),
                    self.objetivo,
                    self.delta,
                    self.rejilla,
                    guardar=guardar,
                )
            )
        self.coberturas = await avanzar_coberturas(
            self._coberturas, secuencias, vistos, self.objetivo, self.delta, guardar
        )
        self.secuencias = secuencias
        return secuencias

    def en_juego(self, estados: Mapping[str, EstadoPuerta] | None = None) -> EnJuego:
        """The gates in play now: every sequence that could still open a gate (not of a key a
        promotion replaced; the pooled ones only where the pooled gate may open), and the
        coverage sequences under open pooled certifications of families coverage may reach
        (the automatic scope)."""
        vistos = self.estados() if estados is None else estados
        secuencias = [
            s
            for s in self.secuencias
            if not sustituida(s, vistos) and (s.familia != FAMILIA_TODAS or self.alcance.conjunta)
        ]
        coberturas = sum(
            1
            for s in secuencias
            if self.alcance.conjunta
            and self.alcance.incluye(s.familia)
            and self.desde_conjunta(s, vistos) is not None
        )
        return en_juego(secuencias, coberturas, self.delta)

    def desde_conjunta(
        self, sec: Secuencia | None, estados: Mapping[str, EstadoPuerta]
    ) -> EstadoSecuencia | None:
        """The family's coverage sequence under the pooled certification ``estados`` show."""
        return desde_conjunta(self.coberturas, sec, estados)

    def listas(self, estados: Mapping[str, EstadoPuerta] | None = None) -> list[Secuencia]:
        """Gates ready to open now (certified, not open on their own, not held)."""
        return por_abrir(
            self.secuencias, self.estados() if estados is None else estados, self.alcance
        )

    def por_clic(self, familia: str) -> bool:
        """Whether a reviewer's click may open (or cover) this gate: every gate in manual
        mode; in automatic mode, a family outside the automatic scope (its own gate). The
        pooled gate under ``--sin-puerta-conjunta`` never: it would govern no family."""
        if familia == FAMILIA_TODAS:
            return self.modo == APERTURA_MANUAL and self.alcance.conjunta
        return self.modo == APERTURA_MANUAL or not self.alcance.incluye(familia)

    async def revisar(self) -> list[EstadoPuerta]:
        """One round: advance; on the lease holder, restart, open and cover; the records
        written. A record already written (its mark) is never written again; a failed write
        is decided again by the next round."""
        async with self._lock:
            self.rondas += 1
            titular = self.titular
            # One view of the gates for the whole round. A closure the reader delivers while
            # the round runs is this round's "open" and the next round's restart, never a
            # "not open" this round reopens with the evidence from before it.
            estados = dict(self.estados())
            if titular:
                await self._reiniciar(estados)
            await self.calcular(guardar=titular, estados=estados)
            if not (titular and self.titular):
                return []
            escritos: list[EstadoPuerta] = []
            if self.modo == APERTURA_AUTOMATICA:
                for sec in self.listas(estados):
                    if self.alcance.incluye(sec.familia) and self.titular:
                        estado = await self._abrir(sec, ABIERTA_POR_AUTOMATICO, estados)
                        if estado is not None:
                            escritos.append(estado)
            # Coverage sees this round's openings: a family just opened on its own is not
            # covered in the same round (the reader has not read them back yet).
            estados.update((e.id, e) for e in escritos)
            escritos += await self._cubrir(estados)
            await self._escritor.limpiar()
            return escritos

    async def _cubrir(self, estados: Mapping[str, EstadoPuerta]) -> list[EstadoPuerta]:
        """The coverage records the topic lacks: covered records (automatic mode) and the
        closed record of a covered family its own evidence excluded (both modes)."""
        escritos = []
        for sec in self.secuencias:
            if sec.familia == FAMILIA_TODAS or not self.titular:
                continue
            nuevo = self._cobertura(sec, estados)
            if nuevo is None or (nuevo.abierta and self.modo != APERTURA_AUTOMATICA):
                continue
            if await self._escribir_cobertura(nuevo, estados):
                escritos.append(nuevo)
        return escritos

    def _cobertura(
        self, sec: Secuencia, estados: Mapping[str, EstadoPuerta]
    ) -> EstadoPuerta | None:
        """What ``puerta.cobertura.escritura`` says the topic lacks for this family now."""
        conjunta = registro(FAMILIA_TODAS, sec.clave, estados)
        if conjunta is None or not conjunta.abierta:
            return None
        cob = cobertura(
            sec.familia,
            sec.clave,
            estados,
            sec.estado,
            self.alcance,
            self.desde_conjunta(sec, estados),
        )
        return escritura(cob, sec.clave, estados, datetime.now(UTC))

    async def _escribir_cobertura(
        self, nuevo: EstadoPuerta, estados: Mapping[str, EstadoPuerta]
    ) -> bool:
        """Write a covered (or excluded) record once per pooled certification and record it
        replaces; count and log it."""
        previo = estados.get(nuevo.id)
        conjunta = registro(FAMILIA_TODAS, nuevo.clave, estados)
        base = conjunta.actualizada_en.isoformat() if conjunta is not None else "-"
        accion = "cubrir" if nuevo.abierta else "excluir"
        if not await self._escritor.escribir(marca(accion, nuevo.id, base, previo), nuevo):
            return False
        clave = (nuevo.familia, nuevo.clave.texto(), "cubierta" if nuevo.abierta else "excluida")
        self.cubiertas[clave] = self.cubiertas.get(clave, 0) + 1
        log.warning(
            "gate %s %s by the pooled gate at λ %s: %s",
            nuevo.id,
            "covered" if nuevo.abierta else "excluded",
            nuevo.umbral if nuevo.abierta else (conjunta.umbral if conjunta else None),
            nuevo.origen_datos,
        )
        return True

    async def abrir(self, puerta_id: str, revisor: str) -> EstadoPuerta | None:
        """A reviewer's click: open the gate if, checked again now, it is certified, not open,
        not held and theirs to open (``por_clic``); in manual mode, cover a family the pooled
        gate covers. None when nothing was written (not ready, or written already: by another
        replica, or by a second click)."""
        familia = puerta_id.split("|", 1)[0]
        if not self.por_clic(familia):
            return None
        async with self._lock:
            # As a round does: one view, the restart of a closure it shows first (a restart
            # point is written once per closure, whichever replica writes it).
            estados = dict(self.estados())
            await self._reiniciar(estados)
            await self.calcular(estados=estados)
            sec = next((s for s in self.listas(estados) if s.id == puerta_id), None)
            if sec is not None:
                return await self._abrir(sec, revisor, estados)
            if self.modo != APERTURA_MANUAL:
                return None
            propia = next((s for s in self.secuencias if s.id == puerta_id), None)
            if propia is None or propia.familia == FAMILIA_TODAS:
                return None
            nuevo = self._cobertura(propia, estados)
            if nuevo is None or not nuevo.abierta:
                return None
            nuevo = nuevo.model_copy(update={"abierta_por": revisor})
            return nuevo if await self._escribir_cobertura(nuevo, estados) else None

    def cubrible(self, puerta_id: str, estados: Mapping[str, EstadoPuerta]) -> bool:
        """Whether a click would cover this family now (manual mode)."""
        if self.modo != APERTURA_MANUAL:
            return False
        sec = next((s for s in self.secuencias if s.id == puerta_id), None)
        if sec is None or sec.familia == FAMILIA_TODAS:
            return False
        nuevo = self._cobertura(sec, estados)
        return nuevo is not None and nuevo.abierta

    async def _abrir(
        self, sec: Secuencia, abierta_por: str, estados: Mapping[str, EstadoPuerta]
    ) -> EstadoPuerta | None:
        """Write the open record once per sequence start and record it replaces (a gate open
        at a stricter λ gets its relaxed record the same way); count it."""
        estado = estado_abierto(sec, abierta_por, datetime.now(UTC))
        previo = estados.get(sec.id)
        if self.estados().get(sec.id) != previo:
            return None  # the gate changed since this view (a closure): the next round decides
        relaja = previo is not None and relajable(sec, estados)
        if not await self._escritor.escribir(
            marca("abrir", sec.id, str(sec.desde), previo), estado
        ):
            return None
        clave = (sec.familia, sec.clave.texto())
        self.abiertas[clave] = self.abiertas.get(clave, 0) + 1
        log.warning(
            "gate %s %s by %s at λ %.2f: %d decided approvals, %d rejected, in arrival order "
            "(e-value crossed its level in the walk)",
            estado.id,
            f"relaxed from λ {previo.umbral}" if relaja and previo is not None else "opened",
            abierta_por,
            estado.umbral or 0.0,
            estado.n,
            estado.k,
        )
        return estado

    async def vigilar(self) -> None:
        """Now and every ``cada_s`` seconds, until cancelled."""
        await en_rondas(self.revisar, self.cada_s, "certifying the gates")

    async def revisar_o_registrar(self) -> None:
        """``revisar``, with a failure logged (the next round retries) instead of raised."""
        await sin_propagar(self.revisar, "certifying the gates")
