"""The local services the other tests run against are real and usable.

A real Kafka broker (scripts/kafka.sh, through tests.kafka_broker) on a port of
its own, so it never meets a broker the developer has running on 9092; and a
real PostgreSQL (scripts/postgres.sh, through the `postgres_dsn` fixture).
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from harness.kafka_broker import KafkaBroker
from infra.network import free_port


@pytest.mark.kafka
@pytest.mark.timeout(240)
async def test_broker_local_produce_y_consume(tmp_path_factory: pytest.TempPathFactory) -> None:
    broker = KafkaBroker(free_port(), tmp_path_factory.mktemp("kafka"))
    broker.start()
    try:
        assert broker.is_running()
        broker.start()  # idempotent: a second start leaves the same broker up

        topic = f"prueba.{uuid.uuid4().hex[:8]}"
        await broker.create_topic_async(topic, partitions=2)
        assert topic in await broker.list_topics_async()

        producer = AIOKafkaProducer(bootstrap_servers=broker.bootstrap, acks="all")
        await producer.start()
        try:
            meta = await producer.send_and_wait(topic, b'{"hola": 1}', key=b"ZAP-000123")
        finally:
            await producer.stop()
        assert meta.topic == topic

        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=broker.bootstrap,
            group_id=f"grupo-{uuid.uuid4().hex[:8]}",
            auto_offset_reset="earliest",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            msg = await consumer.getone()
            await consumer.commit()
        finally:
            await consumer.stop()
        assert (msg.key, msg.value) == (b"ZAP-000123", b'{"hola": 1}')
        assert (msg.partition, msg.offset) == (meta.partition, meta.offset)

        # kill() is what failure tests use: the broker is gone at once.
        broker.kill()
        assert not broker.is_running()
    finally:
        broker.stop()
    assert not broker.is_running()
    assert Path(broker.data_dir, "kraft", "meta.properties").exists()


@pytest.mark.postgres
def test_postgres_local_responde(postgres_dsn: str) -> None:
    import psycopg

    with psycopg.connect(postgres_dsn, connect_timeout=10) as conn:
        assert conn.execute("select 1").fetchone() == (1,)
        # The script's database, or under pytest-xdist this worker's own copy of it.
        (nombre,) = conn.execute("select current_database()").fetchone()
        assert nombre == "fichas" or nombre.startswith("fichas_gw")
