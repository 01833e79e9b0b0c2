"""The production configuration: workers in one group sharing a real PostgreSQL, on uvloop.

Checkpoints, outcome records and per-SKU versions live in Postgres: worker A reads its DSN from
a file, as the Kubernetes pods do (``FICHAS_POSTGRES_DSN_ARCHIVO``, a Secret's file with the
line break ``echo`` leaves), worker B from ``FICHAS_POSTGRES_DSN``. Worker A kills itself
inside its first emit's transaction (the fault point ``worker.caida_en_transaccion``): its
outcomes are recorded in PostgreSQL, the record and the offset of one are in the log, not
committed. Worker B takes the partitions over and must use what A recorded: the same bytes as
A's aborted record, no LLM call for an event whose outcome A had recorded, and every outcome
once for a read_committed reader.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from pathlib import Path

import pytest

from grafo.ejecucion import thread_id
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce, read_all, wait_committed
from harness.worker import WorkerInProcess, WorkerProcess, wait_outcomes, worker_env


@pytest.mark.postgres
async def test_b_takes_over_from_a_using_what_a_recorded_in_postgres(
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    topics: Topics,
    tmp_path: Path,
    postgres_dsn: str,
) -> None:
    import psycopg

    from esquemas import EventoCambio

    tag = f"{uuid.uuid4().int % 10**6:06d}"  # digits: a title word like PGABCDEF would shout (C05)
    skus = [f"PG{tag}-{n:02d}" for n in range(40)]
    fake_llm.configure(
        {
            "latency_ms": 100,
            "rules": [{"sku": f"PG{tag}-0.*", "evaluador": ["rechazar", "aprobar"]}],
        }
    )
    await create_input_topic(kafka.bootstrap, topics.entrada)
    eventos = [evento_dict(sku, 1, event_id=f"{sku}-v1") for sku in skus]
    await produce(
        kafka.bootstrap,
        topics.entrada,
        [(e["sku"].encode(), json.dumps(e).encode()) for e in eventos],
    )
    archivo = tmp_path / "secretos" / "postgres-dsn"
    archivo.parent.mkdir()
    archivo.write_text(postgres_dsn + "\n")
    archivo.chmod(0o400)
    a = WorkerProcess(
        worker_env(
            kafka,
            fake_llm,
            topics,
            tmp_path / "a",
            FICHAS_FAULT_POINTS="worker.caida_en_transaccion",
            FICHAS_FAULT_POINTS_ALLOWED="1",
            FICHAS_POSTGRES_DSN_ARCHIVO=str(archivo),
            FICHAS_CONCURRENCIA="4",
        ),
        tmp_path / "a.log",
    )
    b = WorkerInProcess(
        worker_env(
            kafka,
            fake_llm,
            topics,
            tmp_path / "b",
            FICHAS_POSTGRES_DSN=postgres_dsn,
            FICHAS_CONCURRENCIA="4",
        ),
        tmp_path / "b.log",
    )
    group = topics.env()["FICHAS_GRUPO"]
    ids = [e["event_id"] for e in eventos]
    a.start()
    try:
        a.wait_ready()
        # A dies by itself inside its first emit's transaction.
        deadline = time.monotonic() + 120
        while a.proc is not None and a.proc.poll() is None:
            assert time.monotonic() < deadline, a.log_tail()
            await asyncio.sleep(0.05)
        killed_at = time.time()
        with psycopg.connect(postgres_dsn) as conn:
            rows = conn.execute(
                "select event_id from fichas_resultados where event_id = any(%s)", (ids,)
            ).fetchall()
        recorded_by_a = {r[0] for r in rows}
        assert recorded_by_a, a.log_tail()  # A, its DSN from the file, wrote to this database
        before = {
            o["value"]["event_id"]: o["raw"]
            for o in await read_all(kafka.bootstrap, topics.publicadas)
        }
        b.start()
        b.wait_ready()
        found = await wait_outcomes(kafka, topics, len(skus), b, timeout=180)
        await wait_committed(kafka.bootstrap, group, topics.entrada)  # B emitted all it will
    finally:
        code_b = b.terminate(timeout=60)
        if a.proc is not None and a.proc.poll() is None:
            a.kill()
    assert code_b == 0, b.log_tail()
    assert "event loop: uvloop" in b.log_tail(300)
    assert "assigned [(" in b.log_tail(300)  # B really took partitions over
    found = await read_all(kafka.bootstrap, topics.publicadas)
    assert sorted({f["value"]["sku"] for f in found}) == skus
    intentos = {f["value"]["sku"]: f["value"]["intentos"] for f in found}
    # The fake's scripts are per SKU and per call: a kill after an evaluator answered but before
    # that step was checkpointed replays the call, which the fake answers with its next step.
    assert {intentos[s] for s in skus[10:]} == {1}
    assert {intentos[s] for s in skus[:10]} <= {1, 2} and 2 in {intentos[s] for s in skus[:10]}
    # Nothing of A's transaction is visible; every outcome once for a read_committed reader.
    assert before == {}
    assert sorted(f["value"]["event_id"] for f in found) == sorted(ids)
    # A's aborted record is in the log (read_uncommitted), and B's is the same bytes: B read
    # A's outcome record, it did not run that event again.
    everything: dict[str, list[bytes]] = {}
    for topic in (topics.publicadas, topics.revision):
        for o in await read_all(kafka.bootstrap, topic, committed_only=False):
            everything.setdefault(o["value"]["event_id"], []).append(o["raw"])
    twice = {e: raws for e, raws in everything.items() if len(raws) > 1}
    assert set(twice) and set(twice) <= recorded_by_a, "A's aborted record, then B's"
    assert all(len(set(raws)) == 1 for raws in twice.values())
    after_kill = {
        r["sku"]
        for r in fake_llm.requests(bodies=False)
        if r.get("received_at", 0) > killed_at + 0.5
    }
    assert not after_kill & {e["sku"] for e in eventos if e["event_id"] in recorded_by_a}

    threads = [thread_id(EventoCambio.model_validate(e)) for e in eventos]
    with psycopg.connect(postgres_dsn) as conn:
        checkpoints = conn.execute(
            "select count(*) from checkpoints where thread_id = any(%s)", (threads,)
        ).fetchone()
        resultados = dict(
            conn.execute(
                "select event_id, version from fichas_resultados where event_id = any(%s)",
                (ids,),
            ).fetchall()
        )
        versiones = dict(
            conn.execute(
                "select sku, version from fichas_versiones where sku = any(%s)", (skus,)
            ).fetchall()
        )
    # every outcome recorded in the shared database, and its checkpoint thread then deleted
    assert resultados == dict.fromkeys(ids, 1)
    assert checkpoints is not None and checkpoints[0] == 0
    assert versiones == dict.fromkeys(skus, 1)
    # nothing went to the embedded SQLite files
    assert not any((tmp_path / d / "checkpoints.sqlite").exists() for d in ("a", "b"))
