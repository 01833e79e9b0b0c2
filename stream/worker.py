"""``fichas worker``: consume supplier events, run the loop, emit outcomes, never lose one.

How the guarantees of the contract are kept (numbers in docs/stream.md):

* Offsets (guarantee 2): a partition's offset is committed only up to the smallest offset
  whose outcome the broker has not yet acknowledged (``stream.offsets.Ledger``). A SIGKILL at
  any moment therefore redelivers every message without an acknowledged outcome.
* One content per ``event_id`` (guarantee 2): an outcome is emitted only after it was claimed
  in the version store (``stream.versiones``); a redelivery, a second worker or a zombie emits
  the stored outcome, never a new run's.
* Order (guarantees 3, 9): one lane per SKU runs that SKU's events one after another in offset
  order; different SKUs run concurrently, at most ``FICHAS_CONCURRENCIA`` graph runs at once.
  The claim refuses a version older than one already handled, across workers; nothing is
  emitted for a partition this worker no longer owns, and what still runs on it when the
  grace period ends is cancelled. Every write goes through the transactional producer of its
  input partition (``stream.emitter``): the worker that takes a partition fences the old
  owner's producer at the broker, so a write decided before the partition moved can never
  land after the new owner's.
* Obsolete versions (guarantee 1): a lane skips an event when a newer version of the SKU is
  already queued behind it, or when the version store says a newer one was already handled.
* Back-pressure: fetched-but-unfinished messages are capped; past the cap, and while the LLM
  is down (guarantee 7), every partition is paused, so memory stays bounded on any backlog
  and the poll loop keeps heartbeating.
* Invalid input (guarantee 8) goes to the DLQ topic and counts as handled; a valid event whose
  handling keeps failing for a non-transient reason goes there too (``stream.fallos``).
* State stays bounded: an event's checkpoint thread is deleted once its outcome is recorded.
* The publication gate (``FICHAS_PUERTA``, docs/puerta.md): before any input is consumed the
  worker reads ``fichas.puerta`` to its end and keeps following it (``stream.puerta``); the
  graph asks it for the family's gate at every evaluation, so a gate closed on the topic
  stops automatic publication within seconds, and a restarted worker starts from the topic.

The worker talks to the graph only through ``grafo.Procesador``; it knows nothing of prompts.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import signal
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener

from criterios import CRITERIOS_VERSION, familias_conocidas
from esquemas import EventoCambio, EventoInvalido, Origen, leer_evento
from esquemas.constantes import DESTINO_PUBLICADAS
from grafo import Backoff, Procesador, Resultado
from grafo.contexto import sobre_evento
from stream import eventloop
from stream.cabeceras import cabeceras_rechazo, cabeceras_resultado
from stream.config import Settings
from stream.emitter import Emitter, NotOwner, Record
from stream.fallos import FalloPermanente, Reintentos
from stream.http import HealthServer
from stream.kafka import build_consumer, build_producer, ensure_topics
from stream.metricas import PrometheusSensor
from stream.offsets import Ledger
from stream.puerta_topico import seguir_puerta
from stream.rechazo import cabeceras_dlq, clave_dlq, evento_rechazado
from stream.retraso import LAG_INTERVAL_S, informar_retraso
from stream.runtime import build_processor, clave_en_uso
from stream.sensor import WorkerSensor
from stream.versiones import Registro, Veredicto, VersionStore, huella, open_version_store

log = logging.getLogger(__name__)

# A transient failure seen this recently shows in the readiness reason.
RETRYING_WINDOW_S = 60.0
# How often records older than FICHAS_RETENCION_H are deleted.
PRUNE_INTERVAL_S = 60.0


@dataclass
class _Item:
    """One valid event waiting in, or running from, its SKU's lane."""

    tp: TopicPartition
    record: ConsumerRecord
    evento: EventoCambio
    received: float
    done: bool = False

    @property
    def offset(self) -> int:
        """The message's offset in its partition."""
        return int(self.record.offset)


@dataclass
class _Lane:
    """The queue of one SKU; ``task`` runs it while it is not empty."""

    items: deque[_Item] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None
    current: _Item | None = None


