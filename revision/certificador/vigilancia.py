"""The gate that closes itself: sample verdicts -> an online bound -> the gate closed on
``fichas.puerta``.

A ficha the loop published through a gate carries it (``FichaPublicada.puerta``); people's
verdicts on the sampled ones (``correcta`` 1, ``incorrecta`` 0), in the order taken, feed one
``puerta.cota.CotaEnLinea`` per certification (family, key, ``certificada_en``). A covered
family's verdict counts twice: for its covered record's certification and for the pooled one
it rests on (``conjunta_certificada_en``). The gate is closed when the upper bound falls below
the objective, once per certification while the topic shows it open under it. Every replica
reads the verdicts all replicas took (``refrescar``); only the lease holder writes closures.
Invariants: a ficha published without a gate counts for nothing; a new certification starts a
new sequence; nothing is kept that the store cannot rebuild. Why a confidence sequence, the
closing rule, restarts: docs/puerta.md, "La puerta que se cierra sola".
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from esquemas.constantes import (
    DECISION_CORRECTA,
    DECISION_INCORRECTA,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_COTA_BAJA,
)
from esquemas.estado_puerta import EstadoPuerta, PuertaAplicada
from puerta.cota import CotaEnLinea
from revision.almacen.cola import Almacen
from revision.certificador import retenidas
from revision.certificador.rondas import en_rondas, sin_propagar

log = logging.getLogger(__name__)

REVISAR_S = 5.0  # how often unsent closures are retried (as the decisions' outbox)
# Verdicts are re-read from this long before the last read: a verdict another replica stamped
# (its clock, before its commit) up to this much earlier than it became visible is not missed.
VENTANA_S = 60.0


def certificacion_de(publicada: Mapping[str, Any]) -> PuertaAplicada | None:
    """The certification a published ficha went through: the sequence its verdict belongs to.

    None for a ficha published without a gate (a person's approval, ``FICHAS_PUERTA=veredicto``,
    a record older than v1.2).
    """
    datos = publicada.get("puerta")
    if not isinstance(datos, dict):
        return None
    try:
        return PuertaAplicada.model_validate(datos)
    except ValidationError:
        log.warning("unreadable gate on sample record %s", publicada.get("event_id"))
        return None


@dataclass
class Seguimiento:
    """The online bounds of one certification, over its verdicts in order."""

    certificacion: PuertaAplicada
    delta: float = DELTA_PUERTA
    veredictos: int = 0
    incorrectas: int = 0
    _cota: CotaEnLinea = field(init=False)

    def __post_init__(self) -> None:
        self._cota = CotaEnLinea(delta=self.delta)

    def anotar(self, correcta: bool) -> None:
        """One more verdict, in the order people took them."""
        self.veredictos += 1
        self.incorrectas += 0 if correcta else 1
        self._cota.actualizar(correcta)

    @property
    def cota_inferior(self) -> float:
        """Anytime-valid lower bound on the precision of the gate's publications."""
        return self._cota.cota_inferior

    @property
    def cota_superior(self) -> float:
        """Anytime-valid upper bound on that precision."""
        return self._cota.cota_superior

    @property
    def bajo_objetivo(self) -> bool:
        """The verdicts show, at risk δ, that the precision is below the gate's objective."""
        return self.cota_superior < self.certificacion.objetivo


def seguir(
    veredictos: Iterable[tuple[str, Mapping[str, Any]]], delta: float = DELTA_PUERTA
) -> dict[PuertaAplicada, Seguimiento]:
    """The sequences of every certification from (decision, published record) pairs in the
    order the verdicts were taken; pure, so a restart rebuilds exactly what was lost."""
    seguimientos: dict[PuertaAplicada, Seguimiento] = {}
    for decision, publicada in veredictos:
        anotar(seguimientos, decision, publicada, delta)
    return seguimientos


def conjunta_de(cert: PuertaAplicada) -> PuertaAplicada | None:
    """The pooled certification a covered family's publication also measures; None for a
    gate certified on its own data. Its n and k are not on the ficha (0 here): a closure
    copies them from the pooled gate's open record."""
    if cert.conjunta_certificada_en is None or cert.familia == FAMILIA_TODAS:
        return None
    return cert.model_copy(
        update={
            "familia": FAMILIA_TODAS,
            "certificada_en": cert.conjunta_certificada_en,
            "conjunta_certificada_en": None,
            "n": 0,
            "k": 0,
        }
    )


