"""Reading topics by hand: group-less readers that stop at the end offsets seen at the start.

Readers here join no group and commit nothing, so reading never moves anyone's offsets; the
end offsets are taken once at the start, so a live topic still gives a finite read. Used by
``fichas informe --kafka`` and ``fichas calibrar``, and by the harness's topic helpers.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from aiokafka import ConsumerRecord

from infra.config import Settings
from infra.kafka.clients import build_reader
from infra.kafka.topics import topic_partitions


async def read_to_end(
    settings: Settings,
    topics: Iterable[str],
    client_id: str = "fichas-lector",
    timeout_s: float = 120.0,
    committed_only: bool = True,
) -> tuple[list[ConsumerRecord], list[str]]:
    """Every record of ``topics`` from the beginning to the end offsets seen at the start.

    Returns the records (per partition in offset order) and the topics that do not exist.
    Committed records only, unless ``committed_only=False`` (``infra.kafka.clients.build_reader``).
    """
    partitions, missing = await topic_partitions(settings, topics, client_id)
    records: list[ConsumerRecord] = []
    if not partitions:
        return records, missing
    consumer = build_reader(settings, client_id, committed_only)
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
