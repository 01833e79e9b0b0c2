"""Every package imports only what the README's Layout table allows it; the shipped product
never imports the test support: ``harness/``, ``tests/`` or ``bench/``.

Two views, because each misses what the other sees: the source of every product module (an
import inside a function runs only on some paths), and a real interpreter that imports every
module of the ``fichas`` command line (an import reached through another package). The table's
"may import" column is read from README.md itself, so the table and this check cannot drift.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).parents[2]
PRODUCTO = (
    "esquemas",
    "criterios",
    "migraciones",
    "versiones",
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


def _nombres_importados(archivo: Path) -> list[tuple[int, str]]:
    """As ``_importados``, with each name of a ``from`` import joined to its module
    (``from infra import logs`` is ``infra.logs``)."""
    nombres: list[tuple[int, str]] = []
    for nodo in ast.walk(ast.parse(archivo.read_text(encoding="utf-8"))):
        if isinstance(nodo, ast.Import):
            nombres += [(nodo.lineno, alias.name) for alias in nodo.names]
        elif isinstance(nodo, ast.ImportFrom) and nodo.level == 0 and nodo.module:
            nombres += [(nodo.lineno, f"{nodo.module}.{alias.name}") for alias in nodo.names]
    return nombres


def _permitidos() -> dict[str, set[str] | None]:
    """Per package of the Layout table, the modules it may import (None: any package).

    A cell lists modules in backticks (``infra.config`` allows that module and its
    submodules, ``grafo`` the whole package); "nothing of the project" is the empty set;
    "everything above except `harness`" and "the packages above" name the rows above it.
    """
    tabla = (REPO / "README.md").read_text(encoding="utf-8").split("## Layout", 1)[1]
    permitidos: dict[str, set[str] | None] = {}
    for fila in tabla.splitlines():
        celdas = [c.strip() for c in fila.strip().strip("|").split("|")]
        carpeta = re.fullmatch(r"`(\w+)/`", celdas[0]) if len(celdas) >= 4 else None
        if carpeta is None:
            continue
        paquete, celda = carpeta.group(1), celdas[2]
        nombrados = set(re.findall(r"`([\w.]+)`", celda))
        if celda.startswith("everything above except"):
            permitidos[paquete] = set(permitidos) - nombrados
        elif celda.startswith("the packages above"):
            permitidos[paquete] = set(permitidos)
        elif celda.startswith("every package"):
            permitidos[paquete] = None
        else:
            permitidos[paquete] = nombrados
    return permitidos


def _permitido(modulo: str, paquete: str, permitidos: set[str]) -> bool:
    """``modulo`` is ``paquete``'s own, not the project's, or one the table allows."""
    raiz = modulo.split(".")[0]
    proyecto = set(PRODUCTO) | APOYO_DE_PRUEBAS
    if raiz == paquete or raiz not in proyecto:
        return True
    return any(modulo == p or modulo.startswith(p + ".") for p in permitidos)


def test_la_tabla_nombra_cada_paquete() -> None:
    permitidos = _permitidos()
    assert set(PRODUCTO) | {"harness"} <= set(permitidos)
    assert permitidos["esquemas"] == set() and "harness" not in (permitidos["herramientas"] or ())


def test_cada_paquete_importa_solo_lo_que_la_tabla_permite() -> None:
    permitidos = _permitidos()
    infracciones = [
        f"{archivo.relative_to(REPO)}:{linea}: {modulo}"
        for paquete in (*PRODUCTO, "harness")
        for archivo in sorted((REPO / paquete).rglob("*.py"))
        for linea, modulo in _nombres_importados(archivo)
        if not _permitido(modulo, paquete, permitidos[paquete] or set())
    ]
    assert infracciones == []


def test_el_detector_ve_una_importacion_no_permitida() -> None:
    """A revision module importing the graph (what the table forbids) is caught."""
    assert not _permitido("grafo.checkpointer", "revision", _permitidos()["revision"] or set())
    assert _permitido("infra.config", "revision", _permitidos()["revision"] or set())


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
