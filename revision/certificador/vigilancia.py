"""The gate that closes itself: sample verdicts in publication order -> the online bound and the
change detector -> the gate closed on ``fichas.puerta``.

A ficha the loop published through a gate carries it (``FichaPublicada.puerta``); people's
verdicts on the sampled ones (``correcta`` 1, ``incorrecta`` 0) feed one ``puerta.cierre.Cierre``
per certification (family, key, ``certificada_en``): the online bound and the Shiryaev-Roberts
detector, each at δ/2, in PUBLICATION order (``revision.certificador.publicacion``: the app's
arrival order of the sample, consumed up to the first item nobody decided yet). A covered
family's verdict counts twice: for its covered record's certification and for the pooled one
it rests on (``conjunta_certificada_en``). The gate is closed when either test says so (motivo
``Cierre.motivo()``), once per certification while the topic shows it open under it. Every
replica reads the store (``refrescar``); only the lease holder writes closures. Invariants: a
ficha published without a gate counts for nothing; a new certification starts a new sequence;
nothing is kept that the store cannot rebuild. Why: docs/puerta.md, "Closing", and
docs/revision.md, "La puerta que se cierra sola".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from esquemas.constantes import (
    DELTA_PUERTA,
    MOTIVO_PUERTA_CAMBIO,
    MOTIVO_PUERTA_COTA_BAJA,
    MotivoPuerta,
)
from esquemas.estado_puerta import EstadoPuerta, PuertaAplicada
from puerta.cierre import Cierre
from revision.almacen.cola import Almacen
from revision.certificador.publicacion import (
    LOTE,
    AlmacenMuestra,
    Espera,
    FilaMuestra,
    Prefijo,
)
from revision.certificador.rondas import en_rondas, sin_propagar

log = logging.getLogger(__name__)

REVISAR_S = 5.0  # how often the sample is read and unsent closures are retried
CEDER = 50  # verdicts fed between two turns of the event loop (about 25 ms of CPU)


@dataclass
class Seguimiento:
    """The closing tests of one certification, over its verdicts in publication order.

    ``prefijo``: where its items stand (the last consumed, the ones waiting behind the first
    undecided); ``cierre``: the bound and the detector, fed the consumed verdicts.
    """

    certificacion: PuertaAplicada
    delta: float = DELTA_PUERTA
    veredictos: int = 0
    incorrectas: int = 0
    prefijo: Prefijo = field(default_factory=Prefijo)
    cierre: Cierre = field(init=False)

    def __post_init__(self) -> None:
        self.cierre = Cierre(self.certificacion.objetivo, self.delta)

    def anotar(self, correcta: bool) -> None:
        """One more verdict, in publication order."""
        self.veredictos += 1
        self.incorrectas += 0 if correcta else 1
        self.cierre.anotar(correcta)

    def anotar_todos(self, veredictos: Iterable[bool]) -> None:
        """The verdicts a prefix released, in order."""
        for correcta in veredictos:
            self.anotar(correcta)

    @property
    def cota_inferior(self) -> float:
        """Anytime-valid lower bound on the precision of the gate's publications (at δ/2)."""
        return self.cierre.cota.cota_inferior

    @property
    def cota_superior(self) -> float:
        """Anytime-valid upper bound on that precision (at δ/2)."""
        return self.cierre.cota.cota_superior

    @property
    def log_r(self) -> float:
        """The detector's log R (``-inf`` before any verdict)."""
        return self.cierre.detector.log_r

    @property
    def umbral_log(self) -> float:
        """log of the threshold the detector compares the next verdict with."""
        return self.cierre.detector.umbral()

    @property
    def motivo(self) -> str | None:
        """Why the gate must close now (``cota_en_linea_bajo_objetivo`` or
        ``cambio_detectado``), or None."""
        return self.cierre.motivo()

    @property
    def bajo_objetivo(self) -> bool:
        """The verdicts show, at risk δ, that the precision is below the gate's objective:
        the bound since certification or the detector of a drop."""
        return self.motivo is not None

    @property
    def bloqueo(self) -> Espera | None:
        """The first sampled item nobody decided yet, which holds the later verdicts back."""
        return self.prefijo.bloqueo

    @property
    def pendientes(self) -> int:
        """Sampled items of this certification nobody decided yet."""
        return self.prefijo.pendientes

    @property
    def retenidos(self) -> int:
        """Verdicts taken that wait behind the first undecided item."""
        return self.prefijo.retenidos


