"""The start-up log-probabilities probe and the missing-score counter in a real ``fichas worker``.

A real broker, the fake LLM process scripted as a server without logprobs or as one that is
down at start-up; what is asserted is what on-call sees: the worker's log lines (JSON, one per
line) and its ``/metrics``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, wait_outcomes, worker_env

PROBE_LOGGER = "grafo.logprobs_probe"


def _m(sku: str) -> tuple[bytes, bytes]:
    return sku.encode(), json.dumps(evento_dict(sku, 1, event_id=f"{sku}-1")).encode()


def _probe_lines(log: Path) -> list[dict[str, Any]]:
    """The probe's records in the worker's JSON log."""
    lines = []
    for raw in log.read_text(errors="replace").splitlines():
        try:
            record = json.loads(raw)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("logger") == PROBE_LOGGER:
            lines.append(record)
    return lines


async def test_a_server_without_logprobs_is_named_once_and_counted(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"default": {"evaluador": [{"accion": "aprobar", "puntuacion": None}]}})
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    log = tmp_path / "w.log"
    worker = WorkerProcess(worker_env(kafka, fake_llm, topics, data_dir), log)
    worker.start()
    try:
        worker.wait_ready()
        await until(
            lambda: worker.metric("fichas_llm_logprobs") == 0,
            60,
            every=0.3,
            explain=worker.log_tail,
        )
        await produce(kafka.bootstrap, topics.entrada, [_m("SIN-LP-1"), _m("SIN-LP-2")])
        await wait_outcomes(kafka, topics, 2, worker, timeout=120)
        await until(
            lambda: (
                worker.metric("fichas_evaluator_scores_total", family="zapatillas", score="missing")
                == 2
            ),
            60,
            every=0.3,
            explain=worker.log_tail,
        )
        present = worker.metric(
            "fichas_evaluator_scores_total", family="zapatillas", score="present"
        )
        assert worker.alive()
    finally:
        assert worker.terminate() == 0, worker.log_tail()
    assert present == 0
    (line,) = _probe_lines(log)  # one line, at start-up, not one per ficha
    assert line["level"] == "ERROR"
    assert "no publication gate can ever open" in line["message"]
    assert "--max-logprobs" in line["message"]


async def test_llm_down_at_start_up_the_worker_goes_on(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    fake_llm.down(300, mode="503")
    log = tmp_path / "w.log"
    worker = WorkerProcess(worker_env(kafka, fake_llm, topics, data_dir), log)
    worker.start()
    try:
        worker.wait_ready()
        await until(lambda: bool(_probe_lines(log)), 60, every=0.3, explain=worker.log_tail)
        assert math.isnan(worker.metric("fichas_llm_logprobs"))  # unknown, not "missing"
        fake_llm.up()
        await produce(kafka.bootstrap, topics.entrada, [_m("CAIDO-1")])
        (salida,) = await wait_outcomes(kafka, topics, 1, worker, timeout=120)
        present = worker.metric(
            "fichas_evaluator_scores_total", family="zapatillas", score="present"
        )
    finally:
        assert worker.terminate() == 0, worker.log_tail()
    assert salida["topic"] == topics.publicadas  # the fake approves; veredicto mode publishes
    assert present == 1
    (line,) = _probe_lines(log)
    assert line["level"] == "WARNING" and "could not probe" in line["message"]
    assert "HTTP 503" in line["message"]
