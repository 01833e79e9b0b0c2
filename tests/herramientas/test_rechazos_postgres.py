"""The commands people run against a PostgreSQL that refuses ``FICHAS_POSTGRES_DSN``.

A real server (the suite's), two refusals a deployment meets: a role that does not exist (a
typo in the DSN, a role not created yet) and a role that may log in but owns nothing (PostgreSQL
15 gives ``PUBLIC`` no ``CREATE`` on schema ``public``: the database's owner must be the DSN's
role, docs/despliegue.md). Each command says so in one line naming ``FICHAS_POSTGRES_DSN`` and
exits 2 (docs/operacion.md, "Exit codes"), never with a traceback, and never prints the
password.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg.conninfo import make_conninfo

from harness import forkserver
from harness.basedatos import base_nueva
from harness.fake_llm.client import FakeLLM
from harness.procesos import REPO

CLAVE = "secreto-que-no-sale"
# (command line, standard input): every command of the issue that opens a store.
ORDENES = {
    "migrar": (["migrar", "--espera", "10"], ""),
    "revisor usuarios": (["revisor", "usuarios", "ana"], "clave-de-ana-1\n"),
    "revisor usuarios --baja": (["revisor", "usuarios", "--baja", "ana"], ""),
    "informe --revision": (["informe", "--revision"], ""),
    "calibrar --desde-almacen": (
        ["calibrar", "--recalificar", "--desde-almacen", "--dry-run"],
        "",
    ),
}


@pytest.fixture(scope="module")
def base(postgres_dsn: str) -> Iterator[str]:
    """A database of its own, with a role that may log in and owns nothing."""
    with base_nueva(postgres_dsn, "fichas_rechazo") as dsn:
        rol = f"sin_permiso_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f"create role {rol} login password '{CLAVE}'")
        try:
            yield make_conninfo(dsn, user=rol, password=CLAVE)
        finally:
            with psycopg.connect(dsn, autocommit=True) as conn:
                conn.execute(f"drop role if exists {rol}")


def _fichas(
    args: list[str], entrada: str, dsn: str, datos: Path, llm: FakeLLM
) -> subprocess.CompletedProcess[str]:
    """``fichas ARGS`` with this DSN (and the fake LLM: calibrar asks it for the key before it
    opens the store), its output captured."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
    env |= {"FICHAS_POSTGRES_DSN": dsn, "FICHAS_DATA_DIR": str(datos)}
    env |= {"FICHAS_LLM_URL": llm.url, "FICHAS_LLM_MODELO": "fake"}
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", *args],
        env=env,
        cwd=REPO,
        input=entrada,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("orden", sorted(ORDENES))
@pytest.mark.parametrize("caso", ["rol_inexistente", "sin_privilegios"])
def test_postgres_rechaza_el_dsn_una_linea_y_salida_2(
    base: str, orden: str, caso: str, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    args, entrada = ORDENES[orden]
    rol = f"nadie_{uuid.uuid4().hex[:6]}"
    dsn = make_conninfo(base, user=rol) if caso == "rol_inexistente" else base
    salida = _fichas(args, entrada, dsn, tmp_path, fake_llm)
    lineas = [linea for linea in salida.stderr.splitlines() if linea.strip()]
    assert salida.returncode == 2, salida.stdout + salida.stderr
    assert "Traceback" not in salida.stderr and CLAVE not in salida.stdout + salida.stderr
    assert len(lineas) == 1, salida.stderr
    assert "refused FICHAS_POSTGRES_DSN" in lineas[0], lineas[0]
    esperado = f'role "{rol}" does not exist' if caso == "rol_inexistente" else "permission denied"
    assert esperado in lineas[0], lineas[0]
