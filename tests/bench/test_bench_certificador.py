"""``python -m bench.certificador`` runs end to end on both stores, and its check holds: the
certifier's advanced sequences equal the recomputation from every row (``harness.secuencia``).

Its figures (a round's CPU against the stored rows) are reported, never asserted here: they
are measured idle by hand (docs/rendimiento.md). This test keeps the tool working, since its
bulk inserts name the app's columns and a migration can change them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CAMPOS = {"filas", "primera_cpu_s", "ronda_cpu_s", "ronda_pared_s", "hoy_cpu_s", "hoy_pared_s"}


@pytest.mark.parametrize(
    "almacen", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_bench_certificador_mide_y_compara_con_el_recalculo(
    almacen: str, request: pytest.FixtureRequest
) -> None:
    dsn = ["--dsn", request.getfixturevalue("postgres_dsn")] if almacen == "postgres" else []
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.certificador",
            "--filas",
            "300,600",
            "--repeticiones",
            "1",
            *dsn,
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    medidas = json.loads(proc.stdout.strip().splitlines()[-1])["certificador"]
    assert [m["filas"] for m in medidas] == [300, 600]
    for medida in medidas:
        assert set(medida) == CAMPOS
        assert all(medida[c] > 0 for c in CAMPOS)
    assert "round CPU at 600 rows / at 300:" in proc.stdout
