"""Topics by hand for tests: unique names per run, creating, writing, and reading to the end.

Every client here is the product's (``infra.kafka.clients``: the admin, the writer, the
group-less reader, the committed offsets), built from the test broker's address, so a test
reaches Kafka as the product does; ``crear_topic`` is the one topic creator of the harness.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiokafka.admin import NewTopic
from aiokafka.errors import TopicAlreadyExistsError

from infra.config import Settings
from infra.kafka.clients import (
    PointsUnavailable,
    build_admin,
    build_reader,
    build_writer,
    committed_points,
)
from infra.kafka.read import read_to_end
from infra.kafka.topics import topic_partitions

SALIDAS = ("fichas.publicadas", "fichas.revision_manual", "proveedor.cambios.dlq")


@dataclass
class Topics:
    """Unique topic names for one test, so tests never see each other's messages."""

    prefix: str = field(default_factory=lambda: f"t{uuid.uuid4().hex[:8]}")

    @property
    def entrada(self) -> str:
        return f"{self.prefix}.proveedor.cambios"

    @property
    def publicadas(self) -> str:
        return f"{self.prefix}.fichas.publicadas"

    @property
    def revision(self) -> str:
        return f"{self.prefix}.fichas.revision_manual"

    @property
    def dlq(self) -> str:
        return f"{self.prefix}.proveedor.cambios.dlq"

    @property
    def muestra(self) -> str:
        return f"{self.prefix}.fichas.muestra_revision"

    @property
    def puerta(self) -> str:
        return f"{self.prefix}.fichas.puerta"

    @property
    def decisiones(self) -> str:
        return f"{self.prefix}.fichas.decisiones"

    def env(self) -> dict[str, str]:
        return {
            "FICHAS_TOPIC_ENTRADA": self.entrada,
            "FICHAS_TOPIC_PUBLICADAS": self.publicadas,
            "FICHAS_TOPIC_REVISION": self.revision,
            "FICHAS_TOPIC_DLQ": self.dlq,
            "FICHAS_TOPIC_MUESTRA": self.muestra,
            "FICHAS_TOPIC_PUERTA": self.puerta,
            "FICHAS_TOPIC_DECISIONES": self.decisiones,
            "FICHAS_GRUPO": f"{self.prefix}-grupo",
        }


def settings_for(bootstrap: str) -> Settings:
    """The settings a product client of the tests is built from: the test broker's address,
    every other connection option as the environment says
    (``infra.kafka.clients.client_options``)."""
    return Settings(kafka_brokers=bootstrap)


async def crear_topic(
    bootstrap: str,
    topic: str,
    particiones: int = 4,
    configuracion: dict[str, str] | None = None,
    replicas: int = 1,
) -> None:
    """Create a topic with the product's admin client; nothing if it exists already. A topic
    the broker refuses (bad settings) raises with the broker's reason."""
    admin = build_admin(settings_for(bootstrap))
    await admin.start()
    try:
        nuevo = NewTopic(topic, particiones, replicas, topic_configs=configuracion or {})
        respuesta = await admin.create_topics([nuevo], timeout_ms=30000)
        # aiokafka may answer per-topic errors instead of raising.
        for error in getattr(respuesta, "topic_errors", []) or []:
            if error[1] not in (0, TopicAlreadyExistsError.errno):
                raise RuntimeError(f"create topic {topic!r} failed: {error}")
    except TopicAlreadyExistsError:
        pass
    finally:
        await admin.close()


async def create_input_topic(bootstrap: str, topic: str, partitions: int = 4) -> None:
    """The input topic, allowing 2 MiB messages so a 1 MiB poison value reaches the worker."""
    await crear_topic(bootstrap, topic, partitions, {"max.message.bytes": str(2 * 1024 * 1024)})


