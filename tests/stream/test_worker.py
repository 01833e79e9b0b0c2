"""The worker on a real broker: outcomes, order, obsolete versions, DLQ, LLM outage, SIGTERM."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from harness.contrato import validar_registros
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce, read_all
from harness.worker import WorkerInProcess, WorkerProcess, wait_outcomes, worker_env


def _valid(sku: str, version: int) -> tuple[bytes, bytes]:
    evento = evento_dict(sku, version, event_id=f"{sku}-v{version}")
    return sku.encode(), json.dumps(evento).encode()


def _assert_order_per_sku(outcomes: list[dict[str, Any]]) -> None:
    """Per topic and SKU, versions strictly increase in partition-offset order.

    Offsets, not timestamps: two outcomes written within one millisecond share a timestamp,
    and sorting by (timestamp, version) would hide their swap.
    """
    per_sku: dict[tuple[str, str], list[tuple[int, int, int]]] = defaultdict(list)
    for o in outcomes:
        key = (o["topic"], o["value"]["sku"])
        per_sku[key].append((o["partition"], o["offset"], o["value"]["version"]))
    for key, items in per_sku.items():
        versions = [v for _, _, v in sorted(items)]
        assert all(a < b for a, b in itertools.pairwise(versions)), (key, items)


async def test_200_eventos_40_skus_y_10_invalidos(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    # Jittered latency: versions of one SKU handled at once would finish in any order.
    fake_llm.configure(
        {
            "latency_ms": 20,
            "latency_jitter_ms": 40,
            "rules": [{"sku": "S0[0-4]", "evaluador": ["rechazar"]}],
        }
    )
    rng = random.Random(7)
    versions = {f"S{n:02d}": 0 for n in range(40)}
    messages: list[tuple[bytes | None, bytes]] = []
    for _ in range(200):
        sku = rng.choice(sorted(versions))
        versions[sku] += 1
        messages.append(_valid(sku, versions[sku]))
    invalid: list[tuple[bytes | None, bytes]] = [
        (b"X1", b"{roto"),
        (b"X2", b"\xff\xfe\xfa"),
        (b"S01", json.dumps(evento_dict("S01", 99, familia="tostadoras")).encode()),
        (b"S02", json.dumps(evento_dict("S02", "9")).encode()),
        (b"S03", json.dumps([1, 2, 3]).encode()),
        (None, json.dumps(evento_dict("S04", 98)).encode()),
        (b"OTRO", json.dumps(evento_dict("S05", 97)).encode()),
        (b"X3", b"[" * 5000 + b"]" * 5000),
        (b"X4", b"x" * (70 * 1024)),
        (b"X5", json.dumps({"sku": "S06"}).encode()),
    ]
    for message in invalid:
        messages.insert(rng.randrange(len(messages)), message)
    await create_input_topic(kafka.bootstrap, topics.entrada)
    await produce(kafka.bootstrap, topics.entrada, messages)

    worker = WorkerInProcess(worker_env(kafka, fake_llm, topics, data_dir), tmp_path / "w.log")
    worker.start()
    try:
        worker.wait_ready()
        deadline = time.monotonic() + 240
        while True:
            handled = sum(
                worker.metric("fichas_events_total", result=r)
                for r in ("publicada", "revision_manual", "obsoleto", "dlq")
            )
            if handled >= 210:
                break
            assert time.monotonic() < deadline, worker.log_tail()
            await asyncio.sleep(0.5)
        obsoletos = worker.metric("fichas_events_total", result="obsoleto")
        assert worker.terminate() == 0, worker.log_tail()
    finally:
        if worker.alive():
            worker.terminate()

    publicadas = [
        o | {"topic": "publicadas"} for o in await read_all(kafka.bootstrap, topics.publicadas)
    ]
    revision = [o | {"topic": "revision"} for o in await read_all(kafka.bootstrap, topics.revision)]
    dlq = await read_all(kafka.bootstrap, topics.dlq)
    outcomes = publicadas + revision
    validar_registros(publicadas, "FichaPublicada")  # value and headers against the contract
    validar_registros(revision, "FichaEnRevision")
    validar_registros(dlq, "EventoRechazado")
    ids = [o["value"]["event_id"] for o in outcomes]
    assert len(ids) == len(set(ids)), "no duplicates without crashes"
    for sku, newest in versions.items():
        if newest:
            assert ids.count(f"{sku}-v{newest}") == 1, sku
    assert len(outcomes) + obsoletos == 200
    assert all(o["key"].decode() == o["value"]["sku"] for o in outcomes)
    rechazados = {f"S0{n}" for n in range(5) if versions[f"S0{n}"]}
    assert {o["value"]["sku"] for o in revision} == rechazados
    _assert_order_per_sku(outcomes)
    codes = sorted(d["value"]["error"]["codigo"] for d in dlq)
    assert len(dlq) == 10
    assert codes == sorted(
        [
            "json_invalido",
            "json_invalido",
            "familia_desconocida",
            "esquema_invalido",
            "esquema_invalido",
            "esquema_invalido",
            "esquema_invalido",
            "json_invalido",
            "demasiado_grande",
            "esquema_invalido",
        ]
    )
    campos = {d["value"]["error"].get("campo") for d in dlq}
    assert {"key", "version", "familia"} <= campos
    print(
        f"\noutcomes={len(outcomes)} publicadas={len(publicadas)} revision={len(revision)} "
        f"obsoletos={obsoletos:.0f} dlq={len(dlq)}"
    )


async def test_mensajes_veneno_no_paran_el_worker(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    rng = random.Random(1)
    nested = b'{"a":' * 3000 + b"null" + b"}" * 3000
    poison: list[tuple[bytes | None, bytes]] = [
        (b"P1", rng.randbytes(300)),
        (b"P2", "ñandú".encode("latin-1")),
        (b"P3", b"{" + b'"x": "' + b"y" * (1024 * 1024) + b'"}'),
        (b"P4", json.dumps(evento_dict("P4", 1, ficha_proveedor="no es un objeto")).encode()),
        (b"P5", json.dumps(evento_dict("P5", 1, familia="tostadoras")).encode()),
        (b"P6", nested),
        (None, json.dumps(evento_dict("P7", 1)).encode()),
    ]
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await produce(kafka.bootstrap, topics.entrada, [*poison, _valid("OK-1", 1)])
    worker = WorkerInProcess(worker_env(kafka, fake_llm, topics, data_dir), tmp_path / "w.log")
    worker.start()
    try:
        worker.wait_ready()
        found = await wait_outcomes(kafka, topics, len(poison) + 1, worker, timeout=120)
        assert worker.alive()
    finally:
        worker.terminate()
    dlq = [f for f in found if f["topic"] == topics.dlq]
    assert validar_registros(dlq, "EventoRechazado") == len(poison)
    dlq.sort(key=lambda d: d["value"]["origen"]["offset"])
    codes = [d["value"]["error"]["codigo"] for d in dlq]
    assert codes == [
        "json_invalido",
        "json_invalido",
        "demasiado_grande",
        "esquema_invalido",
        "familia_desconocida",
        "json_invalido",
        "esquema_invalido",
    ]
    binary = dlq[0]["value"]
    assert binary["origen"] == {"topic": topics.entrada, "particion": 0, "offset": 0}
    assert [f["value"]["sku"] for f in found if f["topic"] == topics.publicadas] == ["OK-1"]


async def test_llm_caido_nadie_va_a_revision(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    """The LLM goes away mid-run: the worker pauses, retries, and finishes nothing meanwhile.

    The outage lasts until the fichas in flight have failed more LLM calls than their attempt
    budget allows (``FICHAS_MAX_INTENTOS=1`` here: two failures each), read from the worker's
    own error counter: a worker that counted LLM failures as attempts would have sent them to
    review or the DLQ by then. That condition, not a fixed outage length, ends the outage (it
    was 30 s: the retries back off exponentially, so a larger budget costs time and the
    recovery then waits for the longest backoff).
    """
    fake_llm.configure({"latency_ms": 100})
    await create_input_topic(kafka.bootstrap, topics.entrada)
    await produce(kafka.bootstrap, topics.entrada, [_valid(f"D{n:02d}", 1) for n in range(40)])
    concurrencia, max_intentos = 4, 1
    env = worker_env(
        kafka,
        fake_llm,
        topics,
        data_dir,
        FICHAS_CONCURRENCIA=str(concurrencia),
        FICHAS_MAX_INTENTOS=str(max_intentos),
    )
    worker = WorkerInProcess(env, tmp_path / "w.log")

    def handled() -> float:
        return sum(
            worker.metric("fichas_events_total", result=r)
            for r in ("publicada", "revision_manual", "dlq", "obsoleto")
        )

    async def until(check: Any, what: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert time.monotonic() < deadline, f"{what}\n{worker.log_tail()}"
            await asyncio.sleep(0.2)

    worker.start()
    try:
        worker.wait_ready()
        await until(lambda: worker.metric("fichas_events_total", result="publicada") >= 5, "5")
        fake_llm.kill()
        await until(lambda: worker.metric("fichas_llm_paused") == 1, "paused")
        paused = worker.metric("fichas_llm_paused")
        errors = worker.metric_sum("fichas_llm_errors_total")
        # Settled: as many failures since the pause as fichas run at once (a run whose last
        # call answered just before the kill has emitted by then).
        await until(
            lambda: worker.metric_sum("fichas_llm_errors_total") >= errors + concurrencia,
            "settled",
        )
        settled = handled()
        handled_seen: list[float] = []  # every result, sampled through the rest of the outage
        budget = concurrencia * (max_intentos + 1)
        while worker.metric_sum("fichas_llm_errors_total") < errors + concurrencia + budget:
            handled_seen.append(handled())
            assert len(handled_seen) < 900, worker.log_tail()  # 3 min at most
            await asyncio.sleep(0.2)
        handled_seen.append(handled())
        during = worker.metric("fichas_events_total", result="publicada")
        fake_llm.start()
        found = await wait_outcomes(kafka, topics, 40, worker, timeout=180)
        assert worker.terminate() == 0
    finally:
        if not fake_llm.running:
            fake_llm.start()
        if worker.alive():
            worker.terminate()  # a failed check must not leave the worker running
    assert paused == 1.0
    # Processing stopped: once the calls in flight at the kill had failed, nothing finished for
    # the rest of the outage, in any way (published, review, DLQ or obsolete).
    assert set(handled_seen) == {settled}, (settled, handled_seen)
    assert during < 40
    assert all(f["topic"] == topics.publicadas for f in found), "an outage sent fichas to review"
    assert all(f["value"]["intentos"] == 1 for f in found)
    assert len({f["value"]["event_id"] for f in found}) == 40


async def test_sigterm_termina_lo_empezado_y_sale_con_0(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"latency_ms": 1500})
    await create_input_topic(kafka.bootstrap, topics.entrada)
    await produce(kafka.bootstrap, topics.entrada, [_valid(f"T{n:02d}", 1) for n in range(30)])
    env = worker_env(kafka, fake_llm, topics, data_dir, FICHAS_CONCURRENCIA="4")
    worker = WorkerProcess(env, tmp_path / "w.log")
    worker.start()
    worker.wait_ready()
    fake_llm.wait_for_requests(2, timeout=60, agent="generador")
    assert worker.terminate(timeout=60) == 0, worker.log_tail()
    assert "event loop: uvloop" in worker.log_tail(200)  # signals handled on uvloop too
    first = await read_all(kafka.bootstrap, topics.publicadas)
    # Every ficha the worker started (its generator was called) was finished before it exited;
    # the rest were left for the next worker.
    started = {r["sku"] for r in fake_llm.requests(agent="generador", bodies=False)}
    assert started and {f["value"]["sku"] for f in first} == started
    assert len(first) < 30
    # A second worker picks up exactly where the first committed.
    worker2 = WorkerInProcess(worker_env(kafka, fake_llm, topics, data_dir), tmp_path / "w2.log")
    fake_llm.configure({"latency_ms": 10})
    worker2.start()
    try:
        found = await wait_outcomes(kafka, topics, 30, worker2, timeout=120)
    finally:
        worker2.terminate()
    ids = [f["value"]["event_id"] for f in found]
    assert sorted(set(ids)) == sorted(f"T{n:02d}-v1" for n in range(30))
    assert len(ids) - len(set(ids)) <= 0, "a graceful stop redelivers nothing already done"
