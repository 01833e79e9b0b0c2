"""One valid event, handled to one ``Desenlace``: emitted, obsolete, or in the DLQ.

Before the graph the claim rule (``versiones.regla.dictaminar``) is asked once with the
event's outcome record and the SKU's newest version; otherwise the graph runs and its outcome
is claimed (``claim``, the compare-and-set); ``_settle`` is the one place the event ends (emit,
DLQ, or nothing) and its checkpoint thread is deleted. A step that keeps failing for a
non-transient reason sends the event to the DLQ; nothing is written for a partition this
worker no longer owns (``NotOwner``). The lane, not the handler, settles the ledger and enters
the event's log context. Why each step: docs/stream.md, "How one message flows".
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
from dataclasses import dataclass, field

from aiokafka import ConsumerRecord, TopicPartition

from esquemas import EventoCambio, EventoInvalido
from esquemas.constantes import DESTINO_PUBLICADAS, Muestreo
from esquemas.wire import cabeceras_resultado, encode_value
from grafo import Procesador, Resultado, origen_revision
from infra.config import Settings
from stream.candidata.bucle import Candidata
from stream.commit.emitter import Emitter
from stream.commit.producers import Record
from stream.flow.fallos import FalloPermanente, Reintentos
from stream.flow.lanes import Item
from stream.flow.muestreo import MinimoDiario, muestreo
from stream.flow.rechazo import registro_dlq
from stream.metricas.sensor import WorkerSensor
from versiones.almacen import ClaimStore, dictamen_previo
from versiones.regla import Dictamen, Reclamo, ResultadoGuardado

log = logging.getLogger(__name__)


class Desenlace(enum.Enum):
    """How the handling of one event ended; each one finishes the event's offset."""

    EMITIDO = "emitido"  # its outcome (new or stored) is written
    OBSOLETO = "obsoleto"  # a newer version of the SKU exists: nothing written
    RECHAZADO = "rechazado"  # a DLQ record is written


@dataclass
class Handler:
    """Handles one event of a lane; the worker makes one and shares it between lanes."""

    settings: Settings
    procesador: Procesador
    versions: ClaimStore
    sensor: WorkerSensor
    emitter: Emitter
    steps: Reintentos  # the worker's retry rule, whose failures show in its readiness
    candidata: Candidata | None = None  # the candidate loop in shadow (stream.candidata.bucle)
    graph_slots: asyncio.Semaphore = field(init=False)
    minimo: MinimoDiario = field(init=False)  # the sample's daily minimum, this replica's count

    def __post_init__(self) -> None:
        self.graph_slots = asyncio.Semaphore(self.settings.concurrencia)
        self.minimo = MinimoDiario(self.settings.muestra_minima_dia)

    async def handle(self, item: Item, newest_waiting: int | None) -> Desenlace:
        """Handle one event: decided, then ended in ``_settle``; a permanent failure, the DLQ."""
        try:
            reclamo, resultado = await self._decide(item.evento, newest_waiting)
            return await self._settle(item, reclamo, resultado)
        except FalloPermanente as exc:
            log.error("event %s gave up on %s; to the DLQ", item.evento.event_id, exc)
            with contextlib.suppress(Exception):
                await self.procesador.olvidar(item.evento)
            return await self._reject(item, _processing_error(item.evento, exc))

    async def _decide(
        self, evento: EventoCambio, newest_waiting: int | None
    ) -> tuple[Reclamo, Resultado | None]:
        """Steps 1 and 2 of the module's list: the claim rule before the graph, then the run
        and its claim when the rule lets the event through (with the run's ``Resultado``)."""
        clave, previo = await self.steps.run(
            lambda: dictamen_previo(self.versions, evento, newest_waiting), "store"
        )
        if previo.dictamen is not Dictamen.NUEVO:
            return previo, None
        if self.candidata is not None:  # never waits: started beside the live run, or skipped
            self.candidata.ofrecer(evento)
        resultado = await self._run_graph(evento)
        guardado = ResultadoGuardado(
            evento.event_id,
            evento.sku,
            evento.version,
            clave.huella,
            resultado.destino,
            resultado.salida,
        )
        reclamo = await self.steps.run(lambda: self.versions.claim(guardado), "store")
        return reclamo, resultado

    async def _run_graph(self, evento: EventoCambio) -> Resultado:
        """Wait while the LLM is down, then run the graph within the concurrency limit."""
        await self.procesador.health.wait_up()
        async with self.graph_slots:
            return await self.procesador.procesar(evento, self.steps.rule("graph"))

    async def _settle(self, item: Item, reclamo: Reclamo, resultado: Resultado | None) -> Desenlace:
        """The one place an event ends: the new or the stored outcome emitted, the DLQ, or
        nothing (obsolete); then its checkpoint thread is deleted.

        ``resultado`` is the run's when this handling ran the graph, None when the decision
        was made before it.
        """
        evento = item.evento
        if reclamo.dictamen is Dictamen.REUTILIZADO:
            return await self._reject(item, _reused(evento))
        guardado = reclamo.guardado
        if reclamo.dictamen is Dictamen.NUEVO and guardado is not None and resultado is not None:
            await self._emit(item, guardado, first=not resultado.reentregada)
            self.sensor.on_outcome(resultado, time.monotonic() - item.ticket.received)
        elif reclamo.dictamen is Dictamen.REGISTRADO and guardado is not None:
            log.info(
                "%s (%s-%d at offset %d) has a recorded outcome: writing it again",
                evento.event_id,
                item.tp.topic,
                item.tp.partition,
                item.ticket.offset,
            )
            await self._emit(item, guardado, first=False)
            self.sensor.on_outcome(_replayed(guardado), time.monotonic() - item.ticket.received)
        await self._forget_thread(evento)
        if reclamo.dictamen is Dictamen.OBSOLETO:
            self.sensor.on_obsolete()
            return Desenlace.OBSOLETO
        return Desenlace.EMITIDO

    async def _forget_thread(self, evento: EventoCambio) -> None:
        """Delete the event's checkpoint thread: the outcome record now answers redeliveries."""
        try:
            await self.procesador.olvidar(evento)
        except Exception:
            log.exception("could not delete the checkpoint thread of %s", evento.event_id)

    async def _emit(self, item: Item, guardado: ResultadoGuardado, first: bool) -> None:
        """Write the outcome (and its human-review sample) with the event's offset, in one
        transaction, committed when this returns."""
        records, muestreada = outcome_records(self.settings, guardado, item.evento, self.minimo)
        offset = item.ticket.offset
        await self.steps.run(lambda: self.emitter.send(item.tp, records, offset), "produce")
        if muestreada is not None and first:
            self.sensor.on_sample(str(guardado.salida.get("familia")), muestreada)

    async def _reject(self, item: Item, exc: EventoInvalido) -> Desenlace:
        """Write a DLQ record for a valid-looking event that cannot be handled."""
        await self.send_dlq(item.tp, item.ticket.record, exc)
        return Desenlace.RECHAZADO

    async def send_dlq(
        self, tp: TopicPartition, record: ConsumerRecord, exc: EventoInvalido
    ) -> None:
        """The DLQ record, its key cut to fit and the original headers, committed with the
        message's offset.

        Also the worker's path for an invalid message, which never reaches a lane.
        """
        records = [registro_dlq(self.settings.topic_dlq, tp, record, exc)]
        offset = int(record.offset)
        await self.steps.run(
            lambda: self.emitter.send(tp, records, offset), "produce", acotado=False
        )
        self.sensor.on_dlq()