@dataclass(frozen=True)
class Instantanea:
    """A certification's figures at one moment, for a reader on another thread (``/metrics``
    is built in one while the event loop feeds the sequences)."""

    certificacion: PuertaAplicada
    veredictos: int
    incorrectas: int
    cota_inferior: float
    cota_superior: float
    log_r: float
    umbral_log: float
    motivo: str | None
    pendientes: int
    retenidos: int
    bloqueo: Espera | None

    @property
    def bajo_objetivo(self) -> bool:
        """The bound or the detector closes the gate."""
        return self.motivo is not None


def instantanea(seguimiento: Seguimiento) -> Instantanea:
    """The figures of ``seguimiento`` now (call it on the event loop)."""
    bloqueo = seguimiento.bloqueo
    return Instantanea(
        certificacion=seguimiento.certificacion,
        veredictos=seguimiento.veredictos,
        incorrectas=seguimiento.incorrectas,
        cota_inferior=seguimiento.cota_inferior,
        cota_superior=seguimiento.cota_superior,
        log_r=seguimiento.log_r,
        umbral_log=seguimiento.umbral_log,
        motivo=seguimiento.motivo,
        pendientes=seguimiento.pendientes,
        retenidos=seguimiento.retenidos,
        bloqueo=None if bloqueo is None else replace(bloqueo),
    )


def _seguimiento(
    seguimientos: dict[PuertaAplicada, Seguimiento], cert: PuertaAplicada, delta: float
) -> Seguimiento:
    """The certification's sequence, begun when first seen."""
    seguimiento = seguimientos.get(cert)
    if seguimiento is None:
        seguimiento = seguimientos[cert] = Seguimiento(cert, delta)
    return seguimiento


Soltados = list[tuple[Seguimiento, list[bool]]]
"""Verdicts a prefix released, per certification, in order, not yet fed to its tests."""


def llega(
    seguimientos: dict[PuertaAplicada, Seguimiento], fila: FilaMuestra, delta: float = DELTA_PUERTA
) -> Soltados:
    """A sample item read for the first time, in the app's arrival order: each certification it
    belongs to consumes it, or waits for it; the verdicts that releases, for the caller to feed
    (``anotar``)."""
    soltados: Soltados = []
    for cert in fila.certificaciones:
        seguimiento = _seguimiento(seguimientos, cert, delta)
        soltados.append((seguimiento, seguimiento.prefijo.llega(fila)))
    return soltados


def anotar(soltados: Soltados) -> None:
    """Feed released verdicts to their certifications' tests, in order."""
    for seguimiento, veredictos in soltados:
        seguimiento.anotar_todos(veredictos)


def seguir(
    filas: Iterable[FilaMuestra], delta: float = DELTA_PUERTA
) -> dict[PuertaAplicada, Seguimiento]:
    """The sequences of every certification from the sample's items in the app's arrival
    order, each as it stands now (decided or not); pure, so a restart rebuilds exactly what
    was lost."""
    seguimientos: dict[PuertaAplicada, Seguimiento] = {}
    for fila in filas:
        anotar(llega(seguimientos, fila, delta))
    return seguimientos


def actuales(seguimientos: Mapping[PuertaAplicada, Seguimiento]) -> dict[str, Seguimiento]:
    """Per gate id, the sequence of its newest certification (what the metrics show)."""
    por_puerta: dict[str, Seguimiento] = {}
    for cert, seg in seguimientos.items():
        previo = por_puerta.get(cert.id)
        if previo is None or previo.certificacion.certificada_en < cert.certificada_en:
            por_puerta[cert.id] = seg
    return por_puerta


def abierta_bajo(estado: EstadoPuerta | None, cert: PuertaAplicada) -> bool:
    """Whether ``fichas.puerta`` shows the gate open under this certification or an older one.

    A gate certified again after the verdicts' publications is left alone: its new threshold
    was measured on its own data, and its own sample will judge it.
    """
    return (
        estado is not None
        and estado.abierta
        and estado.actualizada_en.astimezone(UTC) <= cert.certificada_en.astimezone(UTC)
    )


