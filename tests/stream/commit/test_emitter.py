"""The broker fences a worker that lost its partition, whatever moment it was stopped at.

Real broker. Two emitters of one group stand for the old owner (A, a zombie) and the new one
(B). A is held at a gate inside its write, as a process stopped by SIGSTOP would be: before
its record reaches the broker, or after the record is in the log but before the commit. The
new owner then takes the partition and writes a newer version; A is let go. What readers
see is checked in both isolation levels.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, read_all
from infra.config import Settings
from infra.kafka.clients import build_producer, committed_points, connect_admin
from stream.commit.emitter import Emitter
from stream.commit.producers import NotOwner, Record, transactional_id

INPUT = TopicPartition("entrada", 3)


class GatedProducer(AIOKafkaProducer):  # type: ignore[misc]
    """A real producer that can be held before or after it hands a record to the broker."""

    def __init__(self, where: str, gate: asyncio.Event, reached: asyncio.Event, **kw: object):
        super().__init__(**kw)
        self._where = where
        self._gate = gate
        self._reached = reached

    async def send_and_wait(self, *args: object, **kw: object) -> object:
        if self._where == "before":
            self._reached.set()
            await self._gate.wait()
        result = await super().send_and_wait(*args, **kw)
        if self._where == "after":
            self._reached.set()
            await self._gate.wait()
        return result


class CommitGatedProducer(AIOKafkaProducer):  # type: ignore[misc]
    """A real producer whose caller, once armed, is held after the broker was asked to
    commit: the commit goes on without it, as when a revoke cancels a ficha mid-commit."""

    def __init__(self, gate: asyncio.Event, reached: asyncio.Event, **kw: object):
        super().__init__(**kw)
        self.armed = False
        self.committing: asyncio.Future[None] | None = None
        self._gate = gate
        self._reached = reached

    async def commit_transaction(self) -> None:
        self.committing = asyncio.ensure_future(super().commit_transaction())
        if self.armed:
            self._reached.set()
            await self._gate.wait()
        await self.committing


async def _claim_when_the_group_is_ready(emitter: Emitter, tp: TopicPartition) -> int | None:
    """Claim, retried while a new group's coordinator is not ready (the worker's step rule);
    the offset the claimer would fetch from."""
    for _ in range(100):
        try:
            return (await emitter.claim({tp}))[tp]
        except KafkaError:
            await asyncio.sleep(0.2)
    return (await emitter.claim({tp}))[tp]


def _transactional(settings: Settings, txn_id: str) -> dict[str, object]:
    """A gated producer's options: transactional, as the worker's (``infra.kafka.clients``)."""
    return {
        "bootstrap_servers": settings.kafka_brokers,
        "acks": "all",
        "enable_idempotence": True,
        "transactional_id": txn_id,
    }


def _factory(kafka: KafkaBroker) -> Callable[[str], AIOKafkaProducer]:
    settings = Settings(kafka_brokers=kafka.bootstrap)
    return lambda txn_id: build_producer(settings, txn_id)


def _record(topic: str, version: int) -> Record:
    return Record(topic, f'{{"sku": "X", "version": {version}}}'.encode(), b"X", [])


async def _versions(kafka: KafkaBroker, topic: str, committed_only: bool) -> list[int]:
    records = await read_all(kafka.bootstrap, topic, committed_only=committed_only)
    return [r["value"]["version"] for r in sorted(records, key=lambda r: r["offset"])]


@pytest.mark.parametrize("where", ["before", "after"])
async def test_el_zombi_no_escribe_despues_del_nuevo_dueno(
    kafka: KafkaBroker, topics: Topics, where: str
) -> None:
    await create_input_topic(kafka.bootstrap, topics.publicadas, partitions=1)
    prefix = f"grupo-{uuid.uuid4().hex[:8]}"
    gate, reached = asyncio.Event(), asyncio.Event()
    settings = Settings(kafka_brokers=kafka.bootstrap)

    def gated(txn_id: str) -> AIOKafkaProducer:
        return GatedProducer(where, gate, reached, **_transactional(settings, txn_id))

    zombie = Emitter(gated, prefix)
    owner = Emitter(_factory(kafka), prefix)
    try:
        await zombie.claim({INPUT})
        write = asyncio.create_task(zombie.send(INPUT, [_record(topics.publicadas, 5)]))
        await asyncio.wait_for(reached.wait(), 30)

        await owner.claim({INPUT})  # the group gave the partition to the new owner
        await owner.send(INPUT, [_record(topics.publicadas, 6)])
        gate.set()  # SIGCONT
        with pytest.raises(NotOwner):
            await asyncio.wait_for(write, 60)

        assert zombie.fenced.is_set()
        assert not zombie.owns(INPUT)
        with pytest.raises(NotOwner):  # and it never writes for that partition again
            await zombie.send(INPUT, [_record(topics.publicadas, 7)])
        assert await _versions(kafka, topics.publicadas, committed_only=True) == [6]
        everything = await _versions(kafka, topics.publicadas, committed_only=False)
        # A careless reader sees the aborted record at most, and never after the newer one.
        assert everything == ([5, 6] if where == "after" else [6])
    finally:
        gate.set()
        await zombie.close()
        await owner.close()


async def test_resultado_y_muestra_van_en_una_transaccion(
    kafka: KafkaBroker, topics: Topics
) -> None:
    await create_input_topic(kafka.bootstrap, topics.publicadas, partitions=1)
    await create_input_topic(kafka.bootstrap, topics.muestra, partitions=1)
    emitter = Emitter(_factory(kafka), f"grupo-{uuid.uuid4().hex[:8]}")
    try:
        await emitter.claim({INPUT})
        await emitter.send(INPUT, [_record(topics.publicadas, 1), _record(topics.muestra, 1)])
        assert await _versions(kafka, topics.publicadas, committed_only=True) == [1]
        assert await _versions(kafka, topics.muestra, committed_only=True) == [1]
    finally:
        await emitter.close()


async def test_sin_la_particion_no_escribe_y_al_recuperarla_si(
    kafka: KafkaBroker, topics: Topics
) -> None:
    await create_input_topic(kafka.bootstrap, topics.publicadas, partitions=1)
    emitter = Emitter(_factory(kafka), f"grupo-{uuid.uuid4().hex[:8]}")
    try:
        with pytest.raises(NotOwner):
            await emitter.send(INPUT, [_record(topics.publicadas, 1)])
        await emitter.claim({INPUT})
        await emitter.release({INPUT})
        with pytest.raises(NotOwner):
            await emitter.send(INPUT, [_record(topics.publicadas, 2)])
        await emitter.claim({INPUT})
        await emitter.send(INPUT, [_record(topics.publicadas, 3)])
        assert await _versions(kafka, topics.publicadas, committed_only=True) == [3]
        assert not emitter.fenced.is_set()
    finally:
        await emitter.close()


async def test_cancelado_al_confirmar_el_punto_confirmado_no_retrocede(
    kafka: KafkaBroker, topics: Topics
) -> None:
    """A ficha cancelled while its transaction commits (a revoke's grace period over): the
    outcome is committed with its offset, and the revoke's own commit must not take the point
    back below that offset, or the next owner writes the outcome a second time."""
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await create_input_topic(kafka.bootstrap, topics.publicadas, partitions=1)
    tp = TopicPartition(topics.entrada, 0)
    group = f"grupo-{uuid.uuid4().hex[:8]}"
    settings = Settings(kafka_brokers=kafka.bootstrap)
    gate, reached = asyncio.Event(), asyncio.Event()
    producers: list[CommitGatedProducer] = []

    def gated(txn_id: str) -> AIOKafkaProducer:
        producer = CommitGatedProducer(gate, reached, **_transactional(settings, txn_id))
        producers.append(producer)
        return producer

    admin = await connect_admin(settings)
    emitter = Emitter(gated, group, reader=lambda tps: committed_points(admin, group, tps))
    try:
        await _claim_when_the_group_is_ready(emitter, tp)
        for offset in (0, 1):  # both fetched; 0's outcome is being written, 1 still running
            assert emitter.ledger.received(tp, offset)
        producers[0].armed = True
        write = asyncio.create_task(emitter.send(tp, [_record(topics.publicadas, 1)], 0))
        await asyncio.wait_for(reached.wait(), 30)
        write.cancel()  # the grace period is over
        with pytest.raises(asyncio.CancelledError):
            await write
        gate.set()
        assert producers[0].committing is not None
        await asyncio.wait_for(producers[0].committing, 30)  # the broker committed it
        await emitter.final_commit({tp})  # the revoke commits what finished, then gives up

        await emitter.release({tp})

        # The next owner's claim: its producer's epoch waits for every transaction of the old
        # one to end (commit markers included), then it reads the group's point.
        successor = Emitter(
            _factory(kafka), group, reader=lambda tps: committed_points(admin, group, tps)
        )
        try:
            desde = await _claim_when_the_group_is_ready(successor, tp)
        finally:
            await successor.close()
        assert desde == 1, "offset 0's outcome is out: the next owner must start past it"
        assert await _versions(kafka, topics.publicadas, committed_only=True) == [1]
    finally:
        gate.set()
        await emitter.close()
        await admin.close()


async def test_un_productor_roto_para_siempre_se_cambia_por_uno_nuevo(
    kafka: KafkaBroker, topics: Topics
) -> None:
    """aiokafka's sender task can die (an error no handler expected, after a broker outage):
    its producer then fails every transaction for ever. The emitter gives the partition up
    (``NotOwner``, ``fenced`` set: the worker rejoins) and the claim that follows starts a new
    producer, which writes."""
    await create_input_topic(kafka.bootstrap, topics.publicadas, partitions=1)
    emitter = Emitter(_factory(kafka), f"grupo-{uuid.uuid4().hex[:8]}")
    try:
        await emitter.claim({INPUT})
        await emitter.send(INPUT, [_record(topics.publicadas, 1)])
        roto = emitter._producers._producers[INPUT]
        assert roto is not None
        roto._txn_manager.fatal_error(KafkaError("the sender task died"))  # as _fail_all does

        with pytest.raises(NotOwner):
            await emitter.send(INPUT, [_record(topics.publicadas, 2)])
        assert emitter.fenced.is_set() and not emitter.owns(INPUT)

        await emitter.claim({INPUT})  # the rejoin gives it back
        await emitter.send(INPUT, [_record(topics.publicadas, 3)])
        assert await _versions(kafka, topics.publicadas, committed_only=True) == [1, 3]
    finally:
        await emitter.close()


def test_un_id_transaccional_por_particion_de_entrada_y_grupo() -> None:
    assert transactional_id("fichas", TopicPartition("proveedor.cambios", 2)) == (
        "fichas.proveedor.cambios.2"
    )
    ids = {
        transactional_id(grupo, TopicPartition("t", p)) for grupo in ("a", "b") for p in range(3)
    }
    assert len(ids) == 6
