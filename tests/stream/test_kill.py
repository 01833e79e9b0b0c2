"""SIGKILL the worker at random moments: read_committed, nothing is lost and nothing is doubled.

Every outcome and DLQ record is committed in the transaction that commits its input offset
(docs/stream.md, "Offsets inside the output transaction"), so a kill either leaves both or
neither: a read_committed reader sees each ``event_id`` exactly once on every output topic
(published, review, the review sample) and each invalid message once in the DLQ.

The broker is this test's own, and it is SIGKILLed once too, halfway, while fichas are in
flight (before that kill of the worker): an outage of the broker in the middle of transactions
must not double anything either. A lone Kafka 4.4 broker killed mid-commit can skip a
transaction's markers; the claim's sweep aborts what that leaves open (docs/stream.md, "A single
broker's crash mid-commit"), and a failure message dumps the broker's batches and transaction
log to tell whether that is what happened.
"""

from __future__ import annotations

import asyncio
import json
import random
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka.structs import TopicPartition

from harness import kafka_dump
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce, read_all
from harness.worker import WorkerProcess, worker_env
from infra.network import free_port
from stream.commit.producers import transactional_id

EVENTOS = 400
INVALIDOS = 16  # one every 25 events
KILLS = 8
BROKER_KILL = KILLS // 2  # the kill before which the broker is SIGKILLed too


@pytest.fixture
def kafka() -> Iterator[KafkaBroker]:
    """A broker of this test only (it is killed once, which the session broker must never be)."""
    with tempfile.TemporaryDirectory(prefix="kill-kafka-") as folder:
        broker = KafkaBroker(free_port(), Path(folder), controller_port=free_port())
        broker.start()
        yield broker
        broker.stop()


async def _outcomes(kafka: KafkaBroker, topics: Topics) -> list[dict]:
    """The outcome records of both topics, each with its ``topic``."""
    return [
        dict(record, topic=topic)
        for topic in (topics.publicadas, topics.revision)
        for record in await read_all(kafka.bootstrap, topic)
    ]


# Worker log lines that tell how an offset came to be handled twice.
MARKS = ("claimed", "Traceback", "rejoin", "fenced", "grace", "revoked", "failed for good")


def _explain_duplicates(
    found: list[dict], por_evento: Counter, log_path: Path, kafka: KafkaBroker, topics: Topics
) -> str:
    """Why events were written twice, in under 80 lines (CI shows a long message's head and
    tail only): the doubled records; the worker's lines about them and its claims; and what
    the broker holds, read now because its folder is deleted at teardown: the batches around
    the doubled offsets (Kafka's DumpLogSegments: producer, epoch, data or COMMIT/ABORT
    marker), the input partition's transactional id in __transaction_state, its committed
    offsets in __consumer_offsets, and the broker log's lines about them. Only the first
    doubled event is followed that far (each dump is a JVM start)."""
    doubled = sorted(e for e, c in por_evento.items() if c > 1)
    records = sorted(
        (o["timestamp"], o["topic"], o["partition"], o["offset"], o["value"]["event_id"])
        for o in found
        if o["value"]["event_id"] in doubled
    )
    out = [f"doubled: {doubled}"]
    out += [f"  {e} {t}-{p}@{off} written {kafka_dump.hms(ts)}" for ts, t, p, off, e in records[:8]]
    try:
        _explain_broker(out, doubled, records, log_path, kafka, topics)
    except Exception as exc:  # the message must survive a dump that went wrong
        out.append(f"(explanation cut short: {exc!r})")
    return "\n".join(out)


def _explain_broker(
    out: list[str],
    doubled: list[str],
    records: list[tuple],
    log_path: Path,
    kafka: KafkaBroker,
    topics: Topics,
) -> None:
    """``_explain_duplicates``'s lines after the doubled records, appended to ``out``."""
    first = [r for r in records if r[4] == doubled[0]]
    times = [r[0] for r in first]
    entrada = kafka_dump.partition_of(doubled[0].removesuffix("-e").encode(), 4)
    input_tp = f"{topics.entrada}-{entrada}"
    out.append(f"worker log ({doubled[0]}, claims, {input_tp}):")
    out += _worker_lines(log_path, [*doubled, f"{input_tp}:"])
    dumped = sorted({f"{t}-{p}" for _, t, p, _, _ in first})
    for name in dumped:
        offsets = [off for _, t, p, off, _ in first if f"{t}-{p}" == name]
        out.append(f"{name} batches around {offsets}:")
        out += kafka_dump.batches(kafka, name, min(offsets) - 5, max(offsets) + 5)
    group = topics.env()["FICHAS_GRUPO"]
    txn_id = transactional_id(group, TopicPartition(topics.entrada, entrada))
    state = f"__transaction_state-{kafka_dump.java_partition(txn_id, 50)}"
    out.append(f"{state}, {txn_id} (epoch status partitions):")
    out += kafka_dump.transactions(kafka, state, txn_id, times, topics.prefix)
    offsets_log = f"__consumer_offsets-{kafka_dump.java_partition(group, 4)}"
    out.append(f"{offsets_log}, {input_tp} (offset, metadata) and its markers:")
    wanted = f'"topic":"{topics.entrada}","partition":{entrada}}}'
    out += kafka_dump.offset_commits(kafka, offsets_log, wanted, times)
    out.append("broker log:")
    unclean = [f"UNCLEAN partition change for {p} " for p in (state, *dumped)]
    number = state.rpartition("-")[2]
    out += kafka_dump.broker_lines(
        kafka, (txn_id, f"{state} ", f"partition {number} at epoch", *unclean)
    )


