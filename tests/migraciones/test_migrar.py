"""``fichas migrar``: eight at once on a new database leave one schema and all exit 0.

The eight processes import their modules, wait for a file and are released together
(``harness.procesos``), so they reach the database within milliseconds of each other. With the
lock removed (``cerrojo_postgres`` yielding without taking it, a local edit reverted since),
7 of the 8 exited 1 in each of 5 rounds of 5 (``UniqueViolation`` on ``checkpoint_migrations``,
on ``fichas_migraciones`` or on ``pg_type``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness import forkserver
from harness.basedatos import base_nueva
from harness.procesos import LANZADOR, REPO, soltar
from revision.almacen.migrations import ESQUEMA as ESQUEMA_REVISION

VECES = 8


def _ocho_a_la_vez(env: dict[str, str], tmp: Path) -> list[tuple[int, str]]:
    """Eight ``fichas migrar`` released together; (exit code, output) of each."""
    barrera = tmp / "ya"
    procesos = [
        subprocess.Popen(
            [sys.executable, "-c", LANZADOR, str(barrera), "migrar"],
            env=env,
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(VECES)
    ]
    soltar(barrera, VECES)
    return [(p.wait(timeout=300), p.stdout.read() if p.stdout else "") for p in procesos]


def _comprobar(resultados: list[tuple[int, str]], dialecto: str) -> None:
    """All exit 0; exactly one migrated each store, the others found it current."""
    assert all(rc == 0 for rc, _ in resultados), [o for rc, o in resultados if rc]
    for almacen, ultima in (("versiones", 1), ("revision", ESQUEMA_REVISION.ultima)):
        lineas = [
            linea
            for _, salida in resultados
            for linea in salida.splitlines()
            if linea.startswith(f"{almacen} ({dialecto})")
        ]
        assert len(lineas) == VECES
        assert sum(f"none -> {ultima} (migrated)" in linea for linea in lineas) == 1
        assert sum(f"{ultima} -> {ultima} (up to date)" in linea for linea in lineas) == VECES - 1


@pytest.mark.postgres
def test_ocho_migrar_a_la_vez_en_postgres(postgres_dsn, tmp_path):
    with base_nueva(postgres_dsn, prefijo="fichas_migrar") as dsn:
        env = {**os.environ, "FICHAS_POSTGRES_DSN": dsn, "FICHAS_DATA_DIR": str(tmp_path)}
        _comprobar(_ocho_a_la_vez(env, tmp_path), "postgres")


@pytest.mark.lento
def test_ocho_migrar_a_la_vez_en_sqlite(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "FICHAS_POSTGRES_DSN"}
    env["FICHAS_DATA_DIR"] = str(tmp_path / "datos")
    _comprobar(_ocho_a_la_vez(env, tmp_path), "sqlite")


def test_la_ayuda_dice_cuando_ejecutarlo():
    ayuda = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "migrar", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ayuda.returncode == 0
    assert "When to run it" in ayuda.stdout
    assert "pg_advisory_lock(727274)" in ayuda.stdout
