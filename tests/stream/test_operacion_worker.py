"""What an on-call engineer reads from ``fichas worker``: real process, real broker, real LLM port.

The log is what the worker writes to stderr (not a terminal here, so JSON lines). Each test
checks the message a person acts on, not only the behaviour behind it.
"""

from __future__ import annotations

import json
import socket
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from harness import forkserver
from harness.entorno import entorno
from harness.eventos import evento_json
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.procesos import REPO
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, wait_outcomes, worker_env
from infra.kafka.clients import BROKER_RETRY_S
from infra.network import free_port

pytestmark = pytest.mark.kafka


def _lines(path: Path) -> list[dict[str, Any]]:
    """Every line of the log as JSON: a line that is not JSON fails the test."""
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


async def _wait_line(path: Path, predicate: Any, timeout: float) -> dict[str, Any]:
    """The first log line of ``path`` that ``predicate`` accepts, once it is written."""
    return dict(
        await until(
            lambda: next((line for line in _lines(path) if predicate(line)), None),
            timeout,
            every=0.3,
            explain=lambda: f"no such log line in {timeout} s:\n{path.read_text()[-4000:]}",
        )
    )


async def test_llm_caido_y_vuelto_dice_url_causa_y_campos_del_evento(
    kafka: KafkaBroker, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    llm = FakeLLM()
    try:
        await create_input_topic(kafka.bootstrap, topics.entrada)
        env = worker_env(kafka, llm, topics, data_dir, FICHAS_LLM_API_KEY="clave-secreta")
        worker = WorkerProcess(env, tmp_path / "worker.log")
        worker.start()
        worker.wait_ready()
        llm.stop()  # the port is closed now: connections are refused
        skus = ["OPS-1", "OPS-2"]
        await produce(
            kafka.bootstrap, topics.entrada, [(s.encode(), evento_json(s).encode()) for s in skus]
        )
        pausa = await _wait_line(
            worker.log_path, lambda r: "pausing new events" in r.get("message", ""), 60
        )
        assert pausa["level"] == "WARNING"
        assert llm.url in pausa["message"] and "connection refused" in pausa["message"]
        assert pausa["sku"] in skus and pausa["event_id"] and pausa["version"] == 1
        assert worker.metric("fichas_llm_errors_total", kind="connection") >= 1
        assert worker.metric("fichas_llm_errors_total", kind="timeout") == 0

        llm.start()  # same port
        await wait_outcomes(kafka, topics, 2, worker, timeout=60)
        vuelta = await _wait_line(worker.log_path, lambda r: "answers again" in r["message"], 30)
        assert vuelta["level"] == "INFO" and llm.url in vuelta["message"]
        assert worker.terminate() == 0
    finally:
        llm.close()

    lines = _lines(worker.log_path)
    assert [r["level"] for r in lines if r["level"] in ("ERROR", "CRITICAL")] == []
    config = [r for r in lines if r["message"] == "configuration"]
    assert len(config) == 1
    assert config[0]["configuracion"]["FICHAS_LLM_API_KEY"] == "***"
    assert config[0]["configuracion"]["FICHAS_TOPIC_ENTRADA"] == topics.entrada
    assert "clave-secreta" not in worker.log_path.read_text()
    about_events = [r for r in lines if "sku" in r]
    assert about_events and all({"event_id", "version"} <= r.keys() for r in about_events)
    parada = [r for r in lines if r["message"].startswith("stopping: waiting up to")]
    assert parada, "SIGTERM says how long it waits"


def _instante(linea: dict[str, str]) -> float:
    """A JSON log line's time, in seconds since the epoch."""
    return datetime.fromisoformat(linea["time"]).timestamp()


# The start-up bound of this test (FICHAS_KAFKA_ESPERA_S; the product's default is 60 s): three
# retry periods (BROKER_RETRY_S), so the test sees the retries, their cause, the bound and the
# exit, without waiting a minute for them.
ESPERA_S = 15


def test_sin_broker_al_arrancar_reintenta_y_sale_con_4(tmp_path: Path) -> None:
    closed = free_port()
    env = entorno()
    env.update(
        FICHAS_KAFKA_BROKERS=f"127.0.0.1:{closed}",
        FICHAS_KAFKA_ESPERA_S=str(ESPERA_S),
        FICHAS_METRICAS_PUERTO="0",
        FICHAS_DATA_DIR=str(tmp_path),
    )
    proc = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "worker"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=ESPERA_S + 180,
    )
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    lines = [json.loads(line) for line in proc.stderr.splitlines()]
    retries = [r for r in lines if "unreachable" in r["message"] and r["level"] == "WARNING"]
    # The worker's own bound, from its first failed try to its last line (the log's clock):
    # the process's imports before the first try are not the bound, and on a loaded machine
    # they took tens of seconds.
    waited = _instante(lines[-1]) - _instante(retries[0])
    assert ESPERA_S - BROKER_RETRY_S <= waited < ESPERA_S + 15
    assert len(retries) >= ESPERA_S // BROKER_RETRY_S  # one WARNING per retry period
    assert f"127.0.0.1:{closed}: connection refused" in retries[0]["message"]
    assert "giving up in" in retries[0]["message"]
    final = lines[-1]
    assert final["level"] == "CRITICAL"
    assert final["message"].startswith(
        f"Kafka at 127.0.0.1:{closed} (FICHAS_KAFKA_BROKERS) unreachable after "
    )
    assert final["message"].endswith(
        f"in {ESPERA_S} s (127.0.0.1:{closed}: connection refused); check the address and that the "
        "broker is up; exiting"
    )
    assert not [r for r in lines if r["level"] == "ERROR"]


def test_puerto_de_metricas_ocupado_una_linea_y_exit_2(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("0.0.0.0", 0))
        busy.listen()
        port = busy.getsockname()[1]
        env = entorno()
        env.update(FICHAS_METRICAS_PUERTO=str(port), FICHAS_DATA_DIR=str(tmp_path))
        proc = forkserver.run(
            [sys.executable, "-m", "herramientas.cli", "worker"],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if not line.startswith("{")]
    assert errors == [
        f"fichas worker: FICHAS_METRICAS_PUERTO={port} is not available (Address already in "
        "use): stop what uses it or choose another port"
    ]
