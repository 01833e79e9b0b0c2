"""100,000 events waiting and an LLM that takes 1 s: the worker fetches only what it can handle."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from aiokafka import AIOKafkaProducer

from harness.eventos import evento_dict
from harness.fake_llm_client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic
from harness.worker import WorkerProcess, worker_env

BACKLOG = 100_000
CONCURRENCIA = 16
OBSERVE_S = 40


async def _produce_backlog(bootstrap: str, topic: str) -> None:
    """Write the backlog fast: one template, only event_id and sku change."""
    template = json.dumps(evento_dict("SKU-PLACEHOLDER", 1, event_id="EID-PLACEHOLDER"))
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=50)
    await producer.start()
    try:
        pending = []
        for n in range(BACKLOG):
            sku = f"B{n:06d}"
            value = template.replace("SKU-PLACEHOLDER", sku).replace("EID-PLACEHOLDER", sku)
            pending.append(await producer.send(topic, value.encode(), key=sku.encode()))
            if len(pending) >= 5000:
                await asyncio.gather(*pending)
                pending.clear()
        await asyncio.gather(*pending)
    finally:
        await producer.stop()


async def test_backlog_de_100000_memoria_acotada(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"latency_ms": 1000})
    await create_input_topic(kafka.bootstrap, topics.entrada)
    await _produce_backlog(kafka.bootstrap, topics.entrada)
    env = worker_env(kafka, fake_llm, topics, data_dir, FICHAS_CONCURRENCIA=str(CONCURRENCIA))
    worker = WorkerProcess(env, tmp_path / "worker.log")
    worker.start()
    samples: list[tuple[float, int]] = []
    try:
        worker.wait_ready()
        # Baseline when the group is joined, before the backlog could be buffered.
        ready_kib = worker.rss_peak_kib()
        # The start-up probe for log-probabilities (grafo.logprobs_probe) is one request outside
        # the graph runs: once it has answered, the LLM's peak starts again from the requests in
        # flight, so what is measured below is the graph runs' concurrency alone.
        limite = time.monotonic() + 60
        while "grafo.logprobs_probe" not in worker.log_path.read_text(errors="replace"):
            assert time.monotonic() < limite, worker.log_tail()
            await asyncio.sleep(0.2)
        fake_llm.reset()
        start = time.monotonic()
        while time.monotonic() - start < OBSERVE_S:
            await asyncio.sleep(2)
            samples.append((time.monotonic() - start, worker.rss_peak_kib()))
        done = worker.metric("fichas_events_total", result="publicada")
        # Concurrency seen by the LLM server, not reported by the worker about itself.
        llm_peak = int(fake_llm.stats()["peak_in_flight"])
        assert worker.terminate(timeout=120) == 0, worker.log_tail()
    finally:
        if worker.proc is not None and worker.proc.poll() is None:
            worker.kill()
    peak_mib = max(rss for _, rss in samples) / 1024
    ready_mib = ready_kib / 1024
    print(
        f"\nbacklog: {BACKLOG} waiting, LLM 1 s, concurrency {CONCURRENCIA}: "
        f"published {done:.0f} in {OBSERVE_S} s, LLM calls at once max {llm_peak}, "
        f"peak RSS {peak_mib:.0f} MiB (when ready: {ready_mib:.0f} MiB)"
    )
    assert done > 0
    assert 0 < llm_peak <= CONCURRENCIA  # graph runs at once never exceed FICHAS_CONCURRENCIA
    # No growth with the backlog from the moment consumption starts: it is not being buffered
    # (100,000 events held in memory would add hundreds of MiB).
    assert peak_mib - ready_mib < 64
    assert peak_mib < 600
