"""The review app against an attacker (issue 24), over HTTP against the app as a real process.

Distinct client addresses are real ones: on Linux the whole of 127.0.0.0/8 is the loopback
interface, so a client that binds 127.0.0.11 before connecting to 127.0.0.1 is seen by the app
as 127.0.0.11, exactly as a person at another address would be. Each test uses its own
addresses and reviewers, so the login limits of one never reach another.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import sqlite3
import sys
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from selenium.webdriver.common.by import By

from harness import forkserver
from harness.kafka_broker import KafkaBroker
from harness.procesos import REPO
from harness.revisor import RevisorProcess, revisor_env
from harness.topicos import Topics
from infra.network import free_port
from tests.revision.conftest import CLAVE, esperar, topics_env

pytestmark = pytest.mark.kafka

EVIL = "evil.example"


@dataclass
class Respuesta:
    status: int
    headers: Any
    texto: str
    cookies: dict[str, str]


class Cliente:
    """HTTP from one source address, no redirects followed, cookies passed by hand."""

    def __init__(self, base: str, desde: str = "127.0.0.1") -> None:
        self.base = base
        self.desde = desde

    async def pedir(
        self,
        ruta: str,
        data: dict[str, str] | None = None,
        cookies: dict[str, str] | None = None,
        cabeceras: dict[str, str] | None = None,
    ) -> Respuesta:
        conector = aiohttp.TCPConnector(local_addr=(self.desde, 0), force_close=True)
        enviar = dict(cabeceras or {})
        if cookies:
            enviar["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        async with (
            aiohttp.ClientSession(
                connector=conector, cookie_jar=aiohttp.DummyCookieJar()
            ) as sesion,
            sesion.request(
                "POST" if data is not None else "GET",
                self.base + ruta,
                data=data,
                headers=enviar,
                allow_redirects=False,
                timeout=aiohttp.ClientTimeout(total=60),
            ) as resp,
        ):
            return Respuesta(
                resp.status,
                resp.headers,
                await resp.text(),
                {k: m.value for k, m in resp.cookies.items()},
            )

    async def formulario(self, cabeceras: dict[str, str] | None = None) -> tuple[str, str]:
        """(cookie, field) of the login form's CSRF token, as the server hands them out."""
        r = await self.pedir("/login", cabeceras=cabeceras)
        campo = re.search(r'name="csrf" value="([^"]+)"', r.texto)
        assert campo is not None, r.texto
        return r.cookies["fichas_csrf_login"], campo.group(1)

    async def entrar(
        self,
        usuario: str,
        clave: str,
        csrf: tuple[str, str] | None = None,
        siguiente: str | None = None,
        cabeceras: dict[str, str] | None = None,
    ) -> Respuesta:
        """POST /login with a CSRF pair (a fresh one from the server unless given)."""
        cookie, campo = csrf or await self.formulario(cabeceras)
        datos = {"csrf": campo, "usuario": usuario, "clave": clave}
        if siguiente is not None:
            datos["siguiente"] = siguiente
        return await self.pedir(
            "/login", data=datos, cookies={"fichas_csrf_login": cookie}, cabeceras=cabeceras
        )

    async def sesion(self, usuario: str, clave: str = CLAVE) -> dict[str, str]:
        """Log in; the session cookie."""
        r = await self.entrar(usuario, clave)
        assert r.status == 303, (r.status, r.texto[:300])
        return {"fichas_sesion": r.cookies["fichas_sesion"]}


def correr(corrutina: Any) -> Any:
    return asyncio.run(corrutina)


def usuarios(app: RevisorProcess, *argv: str, clave: str | None = None) -> int:
    """``fichas revisor usuarios ...`` through the real entry point; its exit code."""
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "revisor", "usuarios", *argv],
        input=(clave + "\n") if clave is not None else "",
        text=True,
        env=app.env,
        cwd=REPO,
        capture_output=True,
        timeout=60,
    ).returncode


def dentro(app: RevisorProcess, cookies: dict[str, str]) -> bool:
    """Whether the session cookie still opens the queue (200) rather than the login (302)."""
    r = correr(Cliente(app.url).pedir("/", cookies=cookies))
    assert r.status in (200, 302), r.status
    return r.status == 200


def base_de_datos(app: RevisorProcess) -> Path:
    return Path(app.env["FICHAS_DATA_DIR"]) / "revision.sqlite"


class RevisorConOpciones(RevisorProcess):
    """``fichas revisor`` with extra options of the command."""

    def __init__(self, opciones: list[str], *args: Any) -> None:
        super().__init__(*args)
        self.opciones = opciones

    def command(self) -> list[str]:
        return [*super().command(), *self.opciones]