def estado_cerrado(
    seguimiento: Seguimiento, abierto: EstadoPuerta | None, ahora: datetime
) -> EstadoPuerta:
    """The closed record for ``fichas.puerta``: same family and key, no threshold, the test
    that closed it (its motivo), the bound, and the certification's n/k (from the open state
    when known, else from the published fichas) so an auditor sees what was overturned."""
    cert = seguimiento.certificacion
    origen = abierto.origen_datos if abierto is not None else "desconocido"
    cambio = seguimiento.motivo == MOTIVO_PUERTA_CAMBIO
    motivo: MotivoPuerta = MOTIVO_PUERTA_CAMBIO if cambio else MOTIVO_PUERTA_COTA_BAJA
    if cambio:
        que = (
            f"cerrada por el detector de cambios de la muestra de revisión: log R = "
            f"{seguimiento.log_r:.2f} >= {seguimiento.umbral_log:.2f}"
        )
    else:
        que = "cerrada por la cota en línea de la muestra de revisión"
    return EstadoPuerta(
        familia=cert.familia,
        clave=cert.clave,
        abierta=False,
        umbral=None,
        objetivo=abierto.objetivo if abierto is not None else cert.objetivo,
        delta=abierto.delta if abierto is not None else seguimiento.delta,
        n=abierto.n if abierto is not None else cert.n,
        k=abierto.k if abierto is not None else cert.k,
        origen_datos=(
            f"{que}: {seguimiento.veredictos} veredictos en orden de publicación, "
            f"{seguimiento.incorrectas} incorrectos, precisión en "
            f"[{seguimiento.cota_inferior:.3f}, {seguimiento.cota_superior:.3f}] con riesgo "
            f"{seguimiento.delta / 2} para la cota y {seguimiento.delta / 2} para el detector "
            f"(certificada el {cert.certificada_en.isoformat()} con λ = {cert.umbral}; datos de "
            f"la certificación: {origen})"
        ),
        motivo=motivo,
        cota_inferior=seguimiento.cota_inferior,
        actualizada_en=ahora,
    )


def por_cerrar(
    seguimientos: Mapping[PuertaAplicada, Seguimiento],
    estados: Mapping[str, EstadoPuerta],
    ahora: datetime,
) -> list[tuple[PuertaAplicada, EstadoPuerta]]:
    """The closed records to publish now, at most one per gate: every certification whose
    bound or detector closes it while its gate is still open under it. Pure; empty once the
    records are on the topic, so repeated bad verdicts publish nothing more."""
    cerrar: dict[str, tuple[PuertaAplicada, EstadoPuerta]] = {}
    for cert, seg in seguimientos.items():
        estado = estados.get(cert.id)
        if seg.bajo_objetivo and abierta_bajo(estado, cert) and cert.id not in cerrar:
            cerrar[cert.id] = (cert, estado_cerrado(seg, estado, ahora))
    return list(cerrar.values())


Escritor = Callable[[EstadoPuerta], Any]


