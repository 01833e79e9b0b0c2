"""A worker that lost its partition publishes nothing for it afterwards (guarantee 9).

Two workers share PostgreSQL, one input partition. Worker A holds SKU Z's v5 and SKU Y's v1
in the graph; then either A is stopped (SIGSTOP) past its session timeout, or its LLM call
outlives the grace period of a rebalance. B takes the partition and publishes Z v6 and Y v1.
A comes back. The output must have no v5 after v6 and no ``event_id`` with two contents.
In the slow-LLM case A must have cancelled its running fichas when the grace period ended.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, worker_env
from tests.caos.contrato import Resumen, esperar_completo, leer, mensajes, revisar

pytestmark = [pytest.mark.caos, pytest.mark.kafka, pytest.mark.postgres]


def _worker(
    name: str, kafka: KafkaBroker, llm: FakeLLM, topics: Topics, tmp: Path, dsn: str
) -> WorkerProcess:
    env = worker_env(
        kafka,
        llm,
        topics,
        tmp / name,
        FICHAS_POSTGRES_DSN=dsn,
        FICHAS_GRACIA_S="2",
        FICHAS_LLM_TIMEOUT_S="60",
    )
    return WorkerProcess(env, tmp / f"{name}.log")


async def _llm_pending(llm: FakeLLM, sku: str) -> bool:
    """Whether the fake LLM holds a call for ``sku`` (the event is inside the graph)."""
    pedidas = await llm.arequests(sku=sku, bodies=False)
    return any(r.get("outcome") == "pending" for r in pedidas)


def _log_has(worker: WorkerProcess, text: str, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in worker.log_tail(400):
            return True
        time.sleep(0.2)
    return False


async def _a_vuelve(a: WorkerProcess, vuelta: int | None, timeout: float = 90) -> None:
    """Until A runs no ficha and, if it was stopped, its log since ``vuelta`` shows a fence: a
    revoke, an obsolete version, a fenced producer or a new assignment. (A fixed 15 s was
    given to it before; a slow LLM's A cancelled its fichas at the grace period already.)"""
    deadline = time.monotonic() + timeout
    while True:
        fence = vuelta is None or any(
            word in a.log_tail(100_000)[vuelta:]
            for word in ("revoked", "obsolet", "assigned", "fenced")
        )
        if fence and a.metric("fichas_in_flight") == 0:
            return
        assert time.monotonic() < deadline, a.log_tail()
        await asyncio.sleep(0.2)


@pytest.mark.parametrize("fault", ["sigstop", "llm_lento"])
async def test_zombi_no_publica_tras_perder_la_particion(
    fault: str,
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    topics: Topics,
    tmp_path: Path,
    postgres_dsn: str,
    resumenes: list[Resumen],
) -> None:
    started = time.monotonic()
    tag = f"{uuid.uuid4().int % 10**6:06d}"
    z, y = f"Z{tag}", f"Y{tag}"
    slow_ms = 12_000 if fault == "sigstop" else 40_000
    fake_llm.configure({"latency_ms": 0, "rules": [{"sku": f"[ZY]{tag}", "latency_ms": slow_ms}]})
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    z5, y1 = evento_dict(z, 5, event_id=f"{z}-v5"), evento_dict(y, 1, event_id=f"{y}-v1")
    z6 = evento_dict(z, 6, event_id=f"{z}-v6")
    a = _worker("a", kafka, fake_llm, topics, tmp_path, postgres_dsn)
    b = _worker("b", kafka, fake_llm, topics, tmp_path, postgres_dsn)
    a.start()
    stopped = False
    try:
        a.wait_ready()
        await produce(kafka.bootstrap, topics.entrada, mensajes([z5, y1]))
        await until(lambda: _llm_pending(fake_llm, z), 30, every=0.1)
        await until(lambda: _llm_pending(fake_llm, y), 30, every=0.1)
        if fault == "sigstop":
            assert a.proc is not None
            os.kill(a.proc.pid, signal.SIGSTOP)
            stopped = True
            # B's calls are fast: A's are already sleeping in the fake server.
            fake_llm.configure({"latency_ms": 0})
        b.start()
        b.wait_ready()
        if fault == "llm_lento":
            # A's revoke waits the grace period (2 s), then cancels its running fichas.
            assert _log_has(a, "grace period over: cancelled", 60), a.log_tail()
            fake_llm.configure({"latency_ms": 0})
        if fault == "sigstop":
            assert _log_has(b, "assigned [(", 60), b.log_tail()  # B took the partition
        # With a slow LLM the group may give the partition back to A after the rebalance; A's
        # cancelled ficha is then redelivered to A: the checks below hold for either owner.
        await produce(kafka.bootstrap, topics.entrada, mensajes([z6]))
        await esperar_completo(kafka.bootstrap, topics, [z5, y1, z6], 0, 90, b.log_tail)
        vuelta = len(a.log_tail(100_000)) if stopped else None  # A's log up to its return
        if stopped:
            assert a.proc is not None
            os.kill(a.proc.pid, signal.SIGCONT)
            stopped = False
        # A's LLM calls answer now (the slow ones were 12 s): until A has tried to emit them,
        # that is, holds no ficha any more and has met a fence since it came back.
        await _a_vuelve(a, vuelta)
    finally:
        if stopped and a.proc is not None:
            os.kill(a.proc.pid, signal.SIGCONT)
        codes = [w.terminate(timeout=60) for w in (a, b)]
    por_topic = await leer(kafka.bootstrap, topics)
    resumen = revisar(f"zombi_{fault}", por_topic, topics, [z5, y1, z6], 0, 1)
    resumen.segundos = time.monotonic() - started
    resumenes.append(resumen)
    resumen.comprobar()
    for vista in (por_topic, await leer(kafka.bootstrap, topics, committed_only=False)):
        # Also what a read_uncommitted reader sees: a fenced write is aborted, never later.
        z_versions = [
            json.loads(r.value)["version"]
            for r in vista[topics.publicadas] + vista[topics.revision]
            if json.loads(r.value)["sku"] == z
        ]
        assert z_versions and z_versions[-1] == 6 and 5 not in z_versions[z_versions.index(6) :]
    assert codes == [0, 0], (a.log_tail(), b.log_tail())
    if fault == "sigstop":
        # A did come back and reach a fence: Z superseded, the partition lost, or its producer
        # fenced by the broker.
        log: Any = a.log_tail(400)
        assert any(word in log for word in ("revoked", "obsolet", "assigned", "fenced")), log
