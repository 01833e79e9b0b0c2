"""Two workers in one group, joining and leaving mid-run: nothing lost, nothing done twice."""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from pathlib import Path

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import Topics, create_input_topic, produce, read_all, wait_committed
from harness.worker import WorkerInProcess, worker_env

EVENTOS = 160


async def test_rebalance_sin_perdidas_ni_duplicados(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, tmp_path: Path
) -> None:
    fake_llm.configure({"latency_ms": 150})
    messages: list[tuple[bytes | None, bytes]] = [
        (f"R{n:03d}".encode(), json.dumps(evento_dict(f"R{n:03d}", 1)).encode())
        for n in range(EVENTOS)
    ]
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=4)
    await produce(kafka.bootstrap, topics.entrada, messages)
    env = dict(FICHAS_CONCURRENCIA="4")
    first = WorkerInProcess(
        worker_env(kafka, fake_llm, topics, tmp_path / "d1", **env), tmp_path / "w1.log"
    )
    second = WorkerInProcess(
        worker_env(kafka, fake_llm, topics, tmp_path / "d2", **env), tmp_path / "w2.log"
    )
    first.start()
    try:
        first.wait_ready()
        await until(
            lambda: first.metric("fichas_events_total", result="publicada") >= 5, 60, every=0.1
        )
        await until(lambda: first.metric("fichas_in_flight") > 0, 60, every=0.1)
        second.start()  # joins: the group rebalances while the first has fichas in flight
        second.wait_ready()
        await until(
            lambda: "assigned [(" in second.log_tail(200), 60, every=0.1
        )  # second got partitions
        await until(
            lambda: second.metric("fichas_events_total", result="publicada") > 0, 60, every=0.1
        )
        await until(lambda: first.metric("fichas_in_flight") > 0, 60, every=0.1)
        by_first = first.metric("fichas_events_total", result="publicada")
        assert first.terminate(timeout=90) == 0  # leaves: its partitions move to the second
        deadline = time.monotonic() + 240
        while True:
            found = await read_all(kafka.bootstrap, topics.publicadas)
            if len(found) >= EVENTOS:
                break
            assert time.monotonic() < deadline, f"{len(found)}\n{second.log_tail()}"
            await asyncio.sleep(1)
        # The second worker is done with the input: any duplicate it would emit is out.
        await wait_committed(kafka.bootstrap, topics.env()["FICHAS_GRUPO"], topics.entrada)
        by_second = second.metric("fichas_events_total", result="publicada")
        assert second.terminate(timeout=90) == 0
    finally:
        for worker in (first, second):
            if worker.alive():
                worker.terminate()
    found = await read_all(kafka.bootstrap, topics.publicadas)
    counts = Counter(o["value"]["sku"] for o in found)
    print(f"\nrebalance: outcomes={len(found)} by first>={by_first:.0f} by second={by_second:.0f}")
    assert set(counts) == {f"R{n:03d}" for n in range(EVENTOS)}
    assert max(counts.values()) == 1, [k for k, v in counts.items() if v > 1]
    assert by_first > 0 and by_second > 0
    # Both rebalances found the first worker with fichas running, as the worker itself logged
    # it at that moment (a metric read before each action could only say that there had been
    # some a moment before): the revoke when the second joined, and its own SIGTERM.
    log = first.log_tail(10_000)
    al_unirse = re.findall(r"revoked \d+ partitions with (\d+) fichas running", log)
    al_irse = re.findall(r"stopping: waiting up to \d+ s .*? for (\d+) running fichas", log)
    assert any(int(n) > 0 for n in al_unirse), "the join must find work in flight"
    assert any(int(n) > 0 for n in al_irse), "the leave must find work in flight"
