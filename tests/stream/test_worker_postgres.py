"""The production configuration: two workers in one group sharing a real PostgreSQL, on uvloop.

Checkpoints, outcome records and per-SKU versions live in Postgres (``FICHAS_POSTGRES_DSN``), so a
worker that takes over a partition sees what the other one recorded. The embedded SQLite
default is covered by the other worker tests.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from grafo.ejecucion import thread_id
from harness.eventos import evento_dict
from harness.fake_llm_client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, wait_outcomes, worker_env


@pytest.mark.postgres
async def test_two_workers_share_postgres_checkpoints_and_versions(
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    topics: Topics,
    tmp_path: Path,
    postgres_dsn: str,
) -> None:
    import psycopg

    from esquemas import EventoCambio

    tag = f"{uuid.uuid4().int % 10**6:06d}"  # digits: a title word like PGABCDEF would shout (C05)
    skus = [f"PG{tag}-{n:02d}" for n in range(20)]
    fake_llm.configure(
        {"latency_ms": 50, "rules": [{"sku": f"PG{tag}-0.*", "evaluador": ["rechazar", "aprobar"]}]}
    )
    await create_input_topic(kafka.bootstrap, topics.entrada)
    eventos = [evento_dict(sku, 1, event_id=f"{sku}-v1") for sku in skus]
    await produce(
        kafka.bootstrap,
        topics.entrada,
        [(e["sku"].encode(), json.dumps(e).encode()) for e in eventos],
    )
    workers = [
        WorkerProcess(
            worker_env(
                kafka, fake_llm, topics, tmp_path / f"d{i}", FICHAS_POSTGRES_DSN=postgres_dsn
            ),
            tmp_path / f"w{i}.log",
        )
        for i in range(2)
    ]
    for worker in workers:
        worker.start()
    try:
        for worker in workers:
            worker.wait_ready()
        found = await wait_outcomes(kafka, topics, len(skus), workers[0], timeout=180)
    finally:
        codes = [worker.terminate(timeout=60) for worker in workers]
    assert codes == [0, 0], [w.log_tail() for w in workers]
    assert all("event loop: uvloop" in w.log_tail(300) for w in workers)
    assert sorted(f["value"]["sku"] for f in found) == skus
    intentos = {f["value"]["sku"]: f["value"]["intentos"] for f in found}
    assert {intentos[s] for s in skus[:10]} == {2} and {intentos[s] for s in skus[10:]} == {1}

    threads = [thread_id(EventoCambio.model_validate(e)) for e in eventos]
    with psycopg.connect(postgres_dsn) as conn:
        por_hilo = dict(
            conn.execute(
                "select thread_id, count(*) from checkpoints where thread_id = any(%s) "
                "group by thread_id",
                (threads,),
            ).fetchall()
        )
        resultados = dict(
            conn.execute(
                "select event_id, version from fichas_resultados where sku = any(%s)", (skus,)
            ).fetchall()
        )
        versiones = dict(
            conn.execute(
                "select sku, version from fichas_versiones where sku = any(%s)", (skus,)
            ).fetchall()
        )
    # every outcome recorded in the shared database, and its checkpoint thread then deleted
    assert resultados == {e["event_id"]: 1 for e in eventos}
    assert por_hilo == {}
    assert versiones == dict.fromkeys(skus, 1)
    # nothing went to the embedded SQLite files
    assert not any((tmp_path / f"d{i}" / "checkpoints.sqlite").exists() for i in range(2))
