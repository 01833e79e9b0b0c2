"""``python -m bench.perfil``: the worker's processor over a few fichas, and the py-spy summary.

The run's own check: every measured ficha ends as its class is scripted (3 attempts, then
published, for class 3), or it exits 1; ``_desvios`` is that check, and it is shown to catch a
ficha that ended otherwise. The CPU per ficha is reported, never asserted. The profiler options
need ``pyinstrument``, which the lock leaves out: without it they stop with a clear error.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from bench.perfil import _desvios
from esquemas.constantes import DESTINO_PUBLICADAS, DESTINO_REVISION
from grafo.ejecucion import Resultado
from tests.bench.conftest import ejecutar, salida


@pytest.mark.lento
def test_perfil_mide_fichas_que_acaban_como_su_clase() -> None:
    texto = salida(ejecutar("bench.perfil", "--n", "4", "--clase", "3", "--concurrencia", "2"))
    cpu = re.search(r"clase 3: ([\d.]+) ms CPU per ficha over 4", texto)
    assert cpu is not None and float(cpu.group(1)) > 0, texto


def _resultado(destino: str, intentos: int) -> Resultado:
    return Resultado(destino, {}, "A3-x-1", "e1", 1, intentos, False)


def test_el_chequeo_de_perfil_ve_una_ficha_que_acabo_de_otra_forma() -> None:
    assert _desvios([_resultado(DESTINO_PUBLICADAS, 3)], "3", 3) == []
    assert _desvios([_resultado(DESTINO_REVISION, 3)], "never", 3) == []
    assert _desvios([_resultado(DESTINO_REVISION, 2)], "3", 2) == []  # 2 attempts allowed
    (desvio,) = _desvios(
        [_resultado(DESTINO_PUBLICADAS, 3), _resultado(DESTINO_REVISION, 1)], "3", 3
    )
    assert desvio.startswith("A3-x-1: 1 attempts to fichas.revision_manual, expected 3")


def test_perfil_resume_una_muestra_de_py_spy(tmp_path: Path) -> None:
    muestra = tmp_path / "perfil_worker.txt"
    muestra.write_text(
        "process 1;main (x.py:1);procesar (grafo/ejecucion.py:9);dumps (pydantic/main.py:5) 30\n"
        "process 1;main (x.py:1);send (aiokafka/producer.py:3) 10\n"
        "process 1;_worker (concurrent/futures/thread.py:81) 500\n"  # an idle thread: dropped
        "not a sample line\n"
    )
    texto = salida(ejecutar("bench.perfil", "--pyspy", str(muestra)))
    filas = [f.split(maxsplit=2) for f in texto.splitlines()]
    assert filas == [
        ["75.0%", "30", "pydantic"],
        ["25.0%", "10", "aiokafka: fetch, produce, commit"],
    ]


@pytest.mark.skipif(
    importlib.util.find_spec("pyinstrument") is not None, reason="pyinstrument is installed"
)
def test_sin_pyinstrument_el_perfil_lo_dice_antes_de_medir() -> None:
    proc = ejecutar("bench.perfil", "--n", "4", "--texto")
    assert proc.returncode == 2 and proc.stdout == ""
    assert "--html and --texto need pyinstrument" in proc.stderr
