"""``fichas worker``: consume supplier events, run the loop, emit outcomes, never lose one.

How the guarantees of the contract are kept (numbers in docs/stream.md):

* Offsets (guarantee 2): a partition's offset is committed only up to the smallest offset
  whose outcome the broker has not yet acknowledged (``stream.offsets``). A SIGKILL at any
  moment therefore redelivers every message without an acknowledged outcome, and the
  checkpointer turns each redelivery into a resume or an identical replay.
* Order (guarantee 3): one lane per SKU runs that SKU's events one after another in offset
  order; different SKUs run concurrently, at most ``FICHAS_CONCURRENCIA`` graph runs at once.
* Obsolete versions (guarantee 1): a lane skips an event when a newer version of the SKU is
  already queued behind it, or when the version store says a newer one was already handled.
* Back-pressure: fetched-but-unfinished messages are capped; past the cap, and while the LLM
  is down (guarantee 7), every partition is paused, so memory stays bounded on any backlog
  and the poll loop keeps heartbeating.
* Invalid input (guarantee 8) goes to the DLQ topic and counts as handled.

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

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener

from criterios import CRITERIOS_VERSION, familias_conocidas
from esquemas import EventoCambio, EventoInvalido, Origen, leer_evento
from esquemas.constantes import DESTINO_PUBLICADAS
from grafo import Procesador, Resultado, RetryPolicy
from stream import eventloop
from stream.config import Settings
from stream.http import HealthServer
from stream.kafka import build_consumer, build_producer, ensure_topics
from stream.metricas import PrometheusSensor
from stream.offsets import Ledger
from stream.rechazo import evento_rechazado
from stream.runtime import build_processor
from stream.sensor import WorkerSensor
from stream.versiones import VersionStore, open_version_store

log = logging.getLogger(__name__)


@dataclass
class _Item:
    """One valid event waiting in, or running from, its SKU's lane."""

    tp: TopicPartition
    offset: int
    evento: EventoCambio
    received: float


@dataclass
class _Lane:
    """The queue of one SKU; ``task`` runs it while it is not empty."""

    items: deque[_Item] = field(default_factory=deque)
    task: asyncio.Task[None] | None = None


