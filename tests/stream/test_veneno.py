"""Events that pass validation but cannot be handled never wedge a lane, a partition or the worker.

One input partition, so "the next valid event of the same partition is published" and "the
poison message's offset is committed" are both about the partition the poison sat in.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer

from esquemas.constantes import MAX_VERSION
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce, wait_committed
from harness.worker import WorkerInProcess, wait_outcomes, worker_env
from stream.flow.rechazo import MAX_KEY_BYTES


def _msg(evento: dict[str, Any]) -> tuple[bytes, bytes]:
    return evento["sku"].encode(), json.dumps(evento).encode()


async def _produce_with_headers(
    bootstrap: str, topic: str, key: bytes, value: bytes, headers: list[tuple[str, bytes]]
) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        await producer.send_and_wait(topic, value, key=key, headers=headers)
    finally:
        await producer.stop()


@pytest.mark.postgres
async def test_veneno_valido_va_al_dlq_y_la_particion_sigue(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, tmp_path: Path, postgres_dsn: str
) -> None:
    import psycopg

    tag = f"{uuid.uuid4().int % 10**6:06d}"
    poison_sku = f"VEN{tag}-X"
    # A database that refuses one SKU's outcome for a reason retrying does not cure: a trigger
    # raising an ordinary error (SQLSTATE P0001), as a column refusing a value would.
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute(
            "create table if not exists fichas_resultados (event_id text primary key, "
            "sku text not null, version bigint not null, huella text not null, "
            "destino text not null, salida text not null, "
            "registrado_en timestamptz not null default now())"
        )
        conn.execute(
            f"create or replace function veneno_{tag}() returns trigger language plpgsql as $$ "
            f"begin if new.sku = '{poison_sku}' then raise exception 'valor rechazado'; end if; "
            "return new; end $$"
        )
        conn.execute(
            f"create trigger veneno_{tag} before insert on fichas_resultados "
            f"for each row execute function veneno_{tag}()"
        )
    fake_llm.configure({"latency_ms": 0})
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    worker = WorkerInProcess(
        worker_env(kafka, fake_llm, topics, tmp_path / "d", FICHAS_POSTGRES_DSN=postgres_dsn),
        tmp_path / "w.log",
    )
    primero = evento_dict(f"VEN{tag}-A", 1)
    reutilizado = evento_dict(f"VEN{tag}-A", 2, event_id=primero["event_id"])
    maximo = evento_dict(f"VEN{tag}-B", MAX_VERSION)
    veneno = evento_dict(poison_sku, 1)
    ultimo = evento_dict(f"VEN{tag}-C", 1)
    big_key = b"k" * (5 * MAX_KEY_BYTES)
    headers = [("traza", b"abc-123"), ("origen", b"\xff\x00binario")]
    worker.start()
    try:
        worker.wait_ready()
        await produce(kafka.bootstrap, topics.entrada, [_msg(primero)])
        await wait_outcomes(kafka, topics, 1, worker, timeout=60)
        await produce(kafka.bootstrap, topics.entrada, [_msg(reutilizado), _msg(maximo)])
        await produce(kafka.bootstrap, topics.entrada, [_msg(veneno)])
        await _produce_with_headers(kafka.bootstrap, topics.entrada, big_key, b"{no", headers)
        await produce(kafka.bootstrap, topics.entrada, [_msg(ultimo)])
        found = await wait_outcomes(kafka, topics, 6, worker, timeout=120)
        await wait_committed(kafka.bootstrap, topics.env()["FICHAS_GRUPO"], topics.entrada)
        assert worker.alive()
    finally:
        worker.terminate()
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute(f"drop trigger if exists veneno_{tag} on fichas_resultados")
            conn.execute(f"drop function if exists veneno_{tag}()")

    publicadas = [f["value"] for f in found if f["topic"] == topics.publicadas]
    assert sorted((p["sku"], p["version"]) for p in publicadas) == [
        (primero["sku"], 1),
        (maximo["sku"], MAX_VERSION),
        (ultimo["sku"], 1),
    ]
    dlq = sorted(
        (f for f in found if f["topic"] == topics.dlq),
        key=lambda d: d["value"]["origen"]["offset"],
    )
    assert [d["value"]["error"]["codigo"] for d in dlq] == [
        "event_id_reutilizado",
        "error_procesamiento",
        "json_invalido",
    ]
    reuse, error, invalid = (d["value"] for d in dlq)
    assert json.loads(reuse["payload"])["version"] == 2
    assert "RaiseException" in error["error"]["mensaje"]
    assert veneno["event_id"] in error["error"]["mensaje"]
    assert json.loads(error["payload"]) == veneno
    raw = json.dumps(veneno).encode()
    assert error["payload_sha256"] == hashlib.sha256(raw).hexdigest()
    assert error["truncado"] is False and error["payload_codificacion"] == "texto"
    # the DLQ record of the message with a 5 KiB key: key cut, headers forwarded
    record = next(d for d in dlq if d["value"]["error"]["codigo"] == "json_invalido")
    assert record["key"] == big_key[:MAX_KEY_BYTES]
    # the original headers first, then the DLQ record's own schema headers
    assert record["headers"][: len(headers)] == headers
    assert ("esquema", b"EventoRechazado") in record["headers"][len(headers) :]
    assert invalid["payload"] == "{no"
    with psycopg.connect(postgres_dsn) as conn:
        row = conn.execute(
            "select version from fichas_versiones where sku = %s", (maximo["sku"],)
        ).fetchone()
    assert row is not None and row[0] == MAX_VERSION
