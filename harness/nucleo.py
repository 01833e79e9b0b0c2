"""The worker's core in one process: ``stream.flow.worker.Worker`` with doubles at its edges.

What is real: the worker, its lanes, ``InFlight``, the commit ledger, the handler, the retry
rule and the SQLite version store. What is a double, and why:

* ``ConsumerDouble`` for aiokafka's consumer: a log per partition, ``getmany`` that honours
  pause and seek, and rebalances the test triggers.
* ``ProducerDouble`` for aiokafka's transactional producer, under the real
  ``stream.commit.emitter.Emitter``: a transaction's records and offsets reach ``BrokerDouble`` (the
  output log and the group's committed points, metadata included) only when it commits.
* ``ProcesadorDouble`` for ``grafo.Procesador``: a run per event that a test can hold at a
  gate, or make fail (a poison event), and the real ``LLMHealth`` a test marks down or up.

The subprocess tests on a real broker (tests/stream/test_worker.py and others) stay for what
only they show: the group protocol, fencing at the broker, a SIGKILL.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition
from aiokafka.abc import ConsumerRebalanceListener
from aiokafka.structs import OffsetAndMetadata

from esquemas import EventoCambio
from esquemas.constantes import DESTINO_PUBLICADAS
from grafo import LLMHealth, NullSensor, Resultado
from grafo.retry import Backoff, FailureRule, retry
from harness.eventos import evento_dict
from infra.config import Settings
from stream.commit.emitter import Emitter
from stream.commit.producers import Record
from stream.flow.worker import Worker
from versiones.almacen import open_version_store

TOPIC = "proveedor.cambios"
_BACKOFF = Backoff(base_s=0.2, cap_s=30.0)  # the worker's steps' backoff


class ConsumerDouble:
    """aiokafka's consumer as the worker uses it, over in-memory partition logs."""

    def __init__(self, broker: BrokerDouble, topic: str = TOPIC, partitions: int = 2) -> None:
        self.broker = broker
        self.tps = [TopicPartition(topic, p) for p in range(partitions)]
        self.logs: dict[TopicPartition, list[ConsumerRecord]] = {tp: [] for tp in self.tps}
        self.position: dict[TopicPartition, int] = dict.fromkeys(self.tps, 0)
        self.fetched: list[tuple[TopicPartition, int]] = []
        self.polls = 0  # getmany calls: one per round of the worker's poll loop
        self._assigned: set[TopicPartition] = set()
        self._paused: set[TopicPartition] = set()
        self._listener: ConsumerRebalanceListener | None = None
        self.hold_committed: asyncio.Event | None = None  # set: committed() waits for it
        self.open_committed = 0  # committed() calls not answered yet
        self.answered_committed = 0

    def append(self, partition: int, key: bytes | None, value: bytes) -> int:
        """Write one message to a partition's log; its offset."""
        tp = self.tps[partition]
        offset = len(self.logs[tp])
        record = ConsumerRecord(
            tp.topic, tp.partition, offset, int(time.time() * 1000), 0, key, value, None,
            len(key or b""), len(value), [],
        )  # fmt: skip
        self.logs[tp].append(record)
        return offset

    def subscribe(self, topics: Sequence[str], listener: ConsumerRebalanceListener) -> None:
        """Remember the worker's rebalance listener."""
        self._listener = listener

    def unsubscribe(self) -> None:
        """Nothing to leave: the test drives the group."""

    async def assign(self, partitions: Sequence[int]) -> None:
        """The group gives this member partitions (from their committed offsets; the worker
        seeks again once it has read the points)."""
        tps = {self.tps[p] for p in partitions}
        for tp in tps:
            self.position[tp] = max(self.committed_offset(tp) or 0, 0)
        self._assigned |= tps
        assert self._listener is not None
        await self._listener.on_partitions_assigned(tps)

    async def revoke(self, partitions: Sequence[int]) -> None:
        """The group takes partitions away; the worker's revoke hook runs first."""
        tps = {self.tps[p] for p in partitions}
        assert self._listener is not None
        await self._listener.on_partitions_revoked(tps)
        self._assigned -= tps
        self._paused -= tps

    def assignment(self) -> set[TopicPartition]:
        """Partitions this member holds."""
        return set(self._assigned)

    def pause(self, *tps: TopicPartition) -> None:
        """Stop fetching these partitions."""
        self._paused |= set(tps)

    def resume(self, *tps: TopicPartition) -> None:
        """Fetch these partitions again."""
        self._paused -= set(tps)

    def paused(self) -> set[TopicPartition]:
        """Partitions paused now."""
        return set(self._paused)

    async def getmany(self, timeout_ms: int, max_records: int) -> dict[Any, list[Any]]:
        """Up to ``max_records`` from assigned, unpaused partitions; a short wait if none."""
        self.polls += 1
        batch: dict[TopicPartition, list[ConsumerRecord]] = {}
        for tp in sorted(self._assigned - self._paused):
            room = max_records - sum(len(r) for r in batch.values())
            start = self.position[tp]
            records = self.logs[tp][start : start + max(room, 0)]
            if records:
                batch[tp] = records
                self.position[tp] = start + len(records)
                self.fetched.extend((tp, r.offset) for r in records)
        if not batch:
            await asyncio.sleep(min(timeout_ms, 20) / 1000)
        return batch

    def seek(self, tp: TopicPartition, offset: int) -> None:
        """Fetch ``tp`` from ``offset`` on."""
        self.position[tp] = offset

    async def seek_to_beginning(self, *tps: TopicPartition) -> None:
        """Fetch from the start of the log."""
        for tp in tps:
            self.position[tp] = 0

    def committed_offset(self, tp: TopicPartition) -> int | None:
        """The group's committed offset of ``tp``."""
        point = self.broker.offsets.get(tp)
        return point.offset if point is not None else None

    async def committed(self, tp: TopicPartition) -> int | None:
        """As aiokafka's (for the lag measurement): a request to the group coordinator, held
        open while ``hold_committed`` is an unset event."""
        self.open_committed += 1
        try:
            if self.hold_committed is not None:
                await self.hold_committed.wait()
            self.answered_committed += 1
            return self.committed_offset(tp)
        finally:
            self.open_committed -= 1

    async def end_offsets(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        """Log end of each partition."""
        return {tp: len(self.logs[tp]) for tp in tps}

    async def beginning_offsets(self, tps: Sequence[TopicPartition]) -> dict[TopicPartition, int]:
        """Every log starts at 0."""
        return dict.fromkeys(tps, 0)


class BrokerDouble:
    """What committed transactions left: output records in order, the group's points."""

    def __init__(self) -> None:
        self.sent: list[Record] = []
        self.offsets: dict[TopicPartition, OffsetAndMetadata] = {}
        self.commits: list[dict[TopicPartition, OffsetAndMetadata]] = []
        self.hold_read: asyncio.Event | None = None  # set: ``read`` waits for it
        self.reads = 0  # ``read`` calls answered

    def values(self, topic: str) -> list[dict[str, Any]]:
        """The JSON values committed to ``topic``, in order."""
        return [json.loads(r.value) for r in self.sent if r.topic == topic]

    async def read(self, tps: set[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        """The emitter's ``OffsetReader``: committed points with their metadata, held while
        ``hold_read`` is an unset event (a group coordinator slow to answer)."""
        if self.hold_read is not None:
            await self.hold_read.wait()
        self.reads += 1
        return {tp: self.offsets[tp] for tp in tps if tp in self.offsets}


class _Transaction:
    def __init__(self, producer: ProducerDouble) -> None:
        self._producer = producer

    async def __aenter__(self) -> None:
        await self._producer.begin_transaction()

    async def __aexit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            await self._producer.commit_transaction()
        else:
            await self._producer.abort_transaction()


class ProducerDouble:
    """aiokafka's transactional producer as the emitter uses it: nothing reaches the broker
    double before ``commit_transaction``."""

    def __init__(self, broker: BrokerDouble) -> None:
        self._broker = broker
        self._records: list[Record] = []
        self._offsets: dict[TopicPartition, OffsetAndMetadata] = {}

    async def start(self) -> None:
        """Nothing to connect."""

    async def stop(self) -> None:
        """Nothing to close."""

    def transaction(self) -> _Transaction:
        """``async with producer.transaction():`` commits on success, aborts on error."""
        return _Transaction(self)

    async def begin_transaction(self) -> None:
        self._records, self._offsets = [], {}

    async def send_and_wait(
        self, topic: str, value: bytes, key: bytes | None, headers: list[tuple[str, bytes]]
    ) -> None:
        self._records.append(Record(topic, value, key, headers))

    async def send_offsets_to_transaction(
        self, offsets: dict[TopicPartition, OffsetAndMetadata], group_id: str
    ) -> None:
        self._offsets.update(offsets)

    async def commit_transaction(self) -> None:
        self._broker.sent.extend(self._records)
        if self._offsets:
            self._broker.offsets.update(self._offsets)
            self._broker.commits.append(dict(self._offsets))
        self._records, self._offsets = [], {}

    async def abort_transaction(self) -> None:
        self._records, self._offsets = [], {}


@dataclass
class ProcesadorDouble:
    """``grafo.Procesador``: publishes every event, unless held at a gate or poisoned."""

    health: LLMHealth = field(default_factory=LLMHealth)
    gates: dict[tuple[str, int], asyncio.Event] = field(default_factory=dict)
    poison: set[str] = field(default_factory=set)  # SKUs whose run always raises
    calls: list[tuple[str, int]] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)

    def hold(self, sku: str, version: int) -> asyncio.Event:
        """Make the run of (sku, version) wait until the returned event is set."""
        return self.gates.setdefault((sku, version), asyncio.Event())

    async def procesar(self, evento: EventoCambio, otros: FailureRule | None = None) -> Resultado:
        """The run, retried by the caller's rule for failures (as ``grafo.Procesador`` retries
        every failure that is not the LLM's)."""
        if otros is None:
            return await self._run(evento)
        resultado = await retry(lambda: self._run(evento), _BACKOFF, otros.on_failure)
        otros.on_success()
        return resultado

    async def _run(self, evento: EventoCambio) -> Resultado:
        """One try: a publishable outcome (a few fields of a ``FichaPublicada``)."""
        self.calls.append((evento.sku, evento.version))
        gate = self.gates.get((evento.sku, evento.version))
        if gate is not None:
            await gate.wait()
        if evento.sku in self.poison:
            raise TypeError(f"can not serialize the outcome of {evento.sku}")
        salida = {"event_id": evento.event_id, "sku": evento.sku, "version": evento.version}
        return Resultado(
            DESTINO_PUBLICADAS, salida, evento.sku, evento.event_id, evento.version, 1, False
        )

    async def olvidar(self, evento: EventoCambio) -> None:
        """Note the checkpoint thread as deleted."""
        self.forgotten.append(evento.event_id)


class SensorDouble(NullSensor):
    """Counts what the worker reports."""

    def __init__(self) -> None:
        self.outcomes: list[tuple[str, int]] = []
        self.dlq = 0
        self.obsoletos = 0
        self.in_flight: list[int] = []
        self.registry: Any = None

    def on_outcome(self, resultado: Resultado, seconds: float) -> None:
        self.outcomes.append((resultado.sku, resultado.version))

    def on_dlq(self) -> None:
        self.dlq += 1

    def on_obsolete(self) -> None:
        self.obsoletos += 1

    def set_in_flight(self, n: int) -> None:
        self.in_flight.append(n)

    def __getattr__(self, name: str) -> Callable[..., None]:
        """Every other hook (samples, lag, gate, step failures) is ignored."""
        return lambda *args, **kwargs: None


@dataclass
class Nucleo:
    """A running worker and its doubles, with the steps a test takes."""

    worker: Worker
    consumer: ConsumerDouble
    emitter: Emitter
    broker: BrokerDouble
    procesador: ProcesadorDouble
    sensor: SensorDouble
    settings: Settings

    def send(self, sku: str, version: int, partition: int = 0) -> int:
        """A valid event of (sku, version) on a partition, keyed by its SKU; its offset."""
        value = json.dumps(evento_dict(sku, version)).encode("utf-8")
        return self.consumer.append(partition, sku.encode("utf-8"), value)

    def send_raw(self, value: bytes, partition: int = 0, key: bytes | None = None) -> int:
        """Any bytes as a message; its offset."""
        return self.consumer.append(partition, key, value)

    def published(self) -> list[tuple[str, int]]:
        """(sku, version) of every outcome written to the published topic, in order."""
        topic = self.settings.topic_publicadas
        return [(v["sku"], v["version"]) for v in self.broker.values(topic)]

    def dlq(self) -> list[dict[str, Any]]:
        """The DLQ records written, in order."""
        return self.broker.values(self.settings.topic_dlq)

    def commits(self, partition: int) -> list[int]:
        """Every offset committed for a partition, in order."""
        tp = self.consumer.tps[partition]
        return [c[tp].offset for c in self.broker.commits if tp in c]

    def points(self, partition: int) -> list[OffsetAndMetadata]:
        """Every commit point (offset and metadata) of a partition, in order."""
        tp = self.consumer.tps[partition]
        return [c[tp] for c in self.broker.commits if tp in c]


async def until(
    check: Callable[[], Any],
    timeout: float = 5.0,
    *,
    every: float = 0.01,
    explain: Callable[[], str] | None = None,
) -> Any:
    """The harness's one wait: poll ``check()`` (a function, or a coroutine function) every
    ``every`` seconds until it gives something truthy, and return that; after ``timeout``
    seconds fail with ``explain()`` (a worker's log tail, what was seen) or a plain line.

    What a test waits for instead of "a moment": a condition seen from outside. A synchronous
    test waits with ``asyncio.run(until(...))``.
    """
    deadline = time.monotonic() + timeout
    while True:
        valor = check()
        if inspect.isawaitable(valor):
            valor = await valor
        if valor:
            return valor
        if time.monotonic() > deadline:
            raise AssertionError(explain() if explain else f"not reached within {timeout} s")
        await asyncio.sleep(every)


@asynccontextmanager
async def nucleo(
    data_dir: Path,
    gracia_s: float = 5.0,
    partitions: int = 2,
    broker: BrokerDouble | None = None,
) -> AsyncIterator[Nucleo]:
    """A worker on the doubles and a real SQLite store, assigned every partition; ``broker``
    carries committed outputs and points over from an earlier worker (a restart)."""
    settings = Settings(
        topic_entrada=TOPIC,
        data_dir=data_dir,
        postgres_dsn=None,
        concurrencia=4,
        gracia_s=gracia_s,
        muestra_proporcion=0.0,
    )
    broker = broker or BrokerDouble()
    consumer = ConsumerDouble(broker, TOPIC, partitions)
    emitter = Emitter(lambda _txn_id: ProducerDouble(broker), "grupo", reader=broker.read)  # type: ignore[arg-type,return-value]
    procesador = ProcesadorDouble()
    sensor = SensorDouble()
    async with open_version_store(None, data_dir) as versions:
        worker = Worker(settings, procesador, versions, sensor, consumer, emitter)  # type: ignore[arg-type]
        task = asyncio.create_task(worker.run())
        await until(lambda: consumer._listener is not None)
        await consumer.assign(range(partitions))
        try:
            yield Nucleo(worker, consumer, emitter, broker, procesador, sensor, settings)
        finally:
            for gate in procesador.gates.values():
                gate.set()
            procesador.health.mark_up()
            worker.stop()
            await asyncio.wait_for(task, 10)
