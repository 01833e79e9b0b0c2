"""Every package imports only what the README's Layout table allows it, every subpackage only
what the table "Inside the packages" allows it; the shipped product never imports the test
support: ``harness/``, ``tests/`` or ``bench/``.

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


def _subpaquetes() -> dict[str, set[str]]:
    """Per subpackage of the README's table "Inside the packages" (``stream.commit``), the
    subpackages of its own package it may import ("nothing" is the empty set)."""
    tabla = (REPO / "README.md").read_text(encoding="utf-8").split("### Inside the packages", 1)
    filas: dict[str, set[str]] = {}
    for fila in tabla[1].split("\n## ", 1)[0].splitlines():
        celdas = [c.strip() for c in fila.strip().strip("|").split("|")]
        carpeta = re.fullmatch(r"`(\w+)/(\w+)/`", celdas[0]) if len(celdas) >= 3 else None
        if carpeta is not None:
            filas[f"{carpeta.group(1)}.{carpeta.group(2)}"] = set(
                re.findall(r"`([\w.]+)`", celdas[2])
            )
    return filas


def _infracciones_internas(subpaquete: str, permitidos: set[str], raiz: Path = REPO) -> list[str]:
    """Imports of ``subpaquete``'s files that reach its own package outside what it may import."""
    paquete = subpaquete.split(".")[0]
    carpeta = raiz / subpaquete.replace(".", "/")
    return [
        f"{archivo.relative_to(raiz)}:{linea}: {modulo}"
        for archivo in sorted(carpeta.rglob("*.py"))
        for linea, modulo in _nombres_importados(archivo)
        if modulo.split(".")[0] == paquete
        and not modulo.startswith(subpaquete + ".")
        and modulo != subpaquete
        and not any(modulo == p or modulo.startswith(p + ".") for p in permitidos)
    ]


def test_la_tabla_interna_nombra_cada_subpaquete() -> None:
    """Every folder of ``stream`` and ``revision`` is a row, and every row is a folder."""
    filas = set(_subpaquetes())
    carpetas = {
        f"{p}.{c.name}"
        for p in ("stream", "revision")
        for c in (REPO / p).iterdir()
        if (c / "__init__.py").exists()
    }
    assert carpetas <= filas
    assert [f for f in filas if not (REPO / f.replace(".", "/") / "__init__.py").exists()] == []


def test_cada_subpaquete_importa_solo_los_de_encima() -> None:
    infracciones = [
        linea
        for subpaquete, permitidos in _subpaquetes().items()
        for linea in _infracciones_internas(subpaquete, permitidos)
    ]
    assert infracciones == []


def test_el_detector_ve_un_subpaquete_que_importa_hacia_arriba(tmp_path: Path) -> None:
    """The commit path importing the flow (what the table forbids) is caught; its own modules
    and the sensor it may import are not."""
    permitidos = _subpaquetes()["stream.commit"]
    (tmp_path / "stream" / "commit").mkdir(parents=True)
    (tmp_path / "stream" / "commit" / "m.py").write_text(
        "from stream.commit.ledger import Ledger\n"
        "from stream.metricas.sensor import WorkerSensor\n"
        "def f():\n    from stream.flow.worker import Worker\n    return Worker\n"
    )
    fuera = _infracciones_internas("stream.commit", permitidos, tmp_path)
    assert fuera == ["stream/commit/m.py:4: stream.flow.worker.Worker"]
