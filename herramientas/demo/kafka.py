"""Writing the feed to the input topic and reading the outcomes back, live."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from herramientas.demo.avance import Progress
from herramientas.demo.vista import LiveView


async def produce_feed(brokers: str, topic: str, progress: Progress) -> None:
    """Write every feed line in order, key = its SKU (or none), and note where each landed."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(
        bootstrap_servers=brokers, acks="all", enable_idempotence=True, linger_ms=20
    )
    await producer.start()
    try:
        sent = []
        for line in progress.lines:
            now_ms = int(time.time() * 1000)
            future = await producer.send(topic, line.raw, key=line.key, timestamp_ms=now_ms)
            sent.append((line, future, now_ms))
        for line, future, now_ms in sent:
            meta = await future
            progress.produced(line, meta.partition, meta.offset, now_ms)
    finally:
        await producer.stop()


async def watch_outcomes(
    brokers: str,
    progress: Progress,
    view: LiveView,
    check: Callable[[], None],
    deadline: float,
) -> bool:
    """Read the output topics from the start until the run is complete; False on timeout."""
    from infra.kafka_read import build_reader, describe_partitions

    partitions, _ = await describe_partitions(brokers, list(progress.topics), "fichas-demo")
    consumer = build_reader(brokers, "fichas-demo")
    await consumer.start()
    try:
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        await produce_feed(brokers, progress.input_topic, progress)
        while not progress.complete():
            if time.monotonic() > deadline:
                return False
            check()
            batch = await consumer.getmany(timeout_ms=500)
            for tp, records in batch.items():
                for record in records:
                    progress.record(tp.topic, record.value, record.timestamp)
            view.update(progress, int(time.time() * 1000))
        # A line marked obsolete may still have its own outcome on another topic, not yet
        # read: take everything written so far before the final numbers.
        ends = await consumer.end_offsets(partitions)
        while any([await consumer.position(tp) < ends[tp] for tp in partitions]):
            batch = await consumer.getmany(timeout_ms=500)
            for tp, records in batch.items():
                for record in records:
                    progress.record(tp.topic, record.value, record.timestamp)
        view.update(progress, int(time.time() * 1000))
        return True
    finally:
        await consumer.stop()


def write_outcomes(progress: Progress, path: Path) -> None:
    """The outcomes as ``fichas procesar`` prints them, one JSON object per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for salida in progress.outcomes():
            handle.write(json.dumps(salida, ensure_ascii=False) + "\n")
