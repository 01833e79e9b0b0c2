"""Writing the feed to the input topic and reading the outcomes back, live."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path

from herramientas.demo.avance import Progress
from herramientas.demo.vista import LiveView
from infra.config import Settings


async def produce_feed(settings: Settings, topic: str, progress: Progress) -> None:
    """Write every feed line in order, key = its SKU (or none), and note where each landed."""
    from infra.kafka.clients import build_writer

    producer = build_writer(settings, linger_ms=20)
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
    settings: Settings,
    progress: Progress,
    view: LiveView,
    check: Callable[[], None],
    deadline: float,
) -> bool:
    """Read the output topics from the start until the run is complete; False on timeout."""
    from infra.kafka.clients import build_reader
    from infra.kafka.topics import topic_partitions

    partitions, _ = await topic_partitions(settings, list(progress.topics), "fichas-demo")
    consumer = build_reader(settings, "fichas-demo")
    await consumer.start()
    try:
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        await produce_feed(settings, progress.input_topic, progress)
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