def sampled(event_id: str, proportion: float) -> bool:
    """Deterministic sampling: a redelivered event is sampled exactly when the first was."""
    digest = hashlib.sha256(event_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < proportion


def encode(value: dict[str, Any]) -> bytes:
    """Outcome bytes; the same stored dict always gives the same bytes."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _replayed(registro: Registro) -> Resultado:
    """A stored outcome as a ``Resultado`` counted as a redelivery (its attempts were counted)."""
    return Resultado(
        destino=registro.destino,
        salida=registro.salida,
        sku=registro.sku,
        event_id=registro.event_id,
        version=registro.version,
        intentos=int(registro.salida.get("intentos") or 0),
        reentregada=True,
    )


class Worker:
    """One consumer-group member: fetch, dispatch into SKU lanes, emit, commit."""

    def __init__(
        self,
        settings: Settings,
        procesador: Procesador,
        versions: VersionStore,
        sensor: WorkerSensor,
        consumer: AIOKafkaConsumer,
        emitter: Emitter,
    ) -> None:
        self._settings = settings
        self._procesador = procesador
        self._versions = versions
        self._sensor = sensor
        self._consumer = consumer
        self._emitter = emitter
        self._familias = familias_conocidas()
        self._ledger = Ledger(consumer)
        self._lanes: dict[str, _Lane] = {}
        self._running: dict[TopicPartition, int] = {}
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._pending = 0
        self._limit = max(2 * settings.concurrencia, 8)
        self._graph_slots = asyncio.Semaphore(settings.concurrencia)
        self._retrying: dict[str, float] = {}
        self._steps = Reintentos(
            Backoff(base_s=0.2, cap_s=30.0), self._on_step_failure, self._on_step_recovered
        )
        self._last_prune = time.monotonic()
        self._last_lag = 0.0
        self._lag_task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._draining = False
        self.joined = False

    # ------------------------------------------------------------------ main loop

    def stop(self) -> None:
        """Ask the worker to stop fetching and drain (SIGTERM, SIGINT)."""
        self._stopping.set()

    def readiness(self) -> tuple[bool, str]:
        """Ready once the consumer has joined the group (first assignment) and until stopping.

        The LLM being down, or a dependency being retried, keeps the worker ready: it is a
        member of the group waiting for the dependency (guarantee 7), and restarting it would
        not help. The reason says so, as ``fichas_llm_paused`` and
        ``fichas_step_failures_total`` do.
        """
        if self._stopping.is_set():
            return False, "stopping"
        if not self.joined:
            return False, "joining the consumer group"
        notes = []
        if not self._procesador.health.is_up:
            notes.append("LLM down, consumption paused")
        recent = time.monotonic() - RETRYING_WINDOW_S
        retrying = sorted(step for step, seen in self._retrying.items() if seen >= recent)
        if retrying:
            notes.append("retrying " + ", ".join(retrying))
        return True, "; ".join(["ok", *notes])

    async def run(self) -> None:
        """Fetch until stopped, then drain within the grace period and commit."""
        self._consumer.subscribe([self._settings.topic_entrada], listener=_Rebalance(self))
        while not self._stopping.is_set():
            self._flow_control()
            room = max(self._limit - self._pending, 1)
            batch = await self._consumer.getmany(timeout_ms=200, max_records=room)
            for tp, records in batch.items():
                for record in records:
                    self._accept(tp, record)
            await self._ledger.commit_if_due()
            self._measure_lag_if_due()
            self._prune_if_due()
            if self._emitter.fenced.is_set():
                await self._rejoin()
        await self._drain()

    async def _rejoin(self) -> None:
        """A producer of ours was fenced: give every partition back and join the group again.

        If another worker took the partition, the group hands out partitions anew anyway; if
        nobody did (the broker aborted a transaction left open too long), only a new
        assignment gives this worker a producer for it again, and its events a handler.
        """
        self._emitter.fenced.clear()
        log.warning("rejoining the consumer group after a fenced producer")
        await self.on_revoked(set(self._consumer.assignment()))
        self._consumer.unsubscribe()
        self._consumer.subscribe([self._settings.topic_entrada], listener=_Rebalance(self))

    def _flow_control(self) -> None:
        """Pause every partition while the buffer is full or the LLM is down; else resume."""
        assigned = self._consumer.assignment()
        if not assigned:
            return
        if self._pending >= self._limit or not self._procesador.health.is_up:
            self._consumer.pause(*assigned)
        else:
            self._consumer.resume(*assigned)

    def _accept(self, tp: TopicPartition, record: ConsumerRecord) -> None:
        """Track the offset, then route the message to the DLQ or to its SKU's lane."""
        self._ledger.received(tp, record.offset, record.timestamp / 1000)
        self._pending += 1
        self._sensor.set_in_flight(self._pending)
        try:
            evento = self._validate(record)
        except EventoInvalido as exc:
            self._spawn(self._reject(tp, record, exc))
            return
        item = _Item(tp, record, evento, time.monotonic())
        lane = self._lanes.setdefault(evento.sku, _Lane())
        lane.items.append(item)
        if lane.task is None:
            lane.task = asyncio.create_task(self._run_lane(evento.sku, lane))

    def _validate(self, record: ConsumerRecord) -> EventoCambio:
        """Schema and family checks, plus the key: it must be the SKU, or order is lost."""
        evento = leer_evento(record.value, self._familias)
        key = record.key.decode("utf-8", "replace") if record.key is not None else None
        if key != evento.sku:
            raise EventoInvalido(
                "esquema_invalido",
                f"la clave del mensaje ({key!r}) debe ser el SKU ({evento.sku!r})",
                "key",
            )
        return evento

    def _spawn(self, coro: Any) -> None:
        """Run a side task (DLQ write, pruning) and keep a reference until it ends."""
        task = asyncio.create_task(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    # ------------------------------------------------------------------ lanes

    async def _run_lane(self, sku: str, lane: _Lane) -> None:
        """Handle one SKU's events in order until its queue is empty."""
        try:
            while lane.items and not self._draining:
                item = lane.items.popleft()
                lane.current = item
                self._running[item.tp] = self._running.get(item.tp, 0) + 1
                try:
                    await self._handle(item, newer_waiting=self._newer_waiting(lane, item))
                except NotOwner:
                    self._forget_item(item)
                except asyncio.CancelledError:
                    self._forget_item(item)
                    raise
                finally:
                    lane.current = None
                    self._running[item.tp] -= 1
        finally:
            lane.task = None
            if not lane.items and self._lanes.get(sku) is lane:
                del self._lanes[sku]

    @staticmethod
    def _newer_waiting(lane: _Lane, item: _Item) -> bool:
        """A newer version of the same SKU is queued: this one would be overwritten anyway."""
        return any(other.evento.version > item.evento.version for other in lane.items)

    async def _handle(self, item: _Item, newer_waiting: bool) -> None:
        """Handle one event; a step that keeps failing for a non-transient reason sends it
        to the DLQ (``error_procesamiento``), so its lane and its partition's commit go on.

        Every log line about the event carries its sku, event_id and version.
        """
        evento = item.evento
        with sobre_evento(evento.sku, evento.event_id, evento.version):
            await self._handle_or_reject(item, newer_waiting)

    async def _handle_or_reject(self, item: _Item, newer_waiting: bool) -> None:
        """Obsolete, handled, or after a permanent failure the DLQ: the lane goes on."""
        if newer_waiting:
            self._obsoleto(item)
            return
        try:
            await self._handle_event(item)
        except FalloPermanente as exc:
            log.error("event %s gave up on %s; to the DLQ", item.evento.event_id, exc)
            with contextlib.suppress(Exception):
                await self._procesador.olvidar(item.evento)
            await self._reject_item(item, _processing_error(item.evento, exc))

    async def _handle_event(self, item: _Item) -> None:
        """Replay the stored outcome, skip if obsolete, or run the graph and claim the outcome.

        The outcome record (``stream.versiones``) is the one source of what is emitted for an
        ``event_id``: a run's outcome is emitted only after ``reclamar`` recorded it, and a
        run that lost the claim emits the stored outcome or nothing.
        """
        evento = item.evento
        fingerprint = huella(evento)
        stored = await self._steps.run(lambda: self._versions.resultado(evento.event_id), "store")
        if stored is not None:
            await self._replay(item, stored, fingerprint)
            return
        if await self._superseded(evento):
            self._obsoleto(item)
            return
        await self._procesador.health.wait_up()
        async with self._graph_slots:
            resultado = await self._steps.run(lambda: self._procesador.procesar(evento), "graph")
        registro = Registro(
            evento.event_id,
            evento.sku,
            evento.version,
            fingerprint,
            resultado.destino,
            resultado.salida,
        )
        reclamo = await self._steps.run(lambda: self._versions.reclamar(registro), "store")
        if reclamo.veredicto is Veredicto.NUEVO:
            await self._emit(item, registro, first=not resultado.reentregada)
            self._sensor.on_outcome(resultado, time.monotonic() - item.received)
        elif reclamo.veredicto is Veredicto.REGISTRADO and reclamo.registro is not None:
            await self._emit(item, reclamo.registro, first=False)
            self._sensor.on_outcome(_replayed(reclamo.registro), time.monotonic() - item.received)
        elif reclamo.veredicto is Veredicto.REUTILIZADO:
            await self._reject_item(item, _reused(evento))
            return
        else:
            self._sensor.on_obsoleto()
        await self._forget_thread(evento)
        self._done(item)

    async def _replay(self, item: _Item, stored: Registro, fingerprint: str) -> None:
        """An outcome exists for this ``event_id``: re-emit it, unless the event differs."""
        evento = item.evento
        if not stored.mismo_evento(evento, fingerprint):
            await self._reject_item(item, _reused(evento))
            return
        if await self._superseded(evento):
            self._obsoleto(item)
            return
        await self._emit(item, stored, first=False)
        self._sensor.on_outcome(_replayed(stored), time.monotonic() - item.received)
        await self._forget_thread(evento)
        self._done(item)

    def _obsoleto(self, item: _Item) -> None:
        """Superseded by a newer version of the SKU: counted, nothing emitted."""
        self._sensor.on_obsoleto()
        self._done(item)

    async def _superseded(self, evento: EventoCambio) -> bool:
        """A newer version of this SKU was already handled (before a restart, say)."""
        stored = await self._steps.run(lambda: self._versions.get(evento.sku), "store")
        return stored is not None and stored > evento.version

    async def _forget_thread(self, evento: EventoCambio) -> None:
        """Delete the event's checkpoint thread: the outcome record now answers redeliveries."""
        try:
            await self._procesador.olvidar(evento)
        except Exception:
            log.exception("could not delete the checkpoint thread of %s", evento.event_id)

    async def _emit(self, item: _Item, registro: Registro, first: bool) -> None:
        """Write the outcome (and its human-review sample) and wait for the broker's ack.

        Nothing is written for a partition this worker no longer owns. The sample carries
        ``origen`` (the supplier's page and figures): a reviewer judges the published ficha
        against it. The published record itself stays as subscribers know it.
        """
        settings = self._settings
        publicada = registro.destino == DESTINO_PUBLICADAS
        topic = settings.topic_publicadas if publicada else settings.topic_revision
        key = registro.sku.encode("utf-8")
        value = encode(registro.salida)
        headers = cabeceras_resultado(registro.destino, registro.salida)
        records = [Record(topic, value, key, headers)]
        muestreada = publicada and sampled(registro.event_id, settings.muestra_proporcion)
        if muestreada:
            evento = item.evento
            proveedor = evento.ficha_proveedor.model_dump()
            origen = Origen(ficha_proveedor=proveedor, cifras=evento.cifras)
            muestra = encode(registro.salida | {"origen": origen.model_dump(mode="json")})
            records.append(Record(settings.topic_muestra, muestra, key, headers))
        self._check_owner(item)
        await self._steps.run(lambda: self._emitter.send(item.tp, records), "produce")
        if muestreada and first:
            self._sensor.on_sample()

    def _check_owner(self, item: _Item) -> None:
        """Raise ``NotOwner`` when the item's partition was taken from this worker."""
        if not self._emitter.owns(item.tp):
            log.warning("not emitting %s: partition %s was revoked", item.evento.event_id, item.tp)
            raise NotOwner(item.tp)

    # ------------------------------------------------------------------ DLQ

    async def _reject(
        self, tp: TopicPartition, record: ConsumerRecord, exc: EventoInvalido
    ) -> None:
        """Write a DLQ record for an invalid message; the worker goes on.

        If the partition was lost meanwhile, its new owner writes the record instead.
        """
        try:
            await self._send_dlq(tp, record, exc)
        except NotOwner:
            self._leave_buffer()
            return
        self._done_offset(tp, record.offset)

    async def _reject_item(self, item: _Item, exc: EventoInvalido) -> None:
        """Write a DLQ record for a valid-looking event that cannot be handled."""
        self._check_owner(item)
        await self._send_dlq(item.tp, item.record, exc)
        self._done(item)

    async def _send_dlq(
        self, tp: TopicPartition, record: ConsumerRecord, exc: EventoInvalido
    ) -> None:
        """The DLQ record, its key cut to fit and the original headers, acknowledged."""
        registro = evento_rechazado(exc, record.value, tp.topic, tp.partition, record.offset)
        value = encode(registro)
        key = clave_dlq(record.key)
        headers = cabeceras_rechazo(cabeceras_dlq(record.headers))
        records = [Record(self._settings.topic_dlq, value, key, headers)]
        await self._steps.run(lambda: self._emitter.send(tp, records), "produce", acotado=False)
        self._sensor.on_dlq()

    # ------------------------------------------------------------------ bookkeeping

    def _on_step_failure(self, step: str, transient: bool) -> None:
        """A step failed: count it; a transient failure shows in the readiness reason."""
        self._sensor.on_step_failure(step, transient)
        if transient:
            self._retrying[step] = time.monotonic()

    def _on_step_recovered(self, step: str) -> None:
        """A step that was failing went through."""
        self._retrying.pop(step, None)

    def _done(self, item: _Item) -> None:
        """The event is fully handled: its offset no longer holds back the commit."""
        if not item.done:
            item.done = True
            self._done_offset(item.tp, item.offset)

    def _done_offset(self, tp: TopicPartition, offset: int) -> None:
        """A message is fully handled."""
        self._pending -= 1
        self._sensor.set_in_flight(self._pending)
        self._ledger.done(tp, offset)

    def _forget_item(self, item: _Item) -> None:
        """A started item was abandoned (partition lost): it leaves the buffer, not the ledger,
        so its offset is never committed by this worker and the new owner handles it."""
        if not item.done:
            item.done = True
            self._leave_buffer()

    def _leave_buffer(self) -> None:
        """A message leaves the buffer without being handled here: its offset stays pending
        in the ledger, so this worker never commits past it and the new owner handles it."""
        self._pending -= 1
        self._sensor.set_in_flight(self._pending)

    def _prune_if_due(self) -> None:
        """Every few minutes, delete outcome and version records older than the retention."""
        if time.monotonic() - self._last_prune < PRUNE_INTERVAL_S:
            return
        self._last_prune = time.monotonic()
        retention_s = self._settings.retencion_h * 3600

        async def prune() -> None:
            try:
                deleted = await self._versions.podar(retention_s)
            except Exception:
                log.exception("pruning the version store failed; next time")
                return
            if deleted:
                log.info("pruned %d outcome and version records", deleted)

        self._spawn(prune())

    # ------------------------------------------------------------------ lag

    def _measure_lag_if_due(self) -> None:
        """Every few seconds, lag and oldest-event age of every assigned partition."""
        if time.monotonic() - self._last_lag < LAG_INTERVAL_S or self._lag_task is not None:
            return
        self._last_lag = time.monotonic()

        async def measure() -> None:
            try:
                await informar_retraso(self._consumer, self._ledger, self._sensor)
            finally:
                self._lag_task = None

        self._lag_task = asyncio.create_task(measure())

    # ------------------------------------------------------------------ rebalance and stop

    def _forget_queued(self, partitions: set[TopicPartition]) -> None:
        """Drop queued (not started) items of lost partitions: their new owner gets them."""
        for lane in self._lanes.values():
            kept = deque(item for item in lane.items if item.tp not in partitions)
            self._pending -= len(lane.items) - len(kept)
            lane.items = kept
        self._sensor.set_in_flight(self._pending)

    async def _wait_running(self, partitions: set[TopicPartition] | None, timeout: float) -> bool:
        """Wait until no started item of these partitions (all, if None) is still running."""
        deadline = time.monotonic() + timeout
        while True:
            busy = sum(
                count
                for tp, count in self._running.items()
                if partitions is None or tp in partitions
            )
            if busy == 0 and (partitions is not None or not self._side_tasks):
                return True
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)

    async def _cancel_running(self, partitions: set[TopicPartition]) -> None:
        """Cancel the lanes still running an item of a lost partition, and wait for them."""
        tasks = [
            lane.task
            for lane in self._lanes.values()
            if lane.task is not None and lane.current is not None and lane.current.tp in partitions
        ]
        for task in tasks:
            task.cancel()
        if tasks:
            log.warning(
                "grace period over: cancelled %d running fichas of lost partitions", len(tasks)
            )
            await asyncio.gather(*tasks, return_exceptions=True)

    async def on_assigned(self, assigned: set[TopicPartition]) -> None:
        """The group gave this worker partitions: fence their old owners, then emit for them.

        Starting the partitions' transactional producers is retried until the broker answers:
        without them nothing of these partitions could be written.
        """
        await self._steps.run(lambda: self._emitter.claim(assigned), "produce", acotado=False)
        for tp in assigned:
            self._ledger.track(tp)
        self.joined = True

    async def on_revoked(self, revoked: set[TopicPartition]) -> None:
        """Finish what started on lost partitions within the grace period, cancel the rest,
        commit what finished, and forget those partitions."""
        self._forget_queued(revoked)
        finished = await self._wait_running(revoked, self._settings.gracia_s)
        if not finished:
            await self._cancel_running(revoked)
        await self._emitter.release(revoked)
        await self._ledger.commit(only=revoked)
        self._ledger.forget(revoked)
        for tp in revoked:
            self._sensor.clear_lag(tp.topic, tp.partition)

    async def _drain(self) -> None:
        """SIGTERM: stop taking new items, let running ones finish, commit."""
        self._draining = True
        assigned = self._consumer.assignment()
        if assigned:
            self._consumer.pause(*assigned)
        self._forget_queued(self._ledger.partitions())
        log.info(
            "stopping: waiting up to %.0f s (FICHAS_GRACIA_S) for %d running fichas%s",
            self._settings.gracia_s,
            sum(self._running.values()),
            "" if self._procesador.health.is_up else "; the LLM is down, they may not finish",
        )
        if not await self._wait_running(None, self._settings.gracia_s):
            log.warning("grace period over with work still running; it will be redelivered")
        await self._ledger.commit()


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


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    """Hooks the worker's revoke handling into aiokafka's group protocol."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def on_partitions_revoked(self, revoked: Any) -> None:
        """Called before the group reassigns partitions."""
        await self._worker.on_revoked(set(revoked))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        """The group is joined (ready); offsets are tracked from the first fetched message."""
        await self._worker.on_assigned(set(assigned))
        log.info("assigned %s", sorted((tp.topic, tp.partition) for tp in assigned))


async def serve(settings: Settings) -> None:
    """Start every part of the worker, run until a signal, stop them in order."""
    log.info("event loop: %s", eventloop.loop_name())
    sensor = PrometheusSensor(CRITERIOS_VERSION, max_intentos=settings.max_intentos)
    # The stores first: opening them sets up or migrates their schema under the schema lock
    # (migraciones.cerrojo), a precondition of everything else and independent of Kafka.
    async with (
        seguir_puerta(settings, clave_en_uso(settings), sensor) as puerta,
        build_processor(settings, sensor=sensor, puerta=puerta) as procesador,
        open_version_store(settings.postgres_dsn, settings.data_dir) as versions,
    ):
        await ensure_topics(settings)
        consumer = build_consumer(settings)
        emitter = Emitter(lambda txn_id: build_producer(settings, txn_id), settings.grupo)
        worker = Worker(settings, procesador, versions, sensor, consumer, emitter)
        health = HealthServer(sensor.registry, worker.readiness, settings.metricas_puerto)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stop)
        await health.start()
        await consumer.start()
        try:
            await worker.run()
        finally:
            with contextlib.suppress(Exception):
                await consumer.stop()
            await emitter.close()
            await health.stop()


def run_worker(settings: Settings) -> int:
    """Entry point of ``fichas worker``: exit 0 after a clean, signalled stop."""
    eventloop.run(serve(settings))
    log.info("worker stopped")
    return 0
