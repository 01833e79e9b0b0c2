"""``fichas revisor`` started with no Kafka broker answering: the worker's rule, one line and
exit 4 after ``FICHAS_KAFKA_ESPERA_S``, never a traceback (issue 50, item 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from harness import forkserver
from harness.entorno import entorno
from infra.network import free_port

REPO = Path(__file__).parents[3]
ESPERA_S = 6


def test_sin_broker_al_arrancar_una_linea_y_exit_4(tmp_path: Path) -> None:
    closed = free_port()
    env = entorno(
        kafka=f"127.0.0.1:{closed}",
        data_dir=tmp_path,
        FICHAS_KAFKA_ESPERA_S=str(ESPERA_S),
        FICHAS_LOG_NIVEL="INFO",
    )
    proc = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "revisor", "--port", str(free_port())],
        env=env | {"PYTHONPATH": str(REPO)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=ESPERA_S + 180,
    )
    assert proc.returncode == 4, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    final = json.loads(proc.stderr.splitlines()[-1])
    assert final["level"] == "CRITICAL", final
    assert final["message"].startswith(
        f"Kafka at 127.0.0.1:{closed} (FICHAS_KAFKA_BROKERS) unreachable after "
    )
    assert final["message"].endswith("; exiting")