class Vigilancia:
    """The app's monitor: the sequences, the gates' current states, and the closing writes.

    ``estados`` returns the current states of ``fichas.puerta`` (a ``puerta.topico.
    LectorPuertas`` snapshot); ``escribir`` writes one record there (an awaitable). With
    ``almacen`` each round first reads the sample's new items and the waiting items' decisions
    (``refrescar``); ``titular`` says whether this replica writes (the lease,
    ``revision.certificador.lease``).
    """

    def __init__(
        self,
        estados: Callable[[], Mapping[str, EstadoPuerta]],
        escribir: Escritor,
        delta: float = DELTA_PUERTA,
        almacen: Almacen | None = None,
        titular: Callable[[], bool] = lambda: True,
        cada_s: float = REVISAR_S,
    ) -> None:
        self._estados = estados
        self._escribir = escribir
        self.delta = delta
        self._muestra = AlmacenMuestra(almacen.database) if almacen is not None else None
        self._titular = titular
        self.cada_s = cada_s
        self.seguimientos: dict[PuertaAplicada, Seguimiento] = {}
        # Correct verdicts on gate publications per family: the recall's C
        # (revision/certificador/retenidas.py), each counted once, when first seen decided.
        self.correctas: dict[str, int] = {}
        # (familia, key id, motivo) -> closed records this process wrote: the counter on /metrics.
        self.cerradas: dict[tuple[str, str, str], int] = {}
        self._enviadas: set[tuple[str, datetime]] = set()
        self._leido = -1  # the last sample number read
        self._lock = asyncio.Lock()

    def _contar(self, familia: str, veredicto: bool | None) -> None:
        """A correct verdict on a gate's publication, seen decided for the first time."""
        if veredicto:
            self.correctas[familia] = self.correctas.get(familia, 0) + 1

    def _llega(self, fila: FilaMuestra) -> Soltados:
        """A sample item read for the first time (numbers after every one read before); the
        verdicts it releases, not yet fed."""
        self._leido = max(self._leido, fila.orden)
        if not fila.certificaciones:
            return []
        if not fila.abierta:
            self._contar(fila.familia, fila.veredicto)
        return llega(self.seguimientos, fila, self.delta)

    def llega(self, fila: FilaMuestra) -> None:
        """``_llega``, its verdicts fed at once (a caller outside the rounds)."""
        anotar(self._llega(fila))

    def _decidida(self, event_id: str, familia: str, veredicto: bool | None) -> Soltados:
        """A waiting item was decided: the verdicts it held back, released, not yet fed."""
        self._contar(familia, veredicto)
        return [
            (seguimiento, seguimiento.prefijo.decidida(event_id, veredicto))
            for seguimiento in self.seguimientos.values()
        ]

    async def _anotar(self, soltados: Soltados) -> None:
        """Feed released verdicts, letting the event loop serve pages every ``CEDER`` of them:
        an item left undecided for days can release thousands at once (about half a
        millisecond of CPU each, the bound's grid)."""
        hechos = 0
        for seguimiento, veredictos in soltados:
            for correcta in veredictos:
                seguimiento.anotar(correcta)
                hechos += 1
                if hechos % CEDER == 0:
                    await asyncio.sleep(0)

    async def refrescar(self) -> int:
        """Read the decisions of the waiting items, then the sample's items stored since the
        last read (by any replica); how many items were new. The first read takes them all."""
        if self._muestra is None:
            return 0
        familias = {
            e.event_id: e.familia
            for seg in self.seguimientos.values()
            for e in seg.prefijo.espera
            if e.abierta
        }
        for event_id, (abierta, veredicto) in (await self._muestra.estados(list(familias))).items():
            if not abierta:
                await self._anotar(self._decidida(event_id, familias[event_id], veredicto))
        nuevas = 0
        while True:
            filas = await self._muestra.tras(self._leido, LOTE)
            for fila in filas:
                await self._anotar(self._llega(fila))
            nuevas += len(filas)
            if len(filas) < LOTE:
                return nuevas

    async def revisar(self) -> list[EstadoPuerta]:
        """Read the sample; on the lease holder, publish the closed state of every gate that
        must close; the records written.

        A closure already written by this process is not written again while the reader has
        not caught up with it; a failed write is retried by the next call. Closures are not
        written once per mark (``revision.certificador.escritura``), unlike openings: a gate
        reopened under the same certification, with the very record that was closed, must close
        again, and a second closure (a new holder whose reader lags) closes what is closed already.
        """
        async with self._lock:
            await self.refrescar()
            if not self._titular():
                return []
            ahora = datetime.now(UTC)
            escritos = []
            for cert, estado in por_cerrar(self.seguimientos, self._estados(), ahora):
                enviada = (cert.id, cert.certificada_en)
                if enviada in self._enviadas or not self._titular():
                    continue
                await self._escribir(estado)
                self._enviadas.add(enviada)
                clave = (cert.familia, cert.clave.texto(), estado.motivo)
                self.cerradas[clave] = self.cerradas.get(clave, 0) + 1
                log.warning(
                    "gate %s closed (%s): online precision bound %.3f, objective %.2f (%s)",
                    estado.id,
                    estado.motivo,
                    estado.cota_inferior or 0.0,
                    estado.objetivo,
                    estado.origen_datos,
                )
                escritos.append(estado)
            return escritos

    async def vigilar(self) -> None:
        """Now and every few seconds, until cancelled: the verdicts a decision on any replica
        released, and the closures a restart, a failed write or a gate reopened under an old
        certification left to do."""
        await en_rondas(self.revisar, self.cada_s, "publishing a closed gate")

    async def revisar_o_registrar(self) -> None:
        """``revisar``, with a failure logged (the next round retries) instead of raised."""
        await sin_propagar(self.revisar, "publishing a closed gate")


async def leer_seguimientos(
    almacen: Almacen, delta: float = DELTA_PUERTA
) -> tuple[dict[PuertaAplicada, Seguimiento], dict[str, int]]:
    """Every certification's sequence, and the recall's C per family, from the store as it is
    now (``fichas informe --revision``)."""

    async def nada(_: EstadoPuerta) -> None:
        """Nothing is written from a report."""

    vigilancia = Vigilancia(dict, nada, delta, almacen)
    await vigilancia.refrescar()
    return vigilancia.seguimientos, vigilancia.correctas


def render_texto(seguimientos: Mapping[PuertaAplicada, Seguimiento]) -> str:
    """The section ``fichas informe --revision`` prints: each gate's newest certification."""
    lineas = ["Cota en línea de la puerta (muestra de lo publicado por la puerta)"]
    por_puerta = actuales(seguimientos)
    if not por_puerta:
        lineas.append("  ningún veredicto sobre fichas publicadas por una puerta")
    for id_, seg in sorted(por_puerta.items()):
        cert = seg.certificacion
        estado = "bajo el objetivo: se cierra" if seg.bajo_objetivo else "sin evidencia en contra"
        lineas.append(
            f"  {id_}  λ={cert.umbral}  {seg.veredictos} veredictos, {seg.incorrectas} "
            f"incorrectos, precisión en [{seg.cota_inferior:.3f}, {seg.cota_superior:.3f}] "
            f"(objetivo {cert.objetivo}): {estado}"
        )
    return "\n".join(lineas) + "\n"
