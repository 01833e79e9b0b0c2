"""The quick benchmark runs end to end, fills every column of every scenario, and its CPU
guard holds.

Targets (CPU per ficha, share of the LLM-bound limit) are reported by ``bench.run``, not
asserted here, so a slow CI machine cannot fail them. The CPU guard is asserted: it is a
ratio measured within the run (``bench.guardia``: the 3-attempt ficha's CPU over the fake
LLM's CPU in the same scenario, same machine, same moment), which holds on a busy machine and
fails when the worker's CPU per ficha doubles (issue 33; figures in docs/rendimiento.md).
It runs ``python -m bench.run --prueba`` as a subprocess, as CI and people run it, because the
harness starts its own broker, fake LLM and worker processes: ``--quick`` at the size a test of
the tool needs (20 events per worker scenario, 4 for the naive design), the CPU guard's
scenario at its quick size (60 events), since the guard is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.guardia import LIMITE
from bench.run import COLUMNS, EXIT_GUARDIA

REPO = Path(__file__).resolve().parents[2]
ESCENARIOS = {"worker_1", "worker_2", "ingenuo", "worker_1_3int"}


@pytest.mark.kafka
def test_bench_quick_rellena_cada_columna(tmp_path: Path) -> None:
    out = tmp_path / "resultados.json"
    proc = subprocess.run(
        [sys.executable, "-m", "bench.run", "--prueba", "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,  # about 1 min idle; 3 min on this 2-core machine under heavy load
    )
    doc = json.loads(out.read_text()) if out.exists() else {}
    guardia = doc.get("guardia") or {}
    # exit status 3 is the guard; its line says by how much
    assert proc.returncode != EXIT_GUARDIA, [guardia, proc.stdout[-1500:]]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert guardia["cumple"] is True and 0 < guardia["razon"] <= guardia["limite"] == LIMITE
    assert "cpu guard:" in proc.stdout
    filas = {f["escenario"]: f for f in doc["filas"]}
    assert set(filas) == ESCENARIOS
    for nombre, fila in filas.items():
        assert set(COLUMNS) <= set(fila), nombre
        assert all(fila[c] is not None for c in COLUMNS), nombre
        assert fila["n"] > 0 and fila["fichas_s"] > 0, nombre
        assert fila["filas_ficha"] > 0 and fila["bytes_ficha"] > 0, nombre
        assert fila["cpu_ms_ficha"] > 0 and fila["rss_pico_mib"] > 0, nombre
        assert 0 < fila["p50_ms"] <= fila["p95_ms"] <= fila["p99_ms"], nombre
        assert fila["limite_llm_s"] > 0 and fila["pct_limite"] > 0, nombre
        assert fila["llamadas_ficha"] >= 2, nombre  # at least one generator + one evaluator
        assert 0 < fila["cpus_maquina"] <= doc["parametros"]["cpus"] + 0.05, nombre
    # the naive agents inherit the checkpointer: more rows per ficha than the worker's
    assert filas["ingenuo"]["checkpoints_ficha_3"] > filas["worker_1"]["checkpoints_ficha_3"]
    assert doc["parametros"]["prueba"] is True and doc["parametros"]["quick"] is True
    assert filas["worker_1"]["n"] == 20 and filas["ingenuo"]["n"] == 4
    assert filas["worker_1_3int"]["n"] == 60  # the guard's scenario keeps its quick size
    assert "escenario" in proc.stdout  # the plain-text table was printed
    assert "--prueba: the test of the tool, not a measurement" in proc.stdout
    assert "targets:" in proc.stdout
    assert len(doc["objetivos"]) == 4
    assert all(o["medido"] is not None for o in doc["objetivos"]), doc["objetivos"]
    # where worker_1's % of the limit went, from the fake LLM's own records (bench.ocupacion)
    uso = doc["detalle"]["worker_1"]["ocupacion"]
    assert 0 < uso["ocupacion_pct"] <= 100.5 and 0 < uso["techo_pct"] <= 100
    assert uso["huecos"] > 0 and uso["hueco_p50_ms"] <= uso["hueco_p99_ms"]
    assert "llm slots, worker_1: busy" in proc.stdout


def test_la_guardia_es_una_razon_y_falla_al_pasar_el_limite() -> None:
    from bench.guardia import veredicto_guardia

    bien = veredicto_guardia(30.0, 6.0, [5.0, 6.0, 7.0], limite=8.0)
    assert bien["razon"] == 5.0 and bien["cumple"] is True
    assert bien["razon_calibracion"] == 5.0
    # the same ficha on a machine twice as slow: the same ratio
    assert veredicto_guardia(60.0, 12.0, limite=8.0)["razon"] == 5.0
    # twice the worker's CPU per ficha on the same machine: over the limit
    doble = veredicto_guardia(60.0, 6.0, limite=8.0)
    assert doble["razon"] == 10.0 and doble["cumple"] is False


def test_prueba_es_quick_mas_pequeno_salvo_la_guardia() -> None:
    """``--prueba``: the quick run at the size the tool's test needs; the guard's scenario keeps
    the quick size its limit was set on (docs/rendimiento.md)."""
    from bench.run import N_QUICK, escenarios, parse_args

    quick, prueba = parse_args(["--quick"]), parse_args(["--prueba"])
    assert prueba.quick and prueba.prueba and not quick.prueba and prueba.sweep == ()
    tamanos = {e.nombre: e.n for e in escenarios(prueba)}
    assert tamanos == {"worker_1": 20, "worker_2": 20, "ingenuo": 4, "worker_1_3int": N_QUICK}
    assert {e.nombre: e.n for e in escenarios(quick)} == {
        "worker_1": N_QUICK,
        "worker_2": N_QUICK,
        "ingenuo": 8,
        "worker_1_3int": N_QUICK,
    }
    assert prueba.latency_ms == quick.latency_ms and prueba.cap == quick.cap