async def produce(bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes]]) -> None:
    """Write (key, value) pairs in order, acknowledged by the broker."""
    producer = build_writer(settings_for(bootstrap), linger_ms=20, max_request_size=2 * 1024 * 1024)
    await producer.start()
    try:
        futures = [await producer.send(topic, value, key=key) for key, value in messages]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def produce_with_headers(
    bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes, list[tuple[str, bytes]]]]
) -> None:
    """Write (key, value, headers) records in order, acknowledged by the broker."""
    producer = build_writer(settings_for(bootstrap))
    await producer.start()
    try:
        for key, value, headers in messages:
            await producer.send_and_wait(topic, value, key=key, headers=headers)
    finally:
        await producer.stop()


async def partitions_of(bootstrap: str, topic: str) -> list[int]:
    """Partition numbers of a topic ([] if it does not exist), from the broker's metadata."""
    partitions, _ = await topic_partitions(settings_for(bootstrap), [topic])
    return sorted(tp.partition for tp in partitions)


async def read_all(bootstrap: str, topic: str, committed_only: bool = True) -> list[dict[str, Any]]:
    """Every record of a JSON topic to its current end, with partition, offset and headers."""
    records, _ = await read_to_end(settings_for(bootstrap), [topic], committed_only=committed_only)
    return [
        {
            "partition": r.partition,
            "offset": r.offset,
            "timestamp": r.timestamp,
            "key": r.key,
            "headers": list(r.headers or ()),
            "raw": r.value,
            "value": json.loads(r.value),
        }
        for r in records
    ]


async def wait_records(
    bootstrap: str,
    topics: Iterable[str],
    expected: int,
    timeout: float,
    explain: Callable[[], str] = lambda: "",
) -> list[dict[str, Any]]:
    """Poll ``topics`` until ``expected`` records are there in all; each gets its ``topic``."""
    names = list(topics)
    deadline = time.monotonic() + timeout
    while True:
        found: list[dict[str, Any]] = []
        for topic in names:
            found += [dict(r, topic=topic) for r in await read_all(bootstrap, topic)]
        if len(found) >= expected:
            return found
        assert time.monotonic() < deadline, f"{len(found)}/{expected}\n{explain()}"
        await asyncio.sleep(1)


async def committed_offsets(bootstrap: str, group: str, topic: str) -> dict[int, int | None]:
    """The group's committed offset of every partition of ``topic`` (None: nothing committed).

    An offset fetch only (the product's ``committed_points``): nobody joins the group, so it
    moves nobody's partitions.
    """
    settings = settings_for(bootstrap)
    partitions, _ = await topic_partitions(settings, [topic])
    admin = build_admin(settings)
    await admin.start()
    try:
        puntos = await committed_points(admin, group, set(partitions))
    except PointsUnavailable:
        return {tp.partition: None for tp in partitions}
    finally:
        await admin.close()
    return {
        tp.partition: punto.offset if punto.offset >= 0 else None for tp, punto in puntos.items()
    }


async def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """The end offset (next to be written) of every partition of ``topic``."""
    settings = settings_for(bootstrap)
    partitions, _ = await topic_partitions(settings, [topic])
    consumer = build_reader(settings)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(partitions)
    finally:
        await consumer.stop()
    return {tp.partition: offset for tp, offset in ends.items()}


async def wait_committed(bootstrap: str, group: str, topic: str, timeout: float = 60) -> None:
    """Until ``group`` committed every partition of ``topic`` up to its end.

    What a test waits for instead of "a moment" when it must know a worker is done with its
    input: a worker commits an offset only after the outcome of that record is written, so
    nothing it read will be emitted again after this returns (a redelivered duplicate
    included), unless it crashes.
    """
    end = await end_offsets(bootstrap, topic)
    deadline = time.monotonic() + timeout
    committed: dict[int, int | None] = {}
    while time.monotonic() < deadline:
        committed = await committed_offsets(bootstrap, group, topic)
        if committed == end:
            return
        await asyncio.sleep(0.5)
    raise AssertionError(f"{group} committed {committed} of {topic}, end {end}")
