"""``fichas revisor --metricas-puerto``: /metrics and /health/* only on their own port.

In Kubernetes the Ingress routes the pages' port (8080) to the world; the probes and Prometheus
use the other (9101), which the Ingress never routes. A real app process on a real broker: the
pages' port answers 404 for the machine endpoints, the internal port answers them (and serves
no page).
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, revisor_env
from harness.topicos import Topics
from infra.network import free_port
from tests.revision.conftest import topics_env

pytestmark = pytest.mark.kafka


def _estado(url: str) -> int:
    """The HTTP status of a GET (the error's status when it is one)."""
    try:
        with urllib.request.urlopen(url, timeout=3) as respuesta:
            return int(respuesta.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_metricas_y_salud_solo_en_su_puerto(kafka: KafkaBroker, tmp_path: Path) -> None:
    interno = free_port()
    env = revisor_env(kafka.bootstrap, topics_env(Topics()), tmp_path / "datos")
    app = RevisorProcess(
        env, free_port(), tmp_path / "revisor.log", argumentos=["--metricas-puerto", str(interno)]
    )
    app.start()
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if _estado(f"http://127.0.0.1:{interno}/health/ready") == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline, app.log_tail()
            time.sleep(0.5)
        assert _estado(f"http://127.0.0.1:{interno}/metrics") == 200
        assert _estado(f"http://127.0.0.1:{interno}/health/live") == 200
        assert _estado(f"http://127.0.0.1:{interno}/login") == 404  # no page there
        for ruta in ("/metrics", "/health/ready", "/health/live"):
            assert _estado(f"{app.url}{ruta}") == 404, ruta
        assert _estado(f"{app.url}/login") == 200
    finally:
        assert app.terminate(timeout=60) == 0, app.log_tail()
