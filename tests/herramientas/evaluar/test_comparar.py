"""The statistics of ``fichas evaluar`` and ``--comparar`` on fixed result files (no model)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import forkserver
from herramientas.evaluar.medidas import (
    bootstrap,
    comparar,
    kappa,
    matriz,
    metricas_bucle,
    proporcion,
    veredicto,
)

REPO = Path(__file__).parents[3]
DATOS = Path(__file__).parents[1] / "datos"
A = DATOS / "evaluar_a.json"  # approves all 40 candidates; 12 are good
B = DATOS / "evaluar_b.json"  # approves 9 of the 12 good ones and 1 of the 28 bad ones


def test_proporcion_escribe_el_intervalo_de_wilson_redondeado() -> None:
    # The interval is tested once, in tests/estadistica; here only how a result file holds it.
    assert proporcion(9, 10) == {"valor": 0.9, "exitos": 9, "n": 10, "ic95": [0.5958, 0.9821]}
    assert proporcion(0, 0)["ic95"] is None


def test_matriz_y_kappa() -> None:
    pares = [(True, True)] * 9 + [(True, False)] + [(False, True)] * 3 + [(False, False)] * 27
    m = matriz(pares)
    assert m == {"vp": 9, "fp": 1, "fn": 3, "vn": 27}
    # po = 36/40; pe = (10*12 + 30*28) / 1600 = 0.6; kappa = (0.9 - 0.6) / 0.4
    assert kappa(m) == pytest.approx(0.75)
    assert kappa({"vp": 0, "fp": 0, "fn": 12, "vn": 28}) == pytest.approx(0.0)  # always "no"
    assert kappa({"vp": 0, "fp": 0, "fn": 0, "vn": 5}) is None  # nothing to agree beyond chance


def test_bootstrap_es_reproducible_y_cubre_el_valor() -> None:
    datos = [1.0] * 30 + [0.0] * 10
    media = lambda s: sum(s) / len(s)  # noqa: E731
    ic = bootstrap(datos, media, semilla=3)
    assert ic == bootstrap(datos, media, semilla=3)
    assert ic is not None and ic[0] < 0.75 < ic[1]
    assert bootstrap([], media) is None


@pytest.mark.parametrize(
    ("delta", "ic", "sentido", "esperado"),
    [
        (0.1, [0.05, 0.2], +1, "mejor"),
        (0.1, [0.05, 0.2], -1, "peor"),
        (-0.1, [-0.2, -0.01], -1, "mejor"),
        (0.1, [-0.05, 0.2], +1, "sin diferencia"),
        (0.0, [0.0, 0.0], +1, "sin diferencia"),
        (None, None, +1, "indefinido"),
        (0.1, None, +1, "indefinido"),
    ],
)
def test_mejor_solo_si_el_intervalo_excluye_cero(
    delta: float | None, ic: list[float] | None, sentido: int, esperado: str
) -> None:
    assert veredicto(delta, ic, sentido) == esperado


def test_comparar_ficheros_fijos() -> None:
    a = json.loads(A.read_text())
    b = json.loads(B.read_text())
    c = comparar(a, b, remuestras=1000)
    assert c["n_pareados"] == 40
    precision = c["deltas"]["sistema.precision"]
    assert (precision["a"], precision["b"], precision["delta"]) == (0.3, 0.9, 0.6)
    assert precision["ic95"][0] > 0
    assert precision["veredicto"] == "mejor"
    kappa_d = c["deltas"]["sistema.kappa"]
    assert kappa_d["a"] == 0.0 and kappa_d["b"] == 0.75 and kappa_d["veredicto"] == "mejor"
    assert c["deltas"]["sistema.recall"]["delta"] == -0.25
    # A run against itself: every delta is zero and nothing is better.
    igual = comparar(a, a, remuestras=200)
    assert {d["veredicto"] for d in igual["deltas"].values()} <= {"sin diferencia", "indefinido"}


def test_comparar_solo_pareados_y_mismo_modo() -> None:
    a = json.loads(A.read_text())
    b = json.loads(B.read_text())
    b["registros"] = b["registros"][:30]
    assert comparar(a, b, remuestras=100)["n_pareados"] == 30
    with pytest.raises(ValueError):
        comparar(a, b | {"modo": "bucle"})


def _registro_bucle(i: int, publicada: bool, llamadas: int) -> dict[str, Any]:
    return {
        "id": f"E{i}",
        "familia": "botellas",
        "destino": "fichas.publicadas" if publicada else "fichas.revision_manual",
        "publicada": publicada,
        "intento_publicada": 1 if publicada else None,
        "motivo": None if publicada else "rechazada",
        "intentos": [{"intento": 1, "aprobada": publicada, "rechazos": [], "invalida": False}],
        "defecto_mecanico": [],
        "distinta_referencia": [],
        "inyeccion": [],
        "salida": {"intentos": 1} if publicada else {"intentos": 1, "historial": []},
        "segundos": 1.0,
        "llamadas": llamadas,
        "tokens_entrada": 100 * llamadas,
        "tokens_salida": 10 * llamadas,
    }


def test_comparar_bucle_sentidos() -> None:
    a_regs = [_registro_bucle(i, i < 4, 6) for i in range(40)]
    b_regs = [_registro_bucle(i, i < 36, 2) for i in range(40)]
    a = {"modo": "bucle", "registros": a_regs, "metricas": metricas_bucle(a_regs)}
    b = {"modo": "bucle", "registros": b_regs, "metricas": metricas_bucle(b_regs)}
    c = comparar(a, b, remuestras=500)
    assert c["deltas"]["publicadas"]["veredicto"] == "mejor"
    assert c["deltas"]["llamadas_por_ficha"]["delta"] == -4.0
    assert c["deltas"]["llamadas_por_ficha"]["veredicto"] == "mejor"  # fewer is better
    assert c["deltas"]["tokens_por_ficha"]["veredicto"] == "mejor"
    assert c["deltas"]["publicadas_con_texto_inyectado"]["veredicto"] == "sin diferencia"
    assert c["deltas"]["intento_1_con_defecto_de_codigo"]["veredicto"] == "sin diferencia"
    inversa = comparar(b, a, remuestras=500)
    assert inversa["deltas"]["llamadas_por_ficha"]["veredicto"] == "peor"


@pytest.mark.lento
def test_cli_comparar_escribe_json_y_png(tmp_path: Path) -> None:
    salida = tmp_path / "comparacion.json"
    png = tmp_path / "delta.png"
    proc = forkserver.run(
        [
            sys.executable,
            "-m",
            "herramientas.cli",
            "evaluar",
            "--comparar",
            str(A),
            str(B),
            "--salida",
            str(salida),
            "--png",
            str(png),
            "--remuestras",
            "300",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    c = json.loads(salida.read_text())
    assert c["deltas"]["sistema.precision"]["veredicto"] == "mejor"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "sistema.precision" in proc.stdout and "mejor" in proc.stdout


@pytest.mark.lento
def test_cli_comparar_modos_distintos_es_error(tmp_path: Path) -> None:
    otro = tmp_path / "otro.json"
    otro.write_text(json.dumps(json.loads(B.read_text()) | {"modo": "bucle"}))
    proc = forkserver.run(
        [
            sys.executable,
            "-m",
            "herramientas.cli",
            "evaluar",
            "--comparar",
            str(A),
            str(otro),
            "--salida",
            str(tmp_path / "c.json"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert "modos" in proc.stderr
