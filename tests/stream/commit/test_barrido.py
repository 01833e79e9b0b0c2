"""A claim aborts what a dead epoch of its producer left open (``Producers.sweep``).

The crash that leaves it (docs/stream.md, "A single broker's crash mid-commit") cannot be
staged on demand, so its result is: a record of the partition's transactional id written to an
output partition the transaction coordinator never heard of, inside a transaction it then
closed. Kafka keeps that record open under the producer id across epochs, and the next owner's
first commit there made it visible to a ``read_committed`` reader. The broker of this test
lets such a write in (``transaction.partition.verification.enable=false``: with the check on,
which is the default, the broker refuses a transactional write to a partition the coordinator
did not add); the stray writer bypasses aiokafka's AddPartitionsToTxn. Without the sweep the
reader sees the stray record; with it, only the owner's.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError
from aiokafka.partitioner import DefaultPartitioner

from harness.kafka_broker import KafkaBroker
from harness.topicos import create_input_topic, read_all
from infra.config import Settings
from infra.kafka.clients import build_producer, committed_points, connect_admin
from infra.network import free_port
from stream.commit.emitter import Emitter
from stream.commit.producers import Record, transactional_id

pytestmark = pytest.mark.kafka


@pytest.fixture(scope="module")
def broker_sin_verificacion(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """A broker of this module that accepts a transactional write to a partition the
    coordinator did not add: the state a crash mid-commit leaves, reachable on demand."""
    folder = tmp_path_factory.mktemp("barrido-kafka")
    broker = KafkaBroker(free_port(), Path(folder), controller_port=free_port())
    with pytest.MonkeyPatch.context() as env:
        env.setenv("FICHAS_KAFKA_EXTRA_CONF", "transaction.partition.verification.enable=false")
        broker.start()
    yield broker
    broker.kill()


async def _stray(bootstrap: str, txn_id: str, tp: TopicPartition) -> None:
    """A record of ``txn_id`` left open in ``tp``: written without AddPartitionsToTxn, in a
    transaction the coordinator then ends with no partition (so no marker reaches ``tp``)."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=txn_id)
    await producer.start()
    try:
        await producer.begin_transaction()
        manager = producer._txn_manager
        add = manager.maybe_add_partition_to_txn
        manager.maybe_add_partition_to_txn = lambda _tp: None
        try:
            await producer.send_and_wait(
                tp.topic, b'{"sku": "X", "version": 1}', b"X", tp.partition
            )
        finally:
            manager.maybe_add_partition_to_txn = add
        await producer.commit_transaction()
    finally:
        await producer.stop()


async def _claim(emitter: Emitter, tp: TopicPartition) -> None:
    """Claim, retried while a new group's coordinator is not ready (the worker's step rule)."""
    for _ in range(100):
        try:
            await emitter.claim({tp})
            return
        except KafkaError:
            await asyncio.sleep(0.2)
    await emitter.claim({tp})


@pytest.mark.parametrize("barrido", [True, False])
async def test_el_reclamo_aborta_lo_que_dejo_abierto_una_epoca_muerta(
    broker_sin_verificacion: KafkaBroker, barrido: bool
) -> None:
    kafka = broker_sin_verificacion
    prefijo = f"b{uuid.uuid4().hex[:8]}"
    entrada = TopicPartition(f"{prefijo}.entrada", 0)
    publicadas, revision = f"{prefijo}.publicadas", f"{prefijo}.revision"
    for topic in (entrada.topic, publicadas, revision):
        await create_input_topic(kafka.bootstrap, topic, partitions=2)
    grupo = f"{prefijo}-grupo"
    # the partition the owner's record goes to (its key's), where the stray record waits
    destino = TopicPartition(publicadas, DefaultPartitioner()(b"X", [0, 1], [0, 1]))
    await _stray(kafka.bootstrap, transactional_id(grupo, entrada), destino)

    settings = Settings(kafka_brokers=kafka.bootstrap)
    admin = await connect_admin(settings)
    emitter = Emitter(
        lambda txn_id: build_producer(settings, txn_id),
        grupo,
        reader=lambda tps: committed_points(admin, grupo, tps),
        outputs=(publicadas, revision) if barrido else (),
    )
    try:
        await _claim(emitter, entrada)
        assert emitter.ledger.received(entrada, 0)  # the owner fetched offset 0, and handles it
        record = Record(publicadas, b'{"sku": "X", "version": 2}', b"X", [])
        await emitter.send(entrada, [record], offset=0)
    finally:
        await emitter.close()
        await admin.close()

    leidas = await read_all(kafka.bootstrap, publicadas)
    versiones = sorted(r["value"]["version"] for r in leidas)
    # Without the sweep the owner's commit commits the stray record too: the bug this closes.
    assert versiones == ([2] if barrido else [1, 2]), leidas
    # The sweep wrote no record anywhere: only markers, which no reader sees.
    assert await read_all(kafka.bootstrap, revision, committed_only=False) == []
    puntos = await committed_points_after(kafka, grupo, entrada)
    assert puntos == 1  # the owner's offset, not the sweep's


async def committed_points_after(kafka: KafkaBroker, grupo: str, tp: TopicPartition) -> int:
    """The group's committed watermark of ``tp`` as a new owner would read it."""
    admin = await connect_admin(Settings(kafka_brokers=kafka.bootstrap))
    try:
        points = await committed_points(admin, grupo, {tp})
    finally:
        await admin.close()
    return points[tp].offset
