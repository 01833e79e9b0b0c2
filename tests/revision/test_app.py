"""The command line: safe defaults, and reviewers added only with a real password."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from harness.procesos import REPO
from revision.app import _parser
from revision.seguridad import LimiteLogin, clave_correcta, hash_clave


def test_escucha_solo_en_localhost_por_defecto():
    args = _parser().parse_args([])
    assert args.host == "127.0.0.1"
    assert args.cookie_segura is False


@pytest.mark.lento
def test_usuarios_rechaza_una_clave_corta_y_guarda_un_hash_argon2(tmp_path):
    env = {"FICHAS_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    corta = subprocess.run(
        [sys.executable, "-m", "herramientas.cli", "revisor", "usuarios", "ana"],
        input="corta\n", text=True, env=env, cwd=REPO, capture_output=True, timeout=60,
    )
    assert corta.returncode == 2
    buena = subprocess.run(
        [sys.executable, "-m", "herramientas.cli", "revisor", "usuarios", "ana"],
        input="una-clave-larga\n", text=True, env=env, cwd=REPO, capture_output=True, timeout=60,
    )
    assert buena.returncode == 0, buena.stderr
    from revision.almacen import Almacen

    async def leer() -> str | None:
        almacen = await Almacen.abrir(None, tmp_path)
        try:
            return await almacen.hash_de("ana")
        finally:
            await almacen.cerrar()

    guardado = asyncio.run(leer())
    assert guardado is not None and guardado.startswith("$argon2id$")
    assert clave_correcta(guardado, "una-clave-larga")
    assert not clave_correcta(guardado, "otra")
    assert not clave_correcta(None, "una-clave-larga")
    assert hash_clave("x") != hash_clave("x")  # salted


def test_limite_de_login_por_ventana():
    limite = LimiteLogin(maximo=2, ventana_s=60)
    limite.fallo("u")
    assert not limite.bloqueado("u")
    limite.fallo("u")
    assert limite.bloqueado("u") and not limite.bloqueado("otro")
    limite.exito("u")
    assert not limite.bloqueado("u")