@pytest.fixture(scope="module")
def tras_proxy(kafka: KafkaBroker, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """An app behind a trusted proxy at 127.0.0.1, with a 6 s idle timeout."""
    data_dir = tmp_path_factory.mktemp("revisor-proxy")
    env = revisor_env(kafka.bootstrap, topics_env(Topics()), data_dir)
    app = RevisorConOpciones(
        ["--proxies", "127.0.0.1", "--inactividad-min", "0.1"],
        env,
        free_port(),
        data_dir / "revisor.log",
    )
    app.add_user("ana", CLAVE)
    app.add_user("paco", CLAVE)
    app.start()
    app.wait_ready()
    yield app
    app.stop()


# ----------------------------------------------------------------------------- 1. bursts


def rafaga(app: RevisorProcess, desde: str, intentos: list[tuple[str, str]]) -> list[int]:
    """Every (user, password) posted at once from ``desde``, on 25 connections opened
    together, with one valid CSRF pair: the statuses, in order."""

    async def todas() -> list[int]:
        cliente = Cliente(app.url, desde)
        csrf = await cliente.formulario()
        respuestas = await asyncio.gather(*(cliente.entrar(u, c, csrf) for u, c in intentos))
        return [r.status for r in respuestas]

    return correr(todas())


def test_rafaga_concurrente_de_claves_malas_para_un_usuario(revisor):
    """25 wrong passwords for one reviewer, sent at once: 5 are checked, the rest get 429."""
    revisor.add_user("berta", CLAVE)
    estados = rafaga(revisor, "127.0.0.11", [("berta", f"mala-{i}") for i in range(25)])
    assert sorted(set(estados)) == [401, 429], estados
    assert estados.count(401) == 5, estados
    # Locked for that address only: berta, elsewhere, logs in.
    assert correr(Cliente(revisor.url, "127.0.0.13").entrar("berta", CLAVE)).status == 303


def test_rafaga_concurrente_de_nombres_desde_una_direccion(revisor):
    """25 names tried at once from one address: 20 are checked, the rest get 429."""
    estados = rafaga(revisor, "127.0.0.12", [(f"nadie-{i}", "mala") for i in range(25)])
    assert estados.count(401) == 20 and estados.count(429) == 5, estados


# ----------------------------------------------------------------------------- 2. redirects


@pytest.mark.parametrize(
    "siguiente",
    [
        f"/\t/{EVIL}/x",
        f"/\n/{EVIL}/x",
        f"/\r\n/{EVIL}/x",
        f"/\x0b/{EVIL}/x",
        f"\t//{EVIL}/x",
        f"//{EVIL}/x",
        f"/\\{EVIL}/x",
        f"https://{EVIL}/x",
        f"/ /{EVIL}/x",
    ],
)
def test_ningun_siguiente_lleva_fuera_del_sitio(revisor, siguiente):
    cliente = Cliente(revisor.url, "127.0.0.14")
    formulario = correr(cliente.pedir("/login?" + urllib.parse.urlencode({"siguiente": siguiente})))
    assert 'name="siguiente" value="/"' in formulario.texto
    r = correr(cliente.entrar("ana", CLAVE, siguiente=siguiente))
    assert r.status == 303
    destino = r.headers["Location"]
    assert destino == "/", destino
    partes = urllib.parse.urlsplit(destino)
    assert not partes.scheme and not partes.netloc


def test_siguiente_local_se_respeta(revisor):
    r = correr(Cliente(revisor.url, "127.0.0.14").entrar("ana", CLAVE, siguiente="/?motivo=x"))
    assert r.status == 303 and r.headers["Location"] == "/?motivo=x"


def test_en_chromium_el_tabulador_no_saca_del_sitio(revisor, navegador):
    """What a person meets: a link with ``siguiente=/%09/evil.example/x`` logs in and stays."""
    revisor.add_user("carla", CLAVE)
    navegador.get(revisor.url + f"/login?siguiente=/%09/{EVIL}/x")
    navegador.find_element(By.ID, "usuario").send_keys("carla")
    navegador.find_element(By.ID, "clave").send_keys(CLAVE)
    navegador.find_element(By.ID, "entrar").click()
    esperar(
        lambda: "/login" not in navegador.current_url,
        "the queue after login",
        explica=lambda: navegador.current_url,
    )
    assert urllib.parse.urlsplit(navegador.current_url).netloc == f"127.0.0.1:{revisor.port}"
    assert navegador.find_elements(By.CSS_SELECTOR, "form[action='/logout']")


# ----------------------------------------------------------------------------- 3. tokens


def test_la_base_guarda_el_hash_del_token_no_el_token(revisor):
    revisor.add_user("dani", CLAVE)
    cookie = correr(Cliente(revisor.url, "127.0.0.15").sesion("dani"))["fichas_sesion"]
    with sqlite3.connect(base_de_datos(revisor)) as conn:
        filas = conn.execute("select * from revision_sesiones").fetchall()
    conn.close()
    valores = {str(v) for fila in filas for v in fila}
    assert not any(cookie in v for v in valores), "the token is stored in plain text"
    assert hashlib.sha256(cookie.encode()).hexdigest() in valores


# ----------------------------------------------------------------------------- 4. sessions


def test_cambiar_la_clave_cierra_las_sesiones(revisor):
    revisor.add_user("eva", CLAVE)
    sesion = correr(Cliente(revisor.url, "127.0.0.16").sesion("eva"))
    assert dentro(revisor, sesion)
    assert usuarios(revisor, "eva", clave="otra-clave-larga") == 0
    assert not dentro(revisor, sesion)
    assert correr(Cliente(revisor.url, "127.0.0.16").entrar("eva", CLAVE)).status == 401
    assert dentro(
        revisor, correr(Cliente(revisor.url, "127.0.0.16").sesion("eva", "otra-clave-larga"))
    )


def test_un_login_nuevo_cierra_la_sesion_anterior(revisor):
    revisor.add_user("fede", CLAVE)
    primera = correr(Cliente(revisor.url, "127.0.0.17").sesion("fede"))
    segunda = correr(Cliente(revisor.url, "127.0.0.18").sesion("fede"))
    assert dentro(revisor, segunda)
    assert not dentro(revisor, primera)


def test_baja_de_un_revisor_cierra_sus_sesiones_y_su_login(revisor):
    revisor.add_user("gema", CLAVE)
    sesion = correr(Cliente(revisor.url, "127.0.0.19").sesion("gema"))
    assert dentro(revisor, sesion)
    assert usuarios(revisor, "--baja", "gema") == 0
    assert not dentro(revisor, sesion)
    assert correr(Cliente(revisor.url, "127.0.0.19").entrar("gema", CLAVE)).status == 401
    assert usuarios(revisor, "--baja", "nadie-con-ese-nombre") == 1
    # Adding her again (a new password) enables her.
    assert usuarios(revisor, "gema", clave=CLAVE) == 0
    assert dentro(revisor, correr(Cliente(revisor.url, "127.0.0.19").sesion("gema")))


def test_la_sesion_de_un_usuario_que_ya_no_existe_no_vale(revisor):
    revisor.add_user("hugo", CLAVE)
    sesion = correr(Cliente(revisor.url, "127.0.0.20").sesion("hugo"))
    assert dentro(revisor, sesion)
    with sqlite3.connect(base_de_datos(revisor)) as conn:
        conn.execute("delete from revision_usuarios where nombre = 'hugo'")
    conn.close()
    assert not dentro(revisor, sesion)


def test_la_sesion_caduca_por_inactividad(tras_proxy):
    """Idle timeout 6 s: used every 3.5 s it lives past 6 s; left alone 7 s it ends."""
    cliente = Cliente(tras_proxy.url)
    xff = {"X-Forwarded-For": "10.9.0.5"}
    sesion = correr(cliente.entrar("paco", CLAVE, cabeceras=xff)).cookies
    sesion = {"fichas_sesion": sesion["fichas_sesion"]}
    for _ in range(2):
        time.sleep(3.5)
        assert dentro(tras_proxy, sesion)
    time.sleep(7)
    assert not dentro(tras_proxy, sesion)


# ----------------------------------------------------------------------------- 5. limits


def test_nadie_bloquea_a_un_revisor_con_su_nombre(revisor):
    """Five wrong passwords for ivan from an attacker's address lock that address out for
    ivan, not ivan himself."""
    revisor.add_user("ivan", CLAVE)
    atacante = Cliente(revisor.url, "127.0.0.21")
    estados = [correr(atacante.entrar("ivan", "mala")).status for _ in range(6)]
    assert estados == [401] * 5 + [429]
    assert correr(atacante.entrar("ivan", CLAVE)).status == 429
    assert correr(Cliente(revisor.url, "127.0.0.22").entrar("ivan", CLAVE)).status == 303


def test_desde_muchas_direcciones_solo_pasa_una_direccion_conocida(revisor):
    """20 failures for juan from four addresses: from a new address even the right password
    waits; from where juan logged in before, it passes."""
    revisor.add_user("juan", CLAVE)
    assert correr(Cliente(revisor.url, "127.0.0.30").entrar("juan", CLAVE)).status == 303
    for n in range(31, 35):
        cliente = Cliente(revisor.url, f"127.0.0.{n}")
        assert [correr(cliente.entrar("juan", "mala")).status for _ in range(5)] == [401] * 5
    assert correr(Cliente(revisor.url, "127.0.0.35").entrar("juan", CLAVE)).status == 429
    assert correr(Cliente(revisor.url, "127.0.0.30").entrar("juan", CLAVE)).status == 303


def test_x_forwarded_for_de_un_proxy_de_confianza(tras_proxy):
    """Behind the proxy, one client's 20 failures lock that client, not everyone behind it;
    a client cannot escape by writing its own X-Forwarded-For entries."""
    proxy = Cliente(tras_proxy.url, "127.0.0.1")
    uno = {"X-Forwarded-For": "10.9.0.1"}
    estados = [correr(proxy.entrar(f"x{i}", "mala", cabeceras=uno)).status for i in range(21)]
    assert estados == [401] * 20 + [429]
    otro = {"X-Forwarded-For": "10.9.0.2"}
    assert correr(proxy.entrar("ana", CLAVE, cabeceras=otro)).status == 303
    falso = {"X-Forwarded-For": "10.9.0.3, 10.9.0.1"}  # the proxy appended the real one
    assert correr(proxy.entrar("ana", CLAVE, cabeceras=falso)).status == 429


def test_x_forwarded_for_sin_proxy_de_confianza_no_cuenta(revisor):
    cliente = Cliente(revisor.url, "127.0.0.40")
    estados = [
        correr(cliente.entrar(f"y{i}", "mala", cabeceras={"X-Forwarded-For": f"10.8.0.{i}"})).status
        for i in range(21)
    ]
    assert estados == [401] * 20 + [429]


# ----------------------------------------------------------------------------- 6. headers


def test_cabeceras_de_seguridad_en_toda_respuesta(revisor):
    revisor.add_user("kike", CLAVE)
    cliente = Cliente(revisor.url, "127.0.0.41")
    sesion = correr(cliente.sesion("kike"))
    respuestas = {
        "302 sin sesión": correr(cliente.pedir("/")),
        "303 del login": correr(cliente.entrar("kike", CLAVE)),
        "403 sin sesión": correr(cliente.pedir("/item/aprobar", data={"event_id": "x"})),
        "403 sin csrf": correr(cliente.pedir("/login", data={"usuario": "kike"})),
        "404 de la app": correr(cliente.pedir("/item?id=nada", cookies=sesion)),
        "404 sin ruta": correr(cliente.pedir("/no-existe", cookies=sesion)),
        "200": correr(cliente.pedir("/", cookies=sesion)),
        "estático": correr(cliente.pedir("/estatico/estilo.css")),
    }
    assert respuestas["estático"].status == 200
    for que, r in respuestas.items():
        assert "frame-ancestors 'none'" in r.headers.get("Content-Security-Policy", ""), que
        assert r.headers.get("X-Frame-Options") == "DENY", que
        assert r.headers.get("X-Content-Type-Options") == "nosniff", que
        assert r.headers.get("Referrer-Policy") == "same-origin", que


# ----------------------------------------------------------------------------- 7. aviso


def test_aviso_inventado_no_se_muestra(revisor):
    revisor.add_user("lola", CLAVE)
    cliente = Cliente(revisor.url, "127.0.0.42")
    sesion = correr(cliente.sesion("lola"))
    texto = "Su cuenta está bloqueada: llame al 555"
    for consulta in (
        {"aviso": texto},
        {"aviso": "enviada", "decidido": "no-existe"},
        {"aviso": texto, "decidido": "no-existe"},
    ):
        r = correr(cliente.pedir("/?" + urllib.parse.urlencode(consulta), cookies=sesion))
        assert r.status == 200
        assert "555" not in r.texto and 'class="aviso"' not in r.texto, consulta


# ----------------------------------------------------------------------------- 8. login CSRF


def test_un_par_csrf_elegido_por_el_cliente_no_vale(revisor):
    revisor.add_user("mario", CLAVE)
    cliente = Cliente(revisor.url, "127.0.0.43")
    for elegido in ("elegido-por-mi", "abc.def", "abc." + "0" * 64):
        r = correr(cliente.entrar("mario", CLAVE, csrf=(elegido, elegido)))
        assert r.status == 403, elegido
    cookie, campo = correr(cliente.formulario())
    assert correr(cliente.entrar("mario", CLAVE, csrf=(cookie, cookie + "x"))).status == 403
    assert correr(cliente.entrar("mario", CLAVE, csrf=(cookie, campo))).status == 303