def anotar(
    seguimientos: dict[PuertaAplicada, Seguimiento],
    decision: str,
    publicada: Mapping[str, Any],
    delta: float = DELTA_PUERTA,
) -> Seguimiento | None:
    """Add one verdict to its certification's sequence (and, for a covered family, to the
    pooled certification's); the family's sequence, or None when it does not count."""
    if decision not in (DECISION_CORRECTA, DECISION_INCORRECTA):
        return None
    cert = certificacion_de(publicada)
    if cert is None:
        return None
    propio: Seguimiento | None = None
    for certificacion in (cert, conjunta_de(cert)):
        if certificacion is None:
            continue
        seguimiento = seguimientos.get(certificacion)
        if seguimiento is None:
            seguimiento = seguimientos[certificacion] = Seguimiento(certificacion, delta)
        seguimiento.anotar(decision == DECISION_CORRECTA)
        propio = propio or seguimiento
    return propio


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
    """The closed record for ``fichas.puerta``: same family and key, no threshold, the bound
    that closed it, and the certification's n/k (from the open state when known, else from
    the published fichas) so an auditor sees what was overturned."""
    cert = seguimiento.certificacion
    origen = abierto.origen_datos if abierto is not None else "desconocido"
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
            f"cerrada por la cota en línea de la muestra de revisión: {seguimiento.veredictos} "
            f"veredictos, {seguimiento.incorrectas} incorrectos, precisión en "
            f"[{seguimiento.cota_inferior:.3f}, {seguimiento.cota_superior:.3f}] con riesgo "
            f"{seguimiento.delta} (certificada el {cert.certificada_en.isoformat()} con λ = "
            f"{cert.umbral}; datos de la certificación: {origen})"
        ),
        motivo=MOTIVO_PUERTA_COTA_BAJA,
        cota_inferior=seguimiento.cota_inferior,
        actualizada_en=ahora,
    )


def por_cerrar(
    seguimientos: Mapping[PuertaAplicada, Seguimiento],
    estados: Mapping[str, EstadoPuerta],
    ahora: datetime,
) -> list[tuple[PuertaAplicada, EstadoPuerta]]:
    """The closed records to publish now, at most one per gate: every certification whose
    bound is below the objective while its gate is still open under it. Pure; empty once the
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
    ``almacen`` each round first reads the verdicts every replica took (``refrescar``);
    ``titular`` says whether this replica writes (the lease, ``revision.certificador.lease``).
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
        self._almacen = almacen
        self._titular = titular
        self.cada_s = cada_s
        self.seguimientos: dict[PuertaAplicada, Seguimiento] = {}
        self.correctas: dict[
            str, int
        ] = {}  # recall's C per family (revision/certificador/retenidas.py)
        # (familia, key id) -> closed records this process wrote: the counter on /metrics.
        self.cerradas: dict[tuple[str, str], int] = {}
        self._enviadas: set[tuple[str, datetime]] = set()
        self._vistos: dict[str, float] = {}  # verdicts counted (by event_id): read once each
        self._leido = 0.0  # when the verdicts were last read from the store
        self._lock = asyncio.Lock()

    def reconstruir(self, veredictos: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """The sequences, and the recall's C, from the stored verdicts (start-up)."""
        lista = list(veredictos)
        self.seguimientos = seguir(lista, self.delta)
        self.correctas = retenidas.correctas_publicadas(lista)
        ahora = time.time()
        self._vistos = {str(p.get("event_id")): ahora for _, p in lista}

    def anotar(
        self, decision: str, publicada: Mapping[str, Any], cuando: float | None = None
    ) -> None:
        """A verdict just stored (here or, read by ``refrescar``, by another replica); a
        verdict already counted is not counted again."""
        event_id = str(publicada.get("event_id"))
        if event_id in self._vistos:
            return
        self._vistos[event_id] = time.time() if cuando is None else cuando
        anotar(self.seguimientos, decision, publicada, self.delta)
        retenidas.contar_correcta(self.correctas, decision, publicada)

    async def refrescar(self) -> int:
        """Read the verdicts taken since the last read (less ``VENTANA_S``) by any replica;
        how many were new. The first read takes every stored verdict."""
        if self._almacen is None:
            return 0
        inicio = time.time()
        desde = self._leido - VENTANA_S if self._leido else 0.0
        nuevos = 0
        for _, decision, publicada, cuando in await self._almacen.veredictos_desde(desde):
            antes = len(self._vistos)
            self.anotar(decision, publicada, cuando)
            nuevos += len(self._vistos) - antes
        self._leido = inicio
        # Forget what no later read can return again.
        self._vistos = {e: t for e, t in self._vistos.items() if t >= inicio - 2 * VENTANA_S}
        return nuevos

    async def revisar(self) -> list[EstadoPuerta]:
        """Read the verdicts; on the lease holder, publish the closed state of every gate that
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
                clave = (cert.familia, cert.clave.texto())
                self.cerradas[clave] = self.cerradas.get(clave, 0) + 1
                log.warning(
                    "gate %s closed: online precision bound %.3f below the objective %.2f (%s)",
                    estado.id,
                    estado.cota_inferior or 0.0,
                    estado.objetivo,
                    estado.origen_datos,
                )
                escritos.append(estado)
            return escritos

    async def vigilar(self) -> None:
        """Now and every few seconds, until cancelled: the closures a restart, a failed write
        or a gate reopened under an old certification left to do."""
        await en_rondas(self.revisar, self.cada_s, "publishing a closed gate")

    async def revisar_o_registrar(self) -> None:
        """``revisar``, with a failure logged (the next round retries) instead of raised."""
        await sin_propagar(self.revisar, "publishing a closed gate")


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
