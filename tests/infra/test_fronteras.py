"""The shipped product never imports the test support: ``harness/``, ``tests/`` or ``bench/``.

Two views, because each misses what the other sees: the source of every product module (an
import inside a function runs only on some paths), and a real interpreter that imports every
module of the ``fichas`` command line (an import reached through another package).
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
PRODUCTO = (
    "esquemas",
    "criterios",
    "migraciones",
    "estadistica",
    "infra",
    "grafo",
    "stream",
    "puerta",
    "revision",
    "herramientas",
)
APOYO_DE_PRUEBAS = {"harness", "tests", "bench"}


def _importados(archivo: Path) -> list[tuple[int, str]]:
    """Every module an import statement of ``archivo`` names, with its line."""
    nombres: list[tuple[int, str]] = []
    for nodo in ast.walk(ast.parse(archivo.read_text(encoding="utf-8"))):
        if isinstance(nodo, ast.Import):
            nombres += [(nodo.lineno, alias.name) for alias in nodo.names]
        elif isinstance(nodo, ast.ImportFrom) and nodo.level == 0 and nodo.module:
            nombres.append((nodo.lineno, nodo.module))
    return nombres


def test_ningun_modulo_del_producto_importa_el_apoyo_de_pruebas() -> None:
    infracciones = [
        f"{archivo.relative_to(REPO)}:{linea}: {modulo}"
        for paquete in PRODUCTO
        for archivo in sorted((REPO / paquete).rglob("*.py"))
        for linea, modulo in _importados(archivo)
        if modulo.split(".")[0] in APOYO_DE_PRUEBAS
    ]
    assert infracciones == []


@pytest.mark.lento
def test_la_linea_de_ordenes_cargada_entera_no_trae_harness() -> None:
    """Import every module of ``herramientas`` in a fresh interpreter and look at what came in."""
    codigo = f"""
import importlib, json, pkgutil, sys
import herramientas
for m in pkgutil.walk_packages(herramientas.__path__, "herramientas."):
    if not m.name.endswith("__main__"):
        importlib.import_module(m.name)
print(json.dumps(sorted(n for n in sys.modules if n.split(".")[0] in {sorted(APOYO_DE_PRUEBAS)!r})))
"""
    salida = subprocess.run(
        [sys.executable, "-c", codigo], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert salida.returncode == 0, salida.stderr
    assert json.loads(salida.stdout.strip().splitlines()[-1]) == []


def test_el_detector_ve_una_importacion_dentro_de_una_funcion(tmp_path: Path) -> None:
    """The source view catches the lazy import the runtime view would miss."""
    archivo = tmp_path / "m.py"
    archivo.write_text("def f():\n    from harness.red import free_port\n    return free_port\n")
    assert _importados(archivo) == [(2, "harness.red")]
