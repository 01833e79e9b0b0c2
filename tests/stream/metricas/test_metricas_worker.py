"""Scripted outcomes through a real worker, then exact values scraped from its /metrics."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce, read_all
from harness.worker import WorkerInProcess, worker_env


def _m(sku: str, version: int = 1) -> tuple[bytes, bytes]:
    return sku.encode(), json.dumps(evento_dict(sku, version, event_id=f"{sku}-{version}")).encode()


async def test_contadores_exactos_por_resultado_criterio_e_intento(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure(
        {
            "rules": [
                {"sku": "A2", "evaluador": ["rechazar:C06", "aprobar"]},
                {"sku": "A3", "evaluador": ["rechazar:C04"]},
                {"sku": "A4", "generador": ["sin_atributos", "valida"]},
            ]
        }
    )
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await produce(
        kafka.bootstrap,
        topics.entrada,
        [_m("A1"), _m("A2"), _m("A3"), _m("A4"), _m("A5", 1), _m("A5", 2), (b"X", b"{roto")],
    )
    env = worker_env(kafka, fake_llm, topics, data_dir, FICHAS_MUESTRA_PROPORCION="1")
    worker = WorkerInProcess(env, tmp_path / "w.log")
    worker.start()
    try:
        worker.wait_ready()
        deadline = time.monotonic() + 120
        while (
            worker.metric("fichas_events_total", result="publicada")
            + worker.metric("fichas_events_total", result="revision_manual")
            < 5
        ):
            assert time.monotonic() < deadline, worker.log_tail()
            await asyncio.sleep(0.3)
        await asyncio.sleep(1)
        m = worker.metric
        assert m("fichas_events_total", result="publicada") == 4
        assert m("fichas_events_total", result="revision_manual") == 1
        assert m("fichas_events_total", result="dlq") == 1
        assert m("fichas_events_total", result="obsoleto") == 1
        assert m("fichas_events_total", result="reentregada") == 0
        assert m("fichas_attempts_total") == 1 + 2 + 3 + 2 + 1
        verdicts = {
            (a, ok): m("fichas_verdicts_total", attempt=a, approved=ok)
            for a in ("1", "2", "3")
            for ok in ("true", "false")
        }
        assert verdicts == {
            ("1", "true"): 2,
            ("1", "false"): 3,
            ("2", "true"): 2,
            ("2", "false"): 1,
            ("3", "true"): 0,
            ("3", "false"): 1,
        }
        assert m("fichas_rejections_total", criterion="C06", by="evaluador") == 1
        assert m("fichas_rejections_total", criterion="C04", by="evaluador") == 3
        assert m("fichas_rejections_total", criterion="C03", by="codigo") == 1
        assert m("fichas_rejections_total", criterion="C03", by="evaluador") == 0
        assert m("fichas_llm_request_duration_seconds_count", agent="generador") == 9
        assert m("fichas_llm_request_duration_seconds_count", agent="evaluador") == 9
        assert m("fichas_llm_tokens_total", agent="generador", type="completion") > 0
        assert m("fichas_attempts_per_ficha_count") == 5
        # Every evaluator answer of the fake carries logprobs (the start-up probe said so too):
        # one present score per evaluator call above.
        assert m("fichas_llm_logprobs") == 1
        scores = m("fichas_evaluator_scores_total", family="zapatillas", score="present")
        assert (
            scores == 9
            and m("fichas_evaluator_scores_total", family="zapatillas", score="missing") == 0
        )
        assert m("fichas_in_flight") == 0
        assert m("fichas_llm_paused") == 0
        assert m("fichas_sample_total") == 4  # proportion 1: every published ficha
        muestra = await read_all(kafka.bootstrap, topics.muestra)
        assert sorted(r["value"]["sku"] for r in muestra) == ["A1", "A2", "A4", "A5"]
        # The sample carries the origin a reviewer compares against; the published one does not.
        assert all(r["value"]["origen"]["ficha_proveedor"]["titulo"] for r in muestra)
        publicadas = await read_all(kafka.bootstrap, topics.publicadas)
        assert publicadas and all("origen" not in r["value"] for r in publicadas)
        assert all(r["value"]["revision"] is None for r in publicadas)
        text = worker.metrics()
        assert "fichas_criteria_info" in text
        assert f'partition="0",topic="{topics.entrada}"' in text
    finally:
        worker.terminate()
