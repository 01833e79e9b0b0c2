"""The wheel an image installs (`pip install .`) carries the data the code reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]


@pytest.mark.lento
def test_la_rueda_lleva_tablas_y_prompts(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(REPO)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("fichas-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in (
        "criterios/datos/criterios_v1.json",
        "criterios/datos/familias_v1.json",
        "criterios/datos/vocabulario_v1.json",
        "grafo/prompts/generador.md",
        "grafo/prompts/evaluador.md",
        "stream/flow/worker.py",
        "esquemas/evento.py",
        "infra/network.py",  # the command line's plumbing, outside harness/
        "estadistica/__init__.py",
        "harness/fake_llm/__main__.py",  # python -m harness.fake_llm from an install
    ):
        assert needed in names, needed
    assert not any(n.startswith("tests/") for n in names)
