"""Smoke test of the whole job with the real small model: Kafka, ``fichas worker``, outcomes.

One supplier event and one broken line go through a real broker and a real worker process
talking to ``fichas llm-local serve`` (Qwen2.5-Coder-0.5B on CPU). The outcome must be
schema-valid for its topic and the broken line must reach the DLQ; whether the small model's
ficha is approved is not asserted (that is the model's quality, not the plumbing's).

The demo's own pieces (feed reading, producing with positions, the completion rule) do the
bookkeeping, so this also proves them against what a real worker writes. One event with one
attempt keeps the test to three model calls (the worker's start-up log-probabilities probe,
the generator, the evaluator): on 2 cores each call costs 15-35 s. Several events at once,
and the retry loop, are covered with the fake LLM (tests/stream/); a second real event went
through the same code with other data and cost 40-55 s of the suite (issue 40).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from esquemas import EventoRechazado, FichaEnRevision, FichaPublicada
from esquemas.constantes import DESTINO_DLQ, DESTINO_PUBLICADAS, DESTINO_REVISION
from harness.entorno import entorno
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, read_all, settings_for
from harness.worker import WorkerProcess
from herramientas.demo import avance, principal, servicios
from herramientas.demo.kafka import produce_feed
from infra.network import free_port

pytestmark = [pytest.mark.llm_local, pytest.mark.kafka]

SKUS = ("BOT-002001",)  # a short Spanish event of the sample feed
BROKEN = b'{"event_id": "roto", "sku": "CAM-9", "version": 1, "familia": "camis'


def _feed(tmp_path: Path) -> Path:
    """The chosen events of the sample feed and a broken line, as a feed file of their own."""
    lines = [
        line.raw
        for line in avance.read_feed(principal.DEFAULT_FEED)
        if line.evento is not None and line.evento.sku in SKUS
    ]
    assert len(lines) == len(SKUS)
    path = tmp_path / "feed.jsonl"
    path.write_bytes(b"\n".join([*lines, BROKEN]) + b"\n")
    return path


@pytest.mark.timeout(900)
async def test_one_event_end_to_end_with_the_real_model(
    kafka: KafkaBroker, local_llm_url: str, topics: Topics, tmp_path: Path
) -> None:
    await create_input_topic(kafka.bootstrap, topics.entrada)
    env = entorno()
    env.update(
        servicios.worker_env(
            {},
            brokers=kafka.bootstrap,
            llm_url=local_llm_url,
            llm_model="local",
            topics=topics.env(),
            run_id=topics.prefix,
            data_dir=tmp_path / "data",
            metrics_port=free_port(),
            max_intentos=1,
        )
    )
    env["FICHAS_GRUPO"] = f"{topics.prefix}-grupo"
    worker = WorkerProcess(env, tmp_path / "worker.log")
    worker.start()
    try:
        worker.wait_ready(timeout=120)
        output = {
            topics.publicadas: DESTINO_PUBLICADAS,
            topics.revision: DESTINO_REVISION,
            topics.dlq: DESTINO_DLQ,
        }
        progress = avance.Progress(avance.read_feed(_feed(tmp_path)), topics.entrada, output)
        await produce_feed(settings_for(kafka.bootstrap), topics.entrada, progress)

        deadline = time.monotonic() + 780
        while not progress.complete():
            assert time.monotonic() < deadline, "no outcome in time\n" + worker.log_tail()
            assert worker.proc is not None and worker.proc.poll() is None, worker.log_tail()
            await asyncio.sleep(3)
            for topic in output:
                for record in await read_all(kafka.bootstrap, topic):
                    progress.record(topic, record["raw"], record["timestamp"])
    finally:
        assert worker.terminate(timeout=60) == 0, worker.log_tail()

    *fichas, roto = progress.lines
    assert progress.state(roto) == avance.DLQ
    rechazo = EventoRechazado.model_validate(roto.evento_salida)
    assert rechazo.error.codigo == "json_invalido"
    assert (rechazo.origen.particion, rechazo.origen.offset) == (roto.partition, roto.offset)
    for line in fichas:
        assert line.evento is not None and line.evento_salida is not None
        if line.destino == DESTINO_PUBLICADAS:
            salida: FichaPublicada | FichaEnRevision = FichaPublicada.model_validate(
                line.evento_salida
            )
            assert salida.modelo == "local"
        else:
            assert line.destino == DESTINO_REVISION
            salida = FichaEnRevision.model_validate(line.evento_salida)
            assert salida.historial, "manual review carries the attempt it rejected"
        assert (salida.event_id, salida.sku, salida.version) == (
            line.evento.event_id,
            line.evento.sku,
            line.evento.version,
        )
        assert salida.intentos == 1
        assert line.latency_ms is not None and line.latency_ms > 0