def _worker_lines(log_path: Path, wanted: list[str]) -> list[str]:
    """The worker's log lines naming ``wanted`` or a MARKS, as time and message."""
    lines = []
    for line in log_path.read_text(encoding="utf-8", errors="replace").splitlines():
        if not any(w in line for w in [*wanted, *MARKS]):
            continue
        try:
            entry = json.loads(line)
            message = entry["message"]
            if message.startswith("claimed ["):
                message = f"claimed {message.count('(')} partitions"
            line = f"{entry['time'][11:23]} {message}"
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        lines.append(f"  {line[:150]}")
    return kafka_dump.cut(lines, 10)


def _messages() -> list[tuple[bytes | None, bytes]]:
    """400 valid events (one SKU each) with an invalid message after every 25th."""
    messages: list[tuple[bytes | None, bytes]] = []
    for n in range(EVENTOS):
        sku = f"K{n:03d}"
        evento = evento_dict(sku, 1, event_id=f"{sku}-e")
        messages.append((sku.encode(), json.dumps(evento).encode()))
        if n % (EVENTOS // INVALIDOS) == 0:
            messages.append((f"INV{n:03d}".encode(), b"{not json " + str(n).encode()))
    return messages


async def test_sigkill_ocho_veces_ni_pierde_ni_duplica(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure(
        {
            "latency_ms": 200,
            "rules": [
                {"sku": "K[0-9]*[05]", "evaluador": ["rechazar", "aprobar"]},
                {"sku": "K[0-9]*7", "evaluador": ["rechazar"]},
            ],
        }
    )
    await create_input_topic(kafka.bootstrap, topics.entrada)
    await produce(kafka.bootstrap, topics.entrada, _messages())
    env = worker_env(
        kafka,
        fake_llm,
        topics,
        data_dir,
        FICHAS_CONCURRENCIA="16",
        FICHAS_MUESTRA_PROPORCION="0.25",
    )
    worker = WorkerProcess(env, tmp_path / "worker.log")
    rng = random.Random(42)
    kills = 0
    kills_en_vuelo = 0  # kills that landed while fichas were in the graph
    try:
        while kills < KILLS:
            worker.start()
            worker.wait_ready()
            await asyncio.sleep(rng.uniform(1.0, 3.0))
            deadline = time.monotonic() + 30
            while worker.metric("fichas_in_flight") == 0 and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            kills_en_vuelo += worker.metric("fichas_in_flight") > 0
            if kills == BROKER_KILL:
                kafka.kill()  # transactions open, fichas in flight
                await asyncio.sleep(2)
            worker.kill()
            kills += 1
            if kills == BROKER_KILL + 1:
                kafka.start()
        worker.start()
        deadline = time.monotonic() + 300
        while True:
            found = await _outcomes(kafka, topics)
            dlq = await read_all(kafka.bootstrap, topics.dlq)
            if len({o["value"]["event_id"] for o in found}) >= EVENTOS and len(dlq) >= INVALIDOS:
                break
            assert time.monotonic() < deadline, f"{len(found)} outcomes\n{worker.log_tail()}"
            await asyncio.sleep(1)
        await asyncio.sleep(3)  # anything late (a duplicate) has time to land
        assert worker.terminate() == 0
    finally:
        if worker.proc is not None and worker.proc.poll() is None:
            worker.kill()

    found = await _outcomes(kafka, topics)
    muestra = await read_all(kafka.bootstrap, topics.muestra)
    dlq = await read_all(kafka.bootstrap, topics.dlq)
    por_evento = Counter(o["value"]["event_id"] for o in found)
    por_muestra = Counter(o["value"]["event_id"] for o in muestra)
    por_origen = Counter(
        (d["value"]["origen"]["particion"], d["value"]["origen"]["offset"]) for d in dlq
    )
    perdidos = {f"K{n:03d}-e" for n in range(EVENTOS)} - set(por_evento)
    duplicados = sum(c - 1 for c in por_evento.values())
    duplicados_muestra = sum(c - 1 for c in por_muestra.values())
    duplicados_dlq = sum(c - 1 for c in por_origen.values())
    print(
        f"\nkill test: events={EVENTOS} invalid={INVALIDOS} kills={kills_en_vuelo} "
        f"outcomes={len(found)} unique={len(por_evento)} duplicates={duplicados} "
        f"lost={len(perdidos)} sample={len(muestra)} sample_duplicates={duplicados_muestra} "
        f"dlq={len(dlq)} dlq_duplicates={duplicados_dlq}"
    )
    assert kills_en_vuelo == KILLS, "every kill must land with fichas in flight"
    # At least one restart skipped offsets the committed metadata listed as finished (SKUs
    # finish out of offset order): the metadata path was exercised, not only the watermark.
    assert "finished offsets above it" in worker.log_path.read_text(encoding="utf-8")
    assert not perdidos
    assert duplicados == 0, _explain_duplicates(found, por_evento, worker.log_path, kafka, topics)
    assert duplicados_muestra == 0
    assert len(por_origen) == INVALIDOS and duplicados_dlq == 0
    assert muestra, "the sample topic must be written for its duplicate count to mean anything"
    revision = {o["value"]["sku"] for o in found if o["value"].get("motivo")}
    assert revision == {f"K{n:03d}" for n in range(EVENTOS) if n % 10 == 7}
