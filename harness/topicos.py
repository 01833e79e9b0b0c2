"""Topics by hand: unique names per run, creating, writing, and reading to the current end.

Readers here join no group and commit nothing, so reading never moves anyone's offsets; the
end offsets are taken once at the start, so a live topic still gives a finite read.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

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

    def env(self) -> dict[str, str]:
        return {
            "FICHAS_TOPIC_ENTRADA": self.entrada,
            "FICHAS_TOPIC_PUBLICADAS": self.publicadas,
            "FICHAS_TOPIC_REVISION": self.revision,
            "FICHAS_TOPIC_DLQ": self.dlq,
            "FICHAS_TOPIC_MUESTRA": self.muestra,
            "FICHAS_TOPIC_PUERTA": self.puerta,
            "FICHAS_GRUPO": f"{self.prefix}-grupo",
        }


async def create_input_topic(bootstrap: str, topic: str, partitions: int = 4) -> None:
    """The input topic, allowing 2 MiB messages so a 1 MiB poison value reaches the worker."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(
                    topic,
                    num_partitions=partitions,
                    replication_factor=1,
                    topic_configs={"max.message.bytes": str(2 * 1024 * 1024)},
                )
            ]
        )
    finally:
        await admin.close()


async def produce(bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes]]) -> None:
    """Write (key, value) pairs in order, acknowledged by the broker."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", max_request_size=2 * 1024 * 1024, linger_ms=20
    )
    await producer.start()
    try:
        futures = [await producer.send(topic, value, key=key) for key, value in messages]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def describe_partitions(
    brokers: str, topics: Iterable[str], client_id: str = "fichas-lector"
) -> tuple[list[TopicPartition], list[str]]:
    """The partitions of ``topics`` from the broker's metadata, and the topics that do not exist.

    A consumer learns partitions only of topics it subscribes to; readers that assign partitions
    by hand ask the admin API instead, which also never creates a topic.
    """
    admin = AIOKafkaAdminClient(bootstrap_servers=brokers, client_id=client_id)
    await admin.start()
    try:
        descriptions = await admin.describe_topics(list(topics))
    finally:
        await admin.close()
    partitions: list[TopicPartition] = []
    missing: list[str] = []
    for description in descriptions:
        if description.get("error_code") or not description.get("partitions"):
            missing.append(description["topic"])
            continue
        partitions += [
            TopicPartition(description["topic"], p["partition"]) for p in description["partitions"]
        ]
    return partitions, missing


def build_reader(
    brokers: str, client_id: str = "fichas-lector", committed_only: bool = True
) -> AIOKafkaConsumer:
    """A group-less consumer from the earliest offset: reading never moves anyone's offsets.

    It reads as the contract asks downstream readers to, ``read_committed``: the worker writes
    in transactions, and a transaction the broker aborted (a fenced worker's) is not output.
    ``committed_only=False`` shows aborted records too, to check what a careless reader sees.
    """
    return AIOKafkaConsumer(
        bootstrap_servers=brokers,
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        client_id=client_id,
        isolation_level="read_committed" if committed_only else "read_uncommitted",
    )


async def read_to_end(
    brokers: str,
    topics: Iterable[str],
    client_id: str = "fichas-lector",
    timeout_s: float = 120.0,
    committed_only: bool = True,
) -> tuple[list[ConsumerRecord], list[str]]:
    """Every record of ``topics`` from the beginning to the end offsets seen at the start.

    Returns the records (per partition in offset order) and the topics that do not exist.
    Committed records only, unless ``committed_only=False`` (``build_reader``).
    """
    partitions, missing = await describe_partitions(brokers, topics, client_id)
    records: list[ConsumerRecord] = []
    if not partitions:
        return records, missing
    consumer = build_reader(brokers, client_id, committed_only)
    await consumer.start()
    try:
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        start = await consumer.beginning_offsets(partitions)
        end = await consumer.end_offsets(partitions)
        pending = {tp for tp in partitions if end[tp] > start[tp]}
        deadline = time.monotonic() + timeout_s
        while pending:
            if time.monotonic() > deadline:
                raise TimeoutError(f"did not finish reading {sorted(map(str, pending))}")
            batch = await consumer.getmany(*pending, timeout_ms=1000)
            for tp, batch_records in batch.items():
                records += [r for r in batch_records if r.offset < end[tp]]
            for tp in list(pending):
                if await consumer.position(tp) >= end[tp]:
                    pending.discard(tp)
    finally:
        await consumer.stop()
    return records, missing


async def partitions_of(bootstrap: str, topic: str) -> list[int]:
    """Partition numbers of a topic ([] if it does not exist), from the broker's metadata."""
    partitions, _ = await describe_partitions(bootstrap, [topic])
    return sorted(tp.partition for tp in partitions)


async def read_all(bootstrap: str, topic: str, committed_only: bool = True) -> list[dict[str, Any]]:
    """Every record of a JSON topic to its current end, with partition, offset and headers."""
    records, _ = await read_to_end(bootstrap, [topic], committed_only=committed_only)
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

    An offset fetch only: the reader never joins the group, so it moves nobody's partitions.
    """
    partitions, _ = await describe_partitions(bootstrap, [topic])
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False
    )
    await consumer.start()
    try:
        return {tp.partition: await consumer.committed(tp) for tp in partitions}
    finally:
        await consumer.stop()


async def end_offsets(bootstrap: str, topic: str) -> dict[int, int]:
    """The end offset (next to be written) of every partition of ``topic``."""
    partitions, _ = await describe_partitions(bootstrap, [topic])
    consumer = build_reader(bootstrap)
    await consumer.start()
    try:
        ends = await consumer.end_offsets(partitions)
    finally:
        await consumer.stop()
    return {tp.partition: offset for tp, offset in ends.items()}
