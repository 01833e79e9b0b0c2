"""Reading topics by hand: group-less readers that stop at the end offsets seen at the start.

Readers here join no group and commit nothing, so reading never moves anyone's offsets; the
end offsets are taken once at the start, so a live topic still gives a finite read. Used by
``fichas informe --kafka`` and the demo's live table, and by the harness's topic helpers.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient


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
