"""The worker as one consumer-group member: fetch, pace, hand to the SKU lanes, rebalance, stop.

It consumes the input and ``fichas.decisiones`` co-partitioned and keeps, for each, order per
SKU (one lane each, at most ``FICHAS_CONCURRENCIA`` graph runs at once), bounded memory (every
partition paused past the cap of fetched work or while the LLM is down), nothing for a
partition it lost (grace period, cancel, final commit) and a DLQ for invalid input. Committing
is ``stream.commit.emitter``'s, one event ``stream.flow.handler``'s, one decision
``stream.flow.decisiones``'s, start-up and stop ``stream.serving.main``'s; the graph is reached
only through ``grafo.Procesador``. Why: docs/stream.md, "How one message flows", "Rebalance".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.errors import InconsistentGroupProtocolError

from criterios import familias_conocidas
from esquemas import EventoCambio, EventoInvalido, leer_evento
from grafo import Backoff, Procesador
from infra.config import Settings
from infra.kafka.clients import GrupoIncompatible
from stream.candidata.bucle import Candidata
from stream.commit.emitter import Emitter
from stream.commit.inflight import InFlight, Ticket
from stream.flow.decisiones import Decisiones, DecisionItem
from stream.flow.fallos import Reintentos
from stream.flow.handler import Handler
from stream.flow.lanes import Item, LaneItem, Lanes
from stream.flow.rechazo import require_sku_key
from stream.flow.retraso import LAG_INTERVAL_S, informar_retraso
from stream.metricas.sensor import WorkerSensor
from versiones.almacen import ClaimStore

log = logging.getLogger(__name__)

# A transient failure seen this recently shows in the readiness reason.
RETRYING_WINDOW_S = 60.0
# How often records older than FICHAS_RETENCION_H are deleted.
PRUNE_INTERVAL_S = 60.0
LAG_END_WAIT_S = 5.0  # at stop, how long a lag measurement in flight may take to end


class Worker:
    """One consumer-group member: fetch, hand to the SKU lanes, commit; rebalance and stop.

    The parts: ``InFlight`` (what is pending or running, and the ledger calls), ``Lanes`` (the
    per-SKU queues), ``Handler`` (one event to one ``Desenlace``). This class keeps the poll
    loop, flow control, the rebalance hooks and the periodic chores (lag, retention).
    """

    def __init__(
        self,
        settings: Settings,
        procesador: Procesador,
        versions: ClaimStore,
        sensor: WorkerSensor,
        consumer: AIOKafkaConsumer,
        emitter: Emitter,
        candidata: Candidata | None = None,
    ) -> None:
        self._settings = settings
        self._procesador = procesador
        self._versions = versions
        self._sensor = sensor
        self._consumer = consumer
        self._emitter = emitter
        self._familias = familias_conocidas()
        self._ledger = emitter.ledger
        self._inflight = InFlight(self._ledger, sensor)
        self._retrying: dict[str, float] = {}
        self._refused: Exception | None = None
        self._steps = Reintentos(
            Backoff(base_s=0.2, cap_s=30.0),
            self._on_step_failure,
            self._on_step_recovered,
            on_refused=self._on_refused,
        )
        self._handler = Handler(
            settings, procesador, versions, sensor, emitter, self._steps, candidata
        )
        self._decisiones = Decisiones(settings, versions, sensor, emitter, self._steps)
        self._lanes = Lanes(self._inflight, self._handle)
        self._side_tasks: set[asyncio.Task[None]] = set()
        self._limit = max(2 * settings.concurrencia, 8)
        self._last_prune = time.monotonic()
        self._last_lag = 0.0
        self._lag_task: asyncio.Task[None] | None = None
        self._stopping = asyncio.Event()
        self._claim_task: asyncio.Task[None] | None = None
        self._claiming: set[TopicPartition] = set()
        self._must_rejoin: str | None = None
        self.joined = False

    # ------------------------------------------------------------------ main loop

    def stop(self) -> None:
        """Ask the worker to stop fetching and drain (SIGTERM, SIGINT)."""
        self._stopping.set()

    async def stop_requested(self) -> None:
        """Return once ``stop`` was called."""
        await self._stopping.wait()

    def readiness(self) -> tuple[bool, str]:
        """Ready once the first assignment is claimed (producers fenced, offsets read), until
        stopping.

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
        """Fetch until stopped, then drain within the grace period and commit; raise what
        Kafka refused a step (``_on_refused``) once drained."""
        self._subscribe()
        while not self._stopping.is_set():
            self._flow_control()
            room = max(self._limit - self._inflight.pending, 1)
            try:
                batch = await self._consumer.getmany(timeout_ms=200, max_records=room)
            except InconsistentGroupProtocolError as exc:
                raise GrupoIncompatible(self._settings.grupo) from exc
            for tp, records in batch.items():
                for record in records:
                    self._accept(tp, record)
            self._emitter.commit_if_due()
            self._measure_lag_if_due()
            self._prune_if_due()
            if self._emitter.fenced.is_set():
                self._emitter.fenced.clear()
                self._must_rejoin = "a fenced producer"
            if self._must_rejoin is not None:
                await self._rejoin(self._must_rejoin)
        await self._drain()
        if self._refused is not None:
            raise self._refused

    async def _rejoin(self, reason: str) -> None:
        """Give every partition back and join the group again: a producer of ours was fenced,
        or claiming the assigned partitions failed.

        If another worker took the partition, the group hands out partitions anew anyway; if
        nobody did (the broker aborted a transaction left open too long), only a new
        assignment gives this worker a producer for it again, and its events a handler.
        """
        self._must_rejoin = None
        log.warning("rejoining the consumer group after %s", reason)
        await self.on_revoked(set(self._consumer.assignment()))
        self._consumer.unsubscribe()
        self._subscribe()

    def _subscribe(self) -> None:
        """The input and people's decisions, co-partitioned (``stream.flow.decisiones``)."""
        topics = [self._settings.topic_entrada, self._settings.topic_decisiones]
        self._consumer.subscribe(topics, listener=_Rebalance(self))

    def _flow_control(self) -> None:
        """Pause every partition while the buffer is full or the LLM is down, and a partition
        whose window of fetched offsets above its watermark is full (``stream.commit.metadata``:
        its commit metadata must fit the broker's limit); resume the others."""
        assigned = self._consumer.assignment()
        if not assigned:
            return
        if self._inflight.pending >= self._limit or not self._procesador.health.is_up:
            self._consumer.pause(*assigned)
            return
        held = self._claiming | {tp for tp in assigned if self._ledger.window_full(tp)}
        if assigned & held:
            self._consumer.pause(*(assigned & held))
        if assigned - held:
            self._consumer.resume(*(assigned - held))

    def _accept(self, tp: TopicPartition, record: ConsumerRecord) -> None:
        """Track the offset, then route the message to the DLQ or to its SKU's lane."""
        ticket = self._inflight.accept(tp, record)
        if ticket is None:
            return  # finished already (the committed metadata lists it), or a stale fetch
        if tp.topic == self._settings.topic_decisiones:
            self._accept_decision(ticket)
            return
        try:
            evento = self._validate(record)
        except EventoInvalido as exc:
            self._spawn(self._reject(ticket, exc))
            return
        self._lanes.add(Item(ticket, evento))

    def _accept_decision(self, ticket: Ticket) -> None:
        """A person's decision joins its SKU's lane; an unreadable one goes to the DLQ."""
        try:
            item = self._decisiones.item(ticket)
        except EventoInvalido as exc:
            self._spawn(self._inflight.settle(ticket, self._decisiones.reject(ticket, exc)))
            return
        self._lanes.add(item)

    async def _handle(self, item: LaneItem, newest_waiting: int | None) -> object:
        """The lane's handler: a decision's (``stream.flow.decisiones``) or an event's."""
        if isinstance(item, DecisionItem):
            return await self._decisiones.handle(item, newest_waiting)
        assert isinstance(item, Item)
        return await self._handler.handle(item, newest_waiting)

    def _validate(self, record: ConsumerRecord) -> EventoCambio:
        """Schema and family checks, plus the key: it must be the SKU, or order is lost."""
        evento = leer_evento(record.value, self._familias)
        require_sku_key(record, evento.sku)
        return evento

    async def _reject(self, ticket: Ticket, exc: EventoInvalido) -> None:
        """Write a DLQ record for an invalid message; the worker goes on.

        If the partition was lost meanwhile, its new owner writes the record instead.
        """
        await self._inflight.settle(ticket, self._handler.send_dlq(ticket.tp, ticket.record, exc))

    def _spawn(self, coro: Any) -> None:
        """Run a side task (DLQ write, pruning) and keep a reference until it ends."""
        task = asyncio.create_task(coro)
        self._side_tasks.add(task)
        task.add_done_callback(self._side_tasks.discard)

    # ------------------------------------------------------------------ bookkeeping

    def _on_step_failure(self, step: str, transient: bool) -> None:
        """A step failed: count it; a transient failure shows in the readiness reason."""
        self._sensor.on_step_failure(step, transient)
        if transient:
            self._retrying[step] = time.monotonic()

    def _on_step_recovered(self, step: str) -> None:
        """A step that was failing went through."""
        self._retrying.pop(step, None)

    def _on_refused(self, exc: Exception) -> None:
        """Kafka refused a step (a missing ACL): stop now, without a grace period (what is
        refused would never finish), and let ``run`` raise it (``fichas worker`` exits 2)."""
        if self._refused is None:
            self._refused = exc
            self.stop()

    def _prune_if_due(self) -> None:
        """Every few minutes, delete outcome and version records older than the retention."""
        if time.monotonic() - self._last_prune < PRUNE_INTERVAL_S:
            return
        self._last_prune = time.monotonic()
        retention_s = self._settings.retencion_h * 3600

        async def prune() -> None:
            try:
                deleted = await self._versions.prune(retention_s)
            except Exception:
                log.exception("pruning the version store failed; next time")
                return
            if deleted:
                log.info("pruned %d outcome and version records", deleted)

        self._spawn(prune())

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

    async def on_assigned(self, assigned: set[TopicPartition]) -> None:
        """The group gave this worker partitions: hold them paused and claim them in the
        background (``_claim``), so that this callback returns at once.

        aiokafka sends no heartbeat while the assignment callback runs. Claiming (fencing the
        old owners' producers, reading the committed points) waits on the broker: about a
        second per partition under load, 8 s for 16 partitions in ``bench.run --quick``, and
        retried for as long as the broker does not answer. Done inside the callback, it
        outlived the session timeout and the group rebalanced forever.
        """
        if assigned:
            self._consumer.pause(*assigned)
        self._claiming = set(assigned)
        self._claim_task = asyncio.create_task(self._claim(set(assigned)))

    async def _claim(self, assigned: set[TopicPartition]) -> None:
        """Fence the partitions' old owners, read the committed points (watermark and finished
        offsets above it), seek to the watermark; then ``_flow_control`` resumes them.

        Starting the producers and reading the points are retried until the broker answers:
        without them nothing of these partitions could be written, nor known finished. A
        message fetched before the seek is dropped (``InFlight.accept``) and fetched again.
        Any other failure makes the worker rejoin the group rather than fetch unclaimed.
        """
        try:
            positions = await self._steps.run(
                lambda: self._emitter.claim(assigned), "produce", acotado=False
            )
            for tp, offset in positions.items():
                if tp in self._consumer.assignment():
                    await self._seek(tp, offset)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("claiming the assigned partitions failed")
            self._must_rejoin = "a failed claim of the assigned partitions"
            return
        self._claiming -= assigned
        self.joined = True
        log.info("claimed %s", sorted((tp.topic, tp.partition) for tp in assigned))

    async def _seek(self, tp: TopicPartition, offset: int | None) -> None:
        """Fetch ``tp`` from its committed watermark (from the beginning if none)."""
        if offset is None:
            await self._consumer.seek_to_beginning(tp)
        else:
            self._consumer.seek(tp, offset)
        log.info(
            "%s-%d: from offset %s, skipping %d finished offsets above it",
            tp.topic,
            tp.partition,
            offset,
            self._ledger.to_skip(tp),
        )

    async def _cancel_claim(self) -> None:
        """Stop a claim still running (its partitions are being revoked, or the worker stops)."""
        task, self._claim_task = self._claim_task, None
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def on_revoked(self, revoked: set[TopicPartition]) -> None:
        """Finish what started on lost partitions within the grace period, cancel the rest,
        commit what finished through the partitions' transactions, then give them up.

        aiokafka swallows what this raises, so every step handles its own errors: the commit
        logs its failures (the new owner then handles again what this one could not commit),
        a fenced producer is ``NotOwner`` (another worker took it: nothing to commit).
        """
        await self._cancel_claim()
        self._claiming -= revoked
        await self._lanes.release(revoked, self._settings.gracia_s)
        await self._emitter.final_commit(revoked)
        await self._emitter.release(revoked)
        for tp in revoked:
            self._sensor.clear_lag(tp.topic, tp.partition)

    async def _drain(self) -> None:
        """SIGTERM: stop taking new items, let running ones finish, commit."""
        await self._cancel_claim()
        self._lanes.stop()
        assigned = self._consumer.assignment()
        if assigned:
            self._consumer.pause(*assigned)
        grace = 0.0 if self._refused is not None else self._settings.gracia_s
        log.info(
            "stopping: waiting up to %.0f s (FICHAS_GRACIA_S) for %d running fichas%s",
            grace,
            self._inflight.running(),
            "" if self._procesador.health.is_up else "; the LLM is down, they may not finish",
        )
        if not await self._wait_idle(grace):
            log.warning("grace period over with work still running; it will be redelivered")
        await self._emitter.final_commit(None)
        await self._end_lag_measure()

    async def _end_lag_measure(self) -> None:
        """Let a lag measurement in flight end before the consumer stops, then cancel it.

        Its ``consumer.committed()`` is an OffsetFetchRequest to the group coordinator; if
        ``consumer.stop()`` closes the connection under it, aiokafka logs it at ERROR level
        ("Error sending OffsetFetchRequest ... marking coordinator dead"), a false alarm on
        every clean stop that happened to meet a measurement (seen in CI).
        """
        task = self._lag_task
        if task is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(task), LAG_END_WAIT_S)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def _wait_idle(self, timeout: float) -> bool:
        """Wait until no item is running and no side task (a DLQ write) is left."""
        deadline = time.monotonic() + timeout
        while self._inflight.running() or self._side_tasks:
            if time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True


class _Rebalance(ConsumerRebalanceListener):  # type: ignore[misc]
    """Hooks the worker's revoke handling into aiokafka's group protocol."""

    def __init__(self, worker: Worker) -> None:
        self._worker = worker

    async def on_partitions_revoked(self, revoked: Any) -> None:
        """Called before the group reassigns partitions."""
        await self._worker.on_revoked(set(revoked))

    async def on_partitions_assigned(self, assigned: Any) -> None:
        """The group is joined; the worker claims the partitions in the background."""
        await self._worker.on_assigned(set(assigned))
        log.info("assigned %s", sorted((tp.topic, tp.partition) for tp in assigned))
