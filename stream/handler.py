"""One valid event, handled to one ``Desenlace``: emitted, obsolete, or in the DLQ.

The steps, in the order they run (docs/stream.md gives the why of each):

1. A newer version of the SKU waits in the lane: obsolete, nothing else is asked.
2. The outcome record of the ``event_id`` (``stream.versiones``): if there is one, the event
   is a redelivery; it is re-emitted as stored, unless the event differs (DLQ,
   ``event_id_reutilizado``) or the store now holds a newer version (obsolete).
3. The store holds a newer version of the SKU: obsolete.
4. Wait while the LLM is down, take a graph slot, run the graph (``grafo.Procesador``).
5. Claim the outcome (``reclamar``, the compare-and-set): emit it when new, emit the stored
   one when another run won, obsolete when a newer version won, DLQ when the ``event_id``
   was used for another event.
6. Delete the event's checkpoint thread; the outcome record answers redeliveries from now on.

A step that keeps failing for a non-transient reason sends the event to the DLQ
(``error_procesamiento``). Nothing is written for a partition this worker no longer owns: the
handler raises ``NotOwner`` and the lane abandons the item. The handler never touches the
commit ledger: the lane finishes the item on whatever ``Desenlace`` comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition

from esquemas import EventoCambio, EventoInvalido, Origen
from esquemas.constantes import DESTINO_PUBLICADAS
from grafo import Procesador, Resultado
from grafo.contexto import sobre_evento
from stream.cabeceras import cabeceras_rechazo, cabeceras_resultado
from stream.config import Settings
from stream.emitter import Emitter, NotOwner, Record
from stream.fallos import FalloPermanente, Reintentos
from stream.lanes import Item
from stream.rechazo import cabeceras_dlq, clave_dlq, evento_rechazado
from stream.sensor import WorkerSensor
from stream.versiones import ClaimStore, Dictamen, Reclamo, ResultadoGuardado, huella, obsoleta

log = logging.getLogger(__name__)


class Desenlace(enum.Enum):
    """How the handling of one event ended; each one finishes the event's offset."""

    EMITIDO = "emitido"  # its outcome (new or stored) is written
    OBSOLETO = "obsoleto"  # a newer version of the SKU exists: nothing written
    RECHAZADO = "rechazado"  # a DLQ record is written