def outcome_records(
    settings: Settings,
    guardado: ResultadoGuardado,
    evento: EventoCambio,
    minimo: MinimoDiario | None = None,
) -> tuple[list[Record], Muestreo | None]:
    """The outcome record, plus its human-review sample when sampled (and why it was:
    ``stream.flow.muestreo``, with ``minimo`` the daily minimum's count, none without one).

    The sample carries ``origen`` (the supplier's page and figures): a reviewer judges the
    published ficha against it, and (v1.6) ``muestreo``. The published record itself stays as
    subscribers know it.
    """
    publicada = guardado.destino == DESTINO_PUBLICADAS
    topic = settings.topic_publicadas if publicada else settings.topic_revision
    key = guardado.sku.encode("utf-8")
    headers = cabeceras_resultado(guardado.destino, guardado.salida)
    records = [Record(topic, encode_value(guardado.salida), key, headers)]
    if not publicada:
        return records, None
    salida = guardado.salida
    motivo = muestreo(
        guardado.event_id,
        str(salida.get("familia")),
        salida.get("publicada_en"),
        settings.muestra_proporcion,
        minimo or MinimoDiario(0),
    )
    if motivo is not None:
        origen = origen_revision(evento.model_dump(mode="json")).model_dump(mode="json")
        muestra = encode_value(salida | {"origen": origen, "muestreo": motivo})
        records.append(Record(settings.topic_muestra, muestra, key, headers))
    return records, motivo


def _replayed(guardado: ResultadoGuardado) -> Resultado:
    """A stored outcome as a ``Resultado`` counted as a redelivery (its attempts were counted)."""
    intentos = int(guardado.salida.get("intentos") or 0)
    r = guardado
    return Resultado(r.destino, r.salida, r.sku, r.event_id, r.version, intentos, True)


def _processing_error(evento: EventoCambio, exc: FalloPermanente) -> EventoInvalido:
    """The DLQ error of an event whose processing keeps failing: exception type and event_id."""
    causa = exc.causa
    mensaje = (
        f"{type(causa).__name__} al procesar el event_id {evento.event_id!r} "
        f"(paso {exc.paso}): {str(causa)[:500]}"
    )
    return EventoInvalido("error_procesamiento", mensaje)


def _reused(evento: EventoCambio) -> EventoInvalido:
    """The DLQ error of an ``event_id`` already seen with another SKU, version or content."""
    mensaje = (
        f"el event_id {evento.event_id!r} ya se recibió con otro SKU, versión o contenido; "
        "no se repite el resultado anterior"
    )
    return EventoInvalido("event_id_reutilizado", mensaje, "event_id")
