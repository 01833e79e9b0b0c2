"""Lag and oldest-event age come from the broker, for every assigned partition, also paused."""

from __future__ import annotations

import json
from pathlib import Path

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerInProcess, worker_env

LAG = "fichas_consumer_lag"
AGE = "fichas_oldest_event_age_seconds"


async def test_retraso_del_broker_tambien_en_pausa(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    worker = WorkerInProcess(worker_env(kafka, fake_llm, topics, data_dir), tmp_path / "w.log")
    worker.start()
    try:
        worker.wait_ready()
        labels = [{"topic": topics.entrada, "partition": str(p)} for p in (0, 1)]
        present = [f'{LAG}{{partition="{p}",topic="{topics.entrada}"}}' for p in (0, 1)]
        # Both partitions have a series before any message was fetched from them.
        await until(
            lambda: all(s in worker.metrics() for s in present),
            20,
            every=0.5,
            explain=worker.metrics,
        )
        assert all(worker.metric(LAG, **lab) == 0 for lab in labels)
        fake_llm.down(600, mode="503")
        eventos = [evento_dict(f"LAG-{n:02d}", 1, event_id=f"LAG-{n:02d}") for n in range(40)]
        await produce(
            kafka.bootstrap,
            topics.entrada,
            [(e["sku"].encode(), json.dumps(e).encode()) for e in eventos],
        )
        # Paused for the LLM: the lag still covers every produced message, and ages grow.
        await until(
            lambda: worker.metric("fichas_llm_paused") == 1, 30, every=0.5, explain=worker.log_tail
        )
        await until(
            lambda: sum(worker.metric(LAG, **lab) for lab in labels) == len(eventos),
            30,
            every=0.5,
            explain=worker.metrics,
        )
        first_age = max(worker.metric(AGE, **lab) for lab in labels)
        # The age grows while paused: 4 s more than first read, as soon as it shows.
        await until(
            lambda: max(worker.metric(AGE, **lab) for lab in labels) >= first_age + 4,
            30,
            every=0.5,
            explain=worker.metrics,
        )
        fake_llm.up()
        await until(
            lambda: sum(worker.metric(LAG, **lab) for lab in labels) == 0,
            60,
            every=0.5,
            explain=worker.metrics,
        )
        await until(
            lambda: max(worker.metric(AGE, **lab) for lab in labels) == 0,
            20,
            every=0.5,
            explain=worker.metrics,
        )
    finally:
        fake_llm.up()
        worker.terminate()
