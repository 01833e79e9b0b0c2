"""The gate that closes itself: sample verdicts -> an online bound -> the gate closed on
``fichas.puerta``.

What is measured. A ficha the loop published through a certified gate carries that gate
(``FichaPublicada.puerta``: family, key, λ, when it was certified). A share of those
publications reaches people on ``fichas.muestra_revision``; their verdict is ``correcta`` (1)
or ``incorrecta`` (0). In the order the verdicts are taken, one sequence per certification of
a gate (``familia`` + ``clave`` + ``certificada_en``) feeds ``puerta.cota.CotaEnLinea``. Ficha
published without a gate (by a person, or under ``FICHAS_PUERTA=veredicto``) do not count:
they say nothing about a threshold.

Why a confidence sequence and not the Wilson interval recomputed at each decision. The app
looks at the bound after every verdict and acts the first time it crosses the objective. A
fixed-n interval is valid for one look at a sample size chosen in advance; checked after every
verdict, the chance that some look falls below the objective by bad luck grows with the number
of looks (to certainty, by the law of the iterated logarithm), so a sound gate would
eventually be closed by noise. A confidence sequence by betting (Waudby-Smith & Ramdas,
"Estimating means of bounded random variables by betting") holds at every verdict at once: the
chance that it is ever wrong is at most δ, however often it is looked at and whenever the app
acts on it.

When the gate closes. ``CotaEnLinea`` keeps both sides of the sequence over the same
verdicts: the lower bound (the ``cota_inferior`` that metrics and the closed record show) and
the upper bound (the same construction on the errors). The gate is closed when the upper bound
is below the objective: then the whole confidence sequence, lower bound included, lies below
it, and the probability that this ever happens to a gate whose precision really meets the
objective is at most δ.
Closing on the lower bound alone would close every gate at its first verdicts: a lower bound
starts at 0 and needs tens of correct verdicts to climb above 0.9, so before that it is
"below the objective" for lack of data, not because the gate is bad. The same rule, risk
monitoring with an online lower bound on the error rate, is the one of Podkopaev & Ramdas,
"Tracking the risk of a deployed model and detecting harmful distribution shifts" (2022).

Restarts. Nothing is kept in memory that the store does not have: at start-up the sequences
are rebuilt from the stored verdicts in the order they were taken, and every few seconds (and
after each verdict) the app closes any gate whose bound is below the objective and that
``fichas.puerta`` still shows open under that certification. A crash between the verdict and
the closed record, or a broker down at that moment, only delays the record.

A new certification (``fichas calibrar`` writes the gate again, with a new ``actualizada_en``)
starts a new sequence: the old verdicts measured another threshold, and the new certification
was made on its own data. Closing a pooled gate (``*``) closes it for every family that relies
on it, which is what the verdicts measured.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from esquemas.constantes import (
    DECISION_CORRECTA,
    DECISION_INCORRECTA,
    DELTA_PUERTA,
    MOTIVO_PUERTA_COTA_BAJA,
)
from esquemas.puerta import EstadoPuerta, PuertaAplicada
from puerta.cota import CotaEnLinea
from revision import retenidas
from revision.rondas import en_rondas, sin_propagar

log = logging.getLogger(__name__)

REVISAR_S = 5.0  # how often unsent closures are retried (as the decisions' outbox)


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


def anotar(
    seguimientos: dict[PuertaAplicada, Seguimiento],
    decision: str,
    publicada: Mapping[str, Any],
    delta: float = DELTA_PUERTA,
) -> Seguimiento | None:
    """Add one verdict to its certification's sequence; None when it does not count."""
    if decision not in (DECISION_CORRECTA, DECISION_INCORRECTA):
        return None
    cert = certificacion_de(publicada)
    if cert is None:
        return None
    seguimiento = seguimientos.get(cert)
    if seguimiento is None:
        seguimiento = seguimientos[cert] = Seguimiento(cert, delta)
    seguimiento.anotar(decision == DECISION_CORRECTA)
    return seguimiento


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
    LectorPuertas`` snapshot); ``escribir`` writes one record there (an awaitable).
    """

    def __init__(
        self,
        estados: Callable[[], Mapping[str, EstadoPuerta]],
        escribir: Escritor,
        delta: float = DELTA_PUERTA,
    ) -> None:
        self._estados = estados
        self._escribir = escribir
        self.delta = delta
        self.seguimientos: dict[PuertaAplicada, Seguimiento] = {}
        self.correctas: dict[str, int] = {}  # recall's C per family (revision/retenidas.py)
        # (familia, key id) -> closed records this process wrote: the counter on /metrics.
        self.cerradas: dict[tuple[str, str], int] = {}
        self._enviadas: set[tuple[str, datetime]] = set()
        self._lock = asyncio.Lock()

    def reconstruir(self, veredictos: Iterable[tuple[str, Mapping[str, Any]]]) -> None:
        """The sequences, and the recall's C, from the stored verdicts (start-up)."""
        lista = list(veredictos)
        self.seguimientos = seguir(lista, self.delta)
        self.correctas = retenidas.correctas_publicadas(lista)

    def anotar(self, decision: str, publicada: Mapping[str, Any]) -> None:
        """A verdict just stored."""
        anotar(self.seguimientos, decision, publicada, self.delta)
        retenidas.contar_correcta(self.correctas, decision, publicada)

    async def revisar(self) -> list[EstadoPuerta]:
        """Publish the closed state of every gate that must close; the records written.

        A closure already written by this process is not written again while the reader has
        not caught up with it; a failed write is retried by the next call.
        """
        async with self._lock:
            ahora = datetime.now(UTC)
            escritos = []
            for cert, estado in por_cerrar(self.seguimientos, self._estados(), ahora):
                marca = (cert.id, cert.certificada_en)
                if marca in self._enviadas:
                    continue
                await self._escribir(estado)
                self._enviadas.add(marca)
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
        await en_rondas(self.revisar, REVISAR_S, "publishing a closed gate")

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