def sampled(event_id: str, proportion: float) -> bool:
    """Deterministic sampling: a redelivered event is sampled exactly when the first was."""
    digest = hashlib.sha256(event_id.encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < proportion


def encode(value: dict[str, Any]) -> bytes:
    """Outcome bytes; the same stored dict always gives the same bytes."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class Worker:
    """One consumer-group member: fetch, dispatch into SKU lanes, emit, commit."""

    def __init__(
        self,
        settings: Settings,
        procesador: Procesador,
        versions: VersionStore,
        sensor: WorkerSensor,
        consumer: AIOKafkaConsumer,
        producer: AIOKafkaProducer,
    ) -> None:
        self._settings = settings
        self._procesador = procesador
        self._versions = versions
        self._sensor = sensor
        self._consumer = consumer
        self._producer = producer
        self._familias = familias_conocidas()
        self._ledger = Ledger(consumer)
        self._lanes: dict[str, _Lane] = {}
        self._running: dict[TopicPartition, int] = {}
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._pending = 0
        self._limit = max(2 * settings.concurrencia, 8)
        self._graph_slots = asyncio.Semaphore(settings.concurrencia)
        self._retry_policy = RetryPolicy(base_s=0.2, cap_s=30.0)
        self._stopping = asyncio.Event()
        self._draining = False
        self.joined = False

    # ------------------------------------------------------------------ main loop

    def stop(self) -> None:
        """Ask the worker to stop fetching and drain (SIGTERM, SIGINT)."""
        self._stopping.set()

    def readiness(self) -> tuple[bool, str]:
        """Ready once the consumer has joined the group (first assignment) and until stopping.

        The LLM being down keeps the worker ready: it is a member of the group, pausing
        consumption until the LLM answers (guarantee 7), and restarting it would not help.
        The reason then says so, as ``fichas_llm_paused`` does.
        """
        if self._stopping.is_set():
            return False, "stopping"
        if not self.joined:
            return False, "joining the consumer group"
        if not self._procesador.health.is_up:
            return True, "ok; LLM down, consumption paused"
        return True, "ok"

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
            if await self._ledger.commit_if_due():
                self._report_lag()
        await self._drain()

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
        self._ledger.received(tp, record.offset)
        self._pending += 1
        self._sensor.set_in_flight(self._pending)
        try:
            evento = self._validate(record)
        except EventoInvalido as exc:
            self._spawn(self._reject(tp, record, exc))
            return
        item = _Item(tp, record.offset, evento, time.monotonic())
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
        """Run a side task (DLQ write) and keep a reference until it ends."""
        task = asyncio.create_task(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    # ------------------------------------------------------------------ lanes

    async def _run_lane(self, sku: str, lane: _Lane) -> None:
        """Handle one SKU's events in order until its queue is empty."""
        try:
            while lane.items and not self._draining:
                item = lane.items.popleft()
                self._running[item.tp] = self._running.get(item.tp, 0) + 1
                try:
                    await self._handle(item, newer_waiting=self._newer_waiting(lane, item))
                finally:
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
        """Skip if obsolete, else run the graph and write the outcome; then mark it done."""
        evento = item.evento
        if newer_waiting or await self._superseded(evento):
            self._sensor.on_obsoleto()
            self._done(item.tp, item.offset)
            return
        await self._procesador.health.wait_up()
        async with self._graph_slots:
            resultado = await self._retry(lambda: self._procesador.procesar(evento), "graph")
        await self._emit(resultado, evento)
        await self._retry(
            lambda: self._versions.record(evento.sku, evento.version), "version store"
        )
        self._sensor.on_outcome(resultado, time.monotonic() - item.received)
        self._done(item.tp, item.offset)

    async def _superseded(self, evento: EventoCambio) -> bool:
        """A newer version of this SKU was already handled (before a restart, say)."""
        stored = await self._retry(lambda: self._versions.get(evento.sku), "version store")
        return stored is not None and stored > evento.version

    async def _emit(self, resultado: Resultado, evento: EventoCambio) -> None:
        """Write the outcome (and its human-review sample) and wait for the broker's ack.

        The sample carries ``origen`` (the supplier's page and figures): a reviewer judges the
        published ficha against it. The published record itself stays as subscribers know it.
        """
        settings = self._settings
        publicada = resultado.destino == DESTINO_PUBLICADAS
        topic = settings.topic_publicadas if publicada else settings.topic_revision
        key = resultado.sku.encode("utf-8")
        value = encode(resultado.salida)
        await self._retry(lambda: self._producer.send_and_wait(topic, value, key=key), "produce")
        if publicada and sampled(resultado.event_id, settings.muestra_proporcion):
            proveedor = evento.ficha_proveedor.model_dump()
            origen = Origen(ficha_proveedor=proveedor, cifras=evento.cifras)
            muestra = encode(resultado.salida | {"origen": origen.model_dump(mode="json")})
            await self._retry(
                lambda: self._producer.send_and_wait(settings.topic_muestra, muestra, key=key),
                "produce sample",
            )
            if not resultado.reentregada:
                self._sensor.on_sample()

    async def _reject(
        self, tp: TopicPartition, record: ConsumerRecord, exc: EventoInvalido
    ) -> None:
        """Write a DLQ record for an invalid message; the worker goes on."""
        registro = evento_rechazado(exc, record.value, tp.topic, tp.partition, record.offset)
        await self._retry(
            lambda: self._producer.send_and_wait(
                self._settings.topic_dlq, encode(registro), key=record.key
            ),
            "produce dlq",
        )
        self._sensor.on_dlq()
        self._done(tp, record.offset)

    async def _retry(self, call: Any, what: str) -> Any:
        """Retry a step that must not be skipped (broker, database, unexpected errors).

        The waits are ``grafo.RetryPolicy``'s (exponential, full jitter, capped): one backoff
        rule for the LLM calls inside the graph and for the worker's own steps.
        """
        failures = 0
        while True:
            try:
                return await call()
            except (asyncio.CancelledError, KeyboardInterrupt):
                raise
            except Exception:
                failures += 1
                delay = self._retry_policy.delay(failures, None)
                log.exception("%s failed; retrying in %.1f s", what, delay)
                await asyncio.sleep(delay)

    def _done(self, tp: TopicPartition, offset: int) -> None:
        """The message is fully handled: its offset no longer holds back the commit."""
        self._pending -= 1
        self._sensor.set_in_flight(self._pending)
        self._ledger.done(tp, offset)

    # ------------------------------------------------------------------ lag

    def _report_lag(self) -> None:
        """Consumer lag per partition: high watermark minus committed offset."""
        for tp in self._ledger.partitions():
            highwater = self._consumer.highwater(tp)
            committed = self._ledger.committed(tp)
            if highwater is not None and committed is not None:
                self._sensor.set_lag(tp.topic, tp.partition, max(0, highwater - committed))

    # ------------------------------------------------------------------ rebalance and stop

    def _forget_queued(self, partitions: set[TopicPartition]) -> None:
        """Drop queued (not started) items of lost partitions: their new owner gets them."""
        for lane in self._lanes.values():
            kept = deque(item for item in lane.items if item.tp not in partitions)
            self._pending -= len(lane.items) - len(kept)
            lane.items = kept
        self._sensor.set_in_flight(self._pending)

    async def _wait_running(self, partitions: set[TopicPartition] | None, timeout: float) -> None:
        """Wait until no started item of these partitions (all, if None) is still running."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            busy = sum(
                count
                for tp, count in self._running.items()
                if partitions is None or tp in partitions
            )
            if busy == 0 and (partitions is not None or not self._side_tasks):
                return
            await asyncio.sleep(0.05)
        log.warning("grace period over with work still running; it will be redelivered")

    async def on_revoked(self, revoked: set[TopicPartition]) -> None:
        """Finish what started on lost partitions, commit it, and forget those partitions."""
        self._forget_queued(revoked)
        await self._wait_running(revoked, self._settings.gracia_s)
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
        await self._wait_running(None, self._settings.gracia_s)
        await self._ledger.commit()


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    """Hooks the worker's revoke handling into aiokafka's group protocol."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def on_partitions_revoked(self, revoked: Any) -> None:
        """Called before the group reassigns partitions."""
        await self._worker.on_revoked(set(revoked))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        """The group is joined (ready); offsets are tracked from the first fetched message."""
        self._worker.joined = True
        log.info("assigned %s", sorted((tp.topic, tp.partition) for tp in assigned))


async def serve(settings: Settings) -> None:
    """Start every part of the worker, run until a signal, stop them in order."""
    log.info("event loop: %s", eventloop.loop_name())
    sensor = PrometheusSensor(CRITERIOS_VERSION, max_intentos=settings.max_intentos)
    await ensure_topics(settings)
    consumer = build_consumer(settings)
    producer = build_producer(settings)
    async with (
        build_processor(settings, sensor=sensor) as procesador,
        open_version_store(settings.postgres_dsn, settings.data_dir) as versions,
    ):
        worker = Worker(settings, procesador, versions, sensor, consumer, producer)
        health = HealthServer(sensor.registry, worker.readiness, settings.metricas_puerto)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stop)
        await health.start()
        await producer.start()
        await consumer.start()
        try:
            await worker.run()
        finally:
            with contextlib.suppress(Exception):
                await consumer.stop()
            with contextlib.suppress(Exception):
                await producer.stop()
            await health.stop()


def run_worker(settings: Settings) -> int:
    """Entry point of ``fichas worker``: exit 0 after a clean, signalled stop."""
    eventloop.run(serve(settings))
    log.info("worker stopped")
    return 0
