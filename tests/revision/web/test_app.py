"""The command line: safe defaults, and reviewers added only with a real password."""

from __future__ import annotations

import asyncio
import hashlib
import sys

import pytest

from harness import forkserver
from harness.procesos import REPO
from revision.web.app import _parser
from revision.web.seguridad import (
    Intentos,
    LimiteLogin,
    clave_correcta,
    cliente,
    csrf_login,
    csrf_login_valido,
    hash_clave,
    hash_token,
    redes,
    siguiente_local,
    token,
)


def test_escucha_solo_en_localhost_por_defecto():
    args = _parser().parse_args([])
    assert args.host == "127.0.0.1"
    assert args.cookie_segura is False


@pytest.mark.lento
def test_usuarios_rechaza_una_clave_corta_y_guarda_un_hash_argon2(tmp_path):
    env = {"FICHAS_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin"}
    corta = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "revisor", "usuarios", "ana"],
        input="corta\n",
        text=True,
        env=env,
        cwd=REPO,
        capture_output=True,
        timeout=60,
    )
    assert corta.returncode == 2
    buena = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "revisor", "usuarios", "ana"],
        input="una-clave-larga\n",
        text=True,
        env=env,
        cwd=REPO,
        capture_output=True,
        timeout=60,
    )
    assert buena.returncode == 0, buena.stderr
    from revision.almacen.cuentas import Cuentas

    async def leer() -> str | None:
        cuentas = await Cuentas.abrir(None, tmp_path)
        try:
            return await cuentas.hash_de("ana")
        finally:
            await cuentas.cerrar()

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


def test_opciones_de_seguridad_del_comando():
    args = _parser().parse_args([])
    assert args.proxies == () and args.inactividad_min == 30
    args = _parser().parse_args(["--proxies", "10.0.0.0/8, 192.168.1.7", "--inactividad-min", "5"])
    assert [str(r) for r in args.proxies] == ["10.0.0.0/8", "192.168.1.7/32"]
    assert args.inactividad_min == 5
    with pytest.raises(SystemExit):
        _parser().parse_args(["--proxies", "10.0.0.300"])


@pytest.mark.parametrize(
    ("valor", "esperado"),
    [
        ("/item?id=ev-1", "/item?id=ev-1"),
        ("/?motivo=rechazada&familia=zapatillas", "/?motivo=rechazada&familia=zapatillas"),
        ("/\t/evil.example/x", "/"),
        ("/\n/evil.example/x", "/"),
        ("/\r/evil.example/x", "/"),
        ("/\x00/evil.example", "/"),
        ("/\x7f/evil.example", "/"),
        ("/\u2028/evil.example", "/"),
        ("/ /evil.example", "/"),
        ("//evil.example", "/"),
        ("/\\evil.example", "/"),
        ("https://evil.example/", "/"),
        ("javascript:alert(1)", "/"),
        ("evil.example", "/"),
        ("", "/"),
        (None, "/"),
    ],
)
def test_siguiente_solo_un_camino_del_sitio(valor, esperado):
    assert siguiente_local(valor) == esperado


def test_cliente_tras_proxies_de_confianza():
    proxies = redes("10.0.0.0/8,127.0.0.1")
    # No trusted proxy configured, or a peer that is not one: the header proves nothing.
    assert cliente("203.0.113.9", "198.51.100.1", ()) == "203.0.113.9"
    assert cliente("203.0.113.9", "198.51.100.1", proxies) == "203.0.113.9"
    # From a trusted proxy: the right-most entry that is not a trusted proxy.
    assert cliente("127.0.0.1", "198.51.100.1", proxies) == "198.51.100.1"
    assert cliente("127.0.0.1", "1.2.3.4, 198.51.100.1, 10.1.2.3", proxies) == "198.51.100.1"
    # Every hop a trusted proxy, no header, or garbage where the client should be.
    assert cliente("127.0.0.1", "10.1.2.3", proxies) == "10.1.2.3"
    assert cliente("127.0.0.1", None, proxies) == "127.0.0.1"
    assert cliente("127.0.0.1", "no-es-una-ip", proxies) == "127.0.0.1"


def test_csrf_del_login_firmado_por_el_servidor():
    secreto = b"s" * 32
    bueno = csrf_login(secreto)
    assert csrf_login_valido(secreto, bueno, bueno)
    assert not csrf_login_valido(secreto, bueno, bueno + "x")
    assert not csrf_login_valido(b"otro" * 8, bueno, bueno)
    for elegido in ("elegido", "a.b", "a." + "0" * 64, ".", ""):
        assert not csrf_login_valido(secreto, elegido, elegido)


def test_intentos_se_cuentan_antes_de_comprobar_la_clave():
    intentos = Intentos(por_par=3, por_ip=5, por_usuario=4, ventana_s=60)
    # Three attempts reserved back to back (as a burst would) and the fourth refused.
    assert [intentos.reservar("ana", "1.1.1.1") for _ in range(4)] == [True] * 3 + [False]
    # Another address for ana is not locked by that one.
    assert intentos.reservar("ana", "2.2.2.2")
    intentos.exito("ana", "2.2.2.2")  # ana logs in there: a known address
    # Failures for ana from elsewhere use up her per-user limit ...
    for ip in ("3.3.3.3", "4.4.4.4"):
        assert intentos.reservar("ana", ip) and intentos.reservar("ana", ip)
    assert not intentos.reservar("ana", "5.5.5.5")
    # ... but her known address still gets through.
    assert intentos.reservar("ana", "2.2.2.2")
    # One address, many names: stopped at its own limit.
    assert [intentos.reservar(f"u{i}", "6.6.6.6") for i in range(6)] == [True] * 5 + [False]


def test_hash_del_token_de_sesion():
    valor = token()
    assert hash_token(valor) == hashlib.sha256(valor.encode()).hexdigest() != valor
