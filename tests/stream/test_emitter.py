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

from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, read_all
from infra.config import Settings
from infra.kafka import build_producer
from stream.emitter import Emitter
from stream.producers import NotOwner, Record, transactional_id

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
        return GatedProducer(
            where,
            gate,
            reached,
            bootstrap_servers=settings.kafka_brokers,
            acks="all",
            enable_idempotence=True,
            transactional_id=txn_id,
        )

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


def test_un_id_transaccional_por_particion_de_entrada_y_grupo() -> None:
    assert transactional_id("fichas", TopicPartition("proveedor.cambios", 2)) == (
        "fichas.proveedor.cambios.2"
    )
    ids = {
        transactional_id(grupo, TopicPartition("t", p)) for grupo in ("a", "b") for p in range(3)
    }
    assert len(ids) == 6