def sampled(event_id: str, proportion: float) -> bool:
    """Deterministic sampling: a redelivered event is sampled exactly when the first was."""
    digest = hashlib.sha256(event_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < proportion


def encode(value: dict[str, Any]) -> bytes:
    """Outcome bytes; the same stored dict always gives the same bytes."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


@dataclass
class Handler:
    """Handles one event of a lane; the worker makes one and shares it between lanes."""

    settings: Settings
    procesador: Procesador
    versions: ClaimStore
    sensor: WorkerSensor
    emitter: Emitter
    steps: Reintentos  # the worker's retry rule, whose failures show in its readiness
    graph_slots: asyncio.Semaphore = field(init=False)

    def __post_init__(self) -> None:
        self.graph_slots = asyncio.Semaphore(self.settings.concurrencia)

    async def handle(self, item: Item, newer_waiting: bool) -> Desenlace:
        """Handle one event; every log line about it carries its sku, event_id and version."""
        evento = item.evento
        with sobre_evento(evento.sku, evento.event_id, evento.version):
            desenlace = await self._handle_or_reject(item, newer_waiting)
        if desenlace is Desenlace.OBSOLETO:
            self.sensor.on_obsoleto()
        return desenlace

    async def _handle_or_reject(self, item: Item, newer_waiting: bool) -> Desenlace:
        """Obsolete, handled, or after a permanent failure the DLQ: the lane goes on."""
        if newer_waiting:
            return Desenlace.OBSOLETO
        try:
            return await self._handle_event(item)
        except FalloPermanente as exc:
            log.error("event %s gave up on %s; to the DLQ", item.evento.event_id, exc)
            with contextlib.suppress(Exception):
                await self.procesador.olvidar(item.evento)
            return await self._reject(item, _processing_error(item.evento, exc))

    async def _handle_event(self, item: Item) -> Desenlace:
        """Steps 2 to 6 of the module's list."""
        evento = item.evento
        fingerprint = huella(evento)
        stored = await self.steps.run(lambda: self.versions.resultado(evento.event_id), "store")
        if stored is not None:
            return await self._replay(item, stored, fingerprint)
        if await self._obsoleta(evento):
            return Desenlace.OBSOLETO
        resultado = await self._run_graph(evento)
        guardado = ResultadoGuardado(
            evento.event_id,
            evento.sku,
            evento.version,
            fingerprint,
            resultado.destino,
            resultado.salida,
        )
        reclamo = await self.steps.run(lambda: self.versions.reclamar(guardado), "store")
        return await self._settle(item, reclamo, resultado)

    async def _run_graph(self, evento: EventoCambio) -> Resultado:
        """Wait while the LLM is down, then run the graph within the concurrency limit."""
        await self.procesador.health.wait_up()
        async with self.graph_slots:
            return await self.steps.run(lambda: self.procesador.procesar(evento), "graph")

    async def _settle(self, item: Item, reclamo: Reclamo, resultado: Resultado) -> Desenlace:
        """Act on the claim: emit the new or the stored outcome, or reject, or skip."""
        evento = item.evento
        if reclamo.dictamen is Dictamen.REUTILIZADO:
            return await self._reject(item, _reused(evento))
        if reclamo.dictamen is Dictamen.NUEVO and reclamo.guardado is not None:
            await self._emit(item, reclamo.guardado, first=not resultado.reentregada)
            self.sensor.on_outcome(resultado, time.monotonic() - item.ticket.received)
        elif reclamo.dictamen is Dictamen.REGISTRADO and reclamo.guardado is not None:
            await self._emit(item, reclamo.guardado, first=False)
            self._on_replayed(item, reclamo.guardado)
        await self._forget_thread(evento)
        if reclamo.dictamen is Dictamen.OBSOLETO:
            return Desenlace.OBSOLETO
        return Desenlace.EMITIDO

    async def _replay(self, item: Item, stored: ResultadoGuardado, fingerprint: str) -> Desenlace:
        """An outcome exists for this ``event_id``: re-emit it, unless the event differs."""
        evento = item.evento
        if not stored.mismo_evento(evento, fingerprint):
            return await self._reject(item, _reused(evento))
        if await self._obsoleta(evento):
            return Desenlace.OBSOLETO
        await self._emit(item, stored, first=False)
        self._on_replayed(item, stored)
        await self._forget_thread(evento)
        return Desenlace.EMITIDO

    async def _obsoleta(self, evento: EventoCambio) -> bool:
        """The store holds a newer version of this SKU (handled before a restart, say)."""
        stored = await self.steps.run(lambda: self.versions.get(evento.sku), "store")
        return obsoleta(evento.version, stored)

    def _on_replayed(self, item: Item, guardado: ResultadoGuardado) -> None:
        """A stored outcome was emitted again: counted as a redelivery."""
        self.sensor.on_outcome(_replayed(guardado), time.monotonic() - item.ticket.received)

    async def _forget_thread(self, evento: EventoCambio) -> None:
        """Delete the event's checkpoint thread: the outcome record now answers redeliveries."""
        try:
            await self.procesador.olvidar(evento)
        except Exception:
            log.exception("could not delete the checkpoint thread of %s", evento.event_id)

    async def _emit(self, item: Item, guardado: ResultadoGuardado, first: bool) -> None:
        """Write the outcome (and its human-review sample) and wait for the broker's ack."""
        records, muestreada = outcome_records(self.settings, guardado, item.evento)
        self._check_owner(item)
        await self.steps.run(lambda: self.emitter.send(item.tp, records), "produce")
        if muestreada and first:
            self.sensor.on_sample()

    def _check_owner(self, item: Item) -> None:
        """Raise ``NotOwner`` when the item's partition was taken from this worker."""
        if not self.emitter.owns(item.tp):
            log.warning("not emitting %s: partition %s was revoked", item.evento.event_id, item.tp)
            raise NotOwner(item.tp)

    async def _reject(self, item: Item, exc: EventoInvalido) -> Desenlace:
        """Write a DLQ record for a valid-looking event that cannot be handled."""
        self._check_owner(item)
        await self.send_dlq(item.tp, item.ticket.record, exc)
        return Desenlace.RECHAZADO

    async def send_dlq(
        self, tp: TopicPartition, record: ConsumerRecord, exc: EventoInvalido
    ) -> None:
        """The DLQ record, its key cut to fit and the original headers, acknowledged.

        Also the worker's path for an invalid message, which never reaches a lane.
        """
        rechazo = evento_rechazado(exc, record.value, tp.topic, tp.partition, record.offset)
        value = encode(rechazo)
        key = clave_dlq(record.key)
        headers = cabeceras_rechazo(cabeceras_dlq(record.headers))
        records = [Record(self.settings.topic_dlq, value, key, headers)]
        await self.steps.run(lambda: self.emitter.send(tp, records), "produce", acotado=False)
        self.sensor.on_dlq()


def outcome_records(
    settings: Settings, guardado: ResultadoGuardado, evento: EventoCambio
) -> tuple[list[Record], bool]:
    """The outcome record, plus its human-review sample when sampled (and whether it was).

    The sample carries ``origen`` (the supplier's page and figures): a reviewer judges the
    published ficha against it. The published record itself stays as subscribers know it.
    """
    publicada = guardado.destino == DESTINO_PUBLICADAS
    topic = settings.topic_publicadas if publicada else settings.topic_revision
    key = guardado.sku.encode("utf-8")
    headers = cabeceras_resultado(guardado.destino, guardado.salida)
    records = [Record(topic, encode(guardado.salida), key, headers)]
    muestreada = publicada and sampled(guardado.event_id, settings.muestra_proporcion)
    if muestreada:
        proveedor = evento.ficha_proveedor.model_dump()
        origen = Origen(ficha_proveedor=proveedor, cifras=evento.cifras)
        muestra = encode(guardado.salida | {"origen": origen.model_dump(mode="json")})
        records.append(Record(settings.topic_muestra, muestra, key, headers))
    return records, muestreada


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
