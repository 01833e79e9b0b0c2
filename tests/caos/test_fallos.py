"""Faults of the parts around the worker: broker, database, LLM, and membership churn.

Each scenario runs two (or more) workers sharing one PostgreSQL on the fake LLM, produces
valid events of several versions per SKU plus invalid messages, injects its fault, and then
checks guarantees 1, 2, 3 and 8 on every output topic (``contrato.revisar``).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.revisor import aprobacion
from harness.topicos import produce, produce_with_headers
from infra.network import free_port
from tests.caos.contrato import Resumen, esperar_decisiones, leer, mensajes
from tests.caos.escenario import Escenario

pytestmark = [pytest.mark.caos, pytest.mark.kafka, pytest.mark.postgres]

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def broker_propio(tmp_path: Path) -> Iterator[KafkaBroker]:
    """A broker of this test only: it is killed, which the session broker must never be (and
    killed again at the end: its data is thrown away)."""
    broker = KafkaBroker(free_port(), tmp_path / "kafka", controller_port=free_port())
    broker.start()
    yield broker
    broker.kill()


class _Postgres:
    """A private PostgreSQL cluster (scripts/postgres.sh on its own port and folder)."""

    def __init__(self, folder: Path) -> None:
        self.port = free_port()
        self.env = {
            **os.environ,
            "FICHAS_PG_PORT": str(self.port),
            "FICHAS_PG_DATA": str(folder),
        }

    def run(self, action: str) -> str:
        proc = subprocess.run(
            ["bash", str(REPO / "scripts" / "postgres.sh"), action],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout.strip()


@pytest.fixture
def postgres_propio() -> Iterator[tuple[_Postgres, str]]:
    """A PostgreSQL of this test only: it is killed, which the shared one must never be.

    Its folder is under /var/tmp: the server runs as user postgres, who cannot enter pytest's
    temporary folders.
    """
    folder = Path(tempfile.mkdtemp(prefix="fichas-caos-pg-", dir="/var/tmp"))
    folder.chmod(0o777)
    pg = _Postgres(folder / "pg")
    try:
        pg.run("start")
        yield pg, pg.run("dsn")
    finally:
        script = str(REPO / "scripts" / "postgres.sh")
        subprocess.run(["bash", script, "stop"], env=pg.env, timeout=120, check=False)
        shutil.rmtree(folder, ignore_errors=True)


async def test_broker_sigkill_y_vuelta(
    broker_propio: KafkaBroker,
    fake_llm: FakeLLM,
    tmp_path: Path,
    postgres_dsn: str,
    resumenes: list[Resumen],
) -> None:
    fake_llm.configure({"latency_ms": 30})
    escena = Escenario("broker_sigkill", broker_propio, fake_llm, tmp_path, postgres_dsn)
    try:
        await escena.arrancar()
        await escena.producir(skus=20, versions=3)
        await escena.esperar_salidas(10)
        broker_propio.kill()
        escena.fallos += 1
        # No pause before the restart: the broker is away for the restart itself, over 10 s (a
        # JVM start, then the controller waits out the dead incarnation's 9-s session).
        broker_propio.start()
        await escena.producir(skus=10, versions=2, desde=20)
        resumen = await escena.terminar()
    finally:
        escena.parar()
    resumenes.append(resumen)
    resumen.comprobar()


async def test_postgres_sigkill_y_vuelta(
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    tmp_path: Path,
    postgres_propio: tuple[_Postgres, str],
    resumenes: list[Resumen],
) -> None:
    pg, dsn = postgres_propio
    fake_llm.configure({"latency_ms": 30})
    escena = Escenario("postgres_sigkill", kafka, fake_llm, tmp_path, dsn)
    try:
        await escena.arrancar()
        await escena.producir(skus=20, versions=3)
        await escena.esperar_salidas(10)
        pg.run("kill")
        escena.fallos += 1
        await asyncio.sleep(5)
        pg.run("start")
        await escena.producir(skus=10, versions=2, desde=20)
        resumen = await escena.terminar()
    finally:
        escena.parar()
    resumenes.append(resumen)
    resumen.comprobar()


async def test_tormenta_de_rebalanceos(
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    tmp_path: Path,
    postgres_dsn: str,
    resumenes: list[Resumen],
) -> None:
    """Workers join and leave every few seconds for 40 s, some by SIGKILL."""
    fake_llm.configure({"latency_ms": 150})
    escena = Escenario("tormenta_rebalanceos", kafka, fake_llm, tmp_path, postgres_dsn)
    rng = random.Random(12)
    try:
        await escena.arrancar(workers=2, partitions=6)
        end = time.monotonic() + 40
        lote = 0
        while time.monotonic() < end:
            await escena.producir(skus=10, versions=2, desde=lote * 10)
            lote += 1
            vivos = [w for w in escena.workers if w.proc is not None and w.proc.poll() is None]
            if len(vivos) > 1 and rng.random() < 0.6:
                victima = rng.choice(vivos)
                assert victima.proc is not None
                if rng.random() < 0.5:
                    victima.proc.send_signal(signal.SIGKILL)
                else:
                    victima.proc.send_signal(signal.SIGTERM)
                escena.workers.remove(victima)
                escena.fallos += 1
            if len(vivos) < 4:
                escena.nuevo_worker()
                escena.fallos += 1
            await asyncio.sleep(rng.uniform(3, 6))
        resumen = await escena.terminar()
    finally:
        escena.parar()
    resumenes.append(resumen)
    resumen.comprobar()


async def test_decisiones_de_personas_durante_rebalanceos(
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    tmp_path: Path,
    postgres_dsn: str,
    resumenes: list[Resumen],
) -> None:
    """People approve the fichas the loop sent to review while workers join and leave (some
    by SIGKILL) and newer versions of half of the SKUs arrive.

    The worker is the one writer of ``fichas.publicadas`` (``stream.flow.decisiones``): for a
    read_committed reader every approval is published at most once; an approval whose SKU got
    no newer version is published exactly once; and the last record of every SKU with a newer
    version is that newer version (an approval it overtook is closed, never written after it).
    """
    escena = Escenario(
        "decisiones_rebalanceos", kafka, fake_llm, tmp_path, postgres_dsn, FICHAS_MAX_INTENTOS="1"
    )
    # A SKU's first ficha is rejected (one attempt: to review), every later one approved.
    fake_llm.configure(
        {
            "rules": [
                {
                    "sku": f"C{escena.tag}-.*",
                    "evaluador": ["rechazar", "aprobar"],
                    "latency_ms": 150,
                }
            ]
        }
    )
    rng = random.Random(31)
    skus = 16
    try:
        await escena.arrancar(workers=2, partitions=4)
        await escena.producir(skus=skus, versions=1)
        await escena.esperar_salidas(skus, timeout=120)
        por_topic = await leer(kafka.bootstrap, escena.topics)
        revisiones = [json.loads(r.value) for r in por_topic[escena.topics.revision]]
        assert len(revisiones) == skus, "every first version goes to review"
        rng.shuffle(revisiones)
        nuevas = {r["sku"] for r in revisiones[: skus // 2]}  # these get a v2 during the storm
        pendientes = list(revisiones)
        while pendientes:
            lote, pendientes = pendientes[:4], pendientes[4:]
            await produce_with_headers(
                kafka.bootstrap, escena.topics.decisiones, [aprobacion(r) for r in lote]
            )
            v2 = [
                evento_dict(r["sku"], 2, event_id=f"{r['sku']}-v2")
                for r in lote
                if r["sku"] in nuevas
            ]
            escena.validos += v2
            await produce(kafka.bootstrap, escena.topics.entrada, mensajes(v2))
            vivos = [w for w in escena.workers if w.proc is not None and w.proc.poll() is None]
            if len(vivos) > 1 and rng.random() < 0.6:
                victima = rng.choice(vivos)
                assert victima.proc is not None
                victima.proc.send_signal(signal.SIGKILL if rng.random() < 0.5 else signal.SIGTERM)
                escena.workers.remove(victima)
                escena.fallos += 1
            if len(vivos) < 3:
                escena.nuevo_worker()
                escena.fallos += 1
            await asyncio.sleep(rng.uniform(1, 3))  # the pace of the storm, not a wait
        await esperar_decisiones(kafka.bootstrap, escena.topics, timeout=240)
        resumen = await escena.terminar()
    finally:
        escena.parar()
    resumenes.append(resumen)
    resumen.comprobar()
    publicadas = [json.loads(r.value) for r in escena.por_topic[escena.topics.publicadas]]
    por_evento: dict[str, int] = {}
    ultima: dict[str, int] = {}
    for valor in publicadas:
        por_evento[valor["event_id"]] = por_evento.get(valor["event_id"], 0) + 1
        ultima[valor["sku"]] = valor["version"]
    for r in revisiones:
        veces = por_evento.get(r["event_id"], 0)
        if r["sku"] in nuevas:
            assert veces <= 1, f"{r['event_id']} published {veces} times"
            assert ultima.get(r["sku"]) == 2, f"{r['sku']} ends on v{ultima.get(r['sku'])}"
        else:
            assert veces == 1, f"the approval of {r['event_id']} published {veces} times"


async def test_llm_con_500_y_cuelgues(
    kafka: KafkaBroker,
    fake_llm: FakeLLM,
    tmp_path: Path,
    postgres_dsn: str,
    resumenes: list[Resumen],
) -> None:
    """About one LLM call in five fails: a 500, or a hang past the client's 3 s timeout."""
    escena = Escenario(
        "llm_500_y_cuelgues", kafka, fake_llm, tmp_path, postgres_dsn, FICHAS_LLM_TIMEOUT_S="3"
    )
    tag = escena.tag
    fake_llm.configure(
        {
            "latency_ms": 20,
            "rules": [
                {"sku": f"C{tag}-..[0-2]", "generador": ["error:500", "valida"]},
                {"sku": f"C{tag}-..[34]", "evaluador": ["colgar", "aprobar"]},
            ],
        }
    )
    try:
        await escena.arrancar()
        await escena.producir(skus=50, versions=1)
        resumen = await escena.terminar()
    finally:
        escena.parar()
    # 15 SKUs get a 500 and 10 a hang: 25 failed calls of 125 (20 %)
    resumen.fallos = 25
    resumenes.append(resumen)
    resumen.comprobar()
    # guarantee 7: an LLM failure is never an attempt and never sends a ficha to review
    salidas = [
        json.loads(r.value)
        for t in (escena.topics.publicadas, escena.topics.revision)
        for r in escena.por_topic[t]
    ]
    assert salidas and all(s["intentos"] == 1 for s in salidas)
    assert not escena.por_topic[escena.topics.revision]
