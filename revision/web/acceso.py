"""Who gets into the reviewer web app: login, logout, sessions, CSRF and cookies over HTTP.

Routes: ``GET|POST /login``, ``POST /logout``; and ``exigir_sesion``, the middleware in front
of every other route: no page without a session (a GET goes to the login), no action without
a session and its CSRF token. Only ``PUBLICAS`` (login, static files, health, metrics, the
favicon) pass without one.

Apart from the pages (``revision.web.paginas``, ``revision.web.acciones``) because it changes with
the threat model (docs/revision.md, "Against an attacker"), not with the review. The primitives
(hashes, tokens, the signed login CSRF token, local redirects, the login limits) are the pure
functions of ``revision.web.seguridad``; the reviewers, their sessions and the signing key are
stored by ``revision.almacen.cuentas``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from aiohttp import web

from revision.almacen.cuentas import Cuentas
from revision.web.base import CTX, pagina, texto
from revision.web.seguridad import (
    COOKIE_CSRF_LOGIN,
    COOKIE_SESION,
    DURACION_SESION_S,
    INACTIVIDAD_S,
    Intentos,
    Red,
    clave_correcta,
    cliente,
    csrf_login,
    csrf_login_valido,
    hash_token,
    mismo_token,
    siguiente_local,
    token,
)

PUBLICAS = ("/login", "/estatico/", "/metrics", "/health/", "/favicon.ico")
SECRETO_CSRF = "csrf_login"  # name of the login form's signing key in the store
CSRF_LOGIN_S = 600  # how long the login form's CSRF cookie lives


@dataclass
class Acceso:
    """Who may get in, and the command's security options (``fichas revisor --cookie-segura
    --proxies --inactividad-min``)."""

    cuentas: Cuentas
    cookie_segura: bool = False
    proxies: tuple[Red, ...] = ()  # trusted proxies whose X-Forwarded-For is believed
    inactividad_s: float = INACTIVIDAD_S
    intentos: Intentos = field(default_factory=Intentos)  # the login limits, in this process
    secreto_csrf: bytes | None = None  # read from the store on first use (``_secreto_csrf``)


ACCESO: web.AppKey[Acceso] = web.AppKey("acceso", Acceso)


@web.middleware
async def exigir_sesion(request: web.Request, handler: Any) -> web.StreamResponse:
    """No page without a session (GET redirects to login), no action without session + CSRF.
    (The security headers are set by ``revision.web.base.cabeceras``, on every response this one
    raises too.)"""
    if not request.path.startswith(PUBLICAS):
        sesion = await _sesion(request.app[ACCESO], request)
        if sesion is None:
            if request.method == "GET":
                destino = "/login?" + urlencode({"siguiente": request.path_qs})
                raise web.HTTPFound(destino)
            raise web.HTTPForbidden(text="Se necesita iniciar sesión.")
        request["usuario"], request["csrf"] = sesion
        if request.method == "POST":
            form = await request.post()
            if not mismo_token(sesion[1], texto(form.get("csrf"))):
                raise web.HTTPForbidden(text="Formulario sin token CSRF válido.")
    return await handler(request)


async def _sesion(acceso: Acceso, request: web.Request) -> tuple[str, str] | None:
    """(reviewer, CSRF token) of the request's session cookie, if it names a live session."""
    valor = request.cookies.get(COOKIE_SESION)
    if not valor:
        return None
    return await acceso.cuentas.sesion(hash_token(valor), time.time(), acceso.inactividad_s)


async def login_get(request: web.Request) -> web.Response:
    """The login form, with a double-submit CSRF token signed by the server (kept if the
    browser already has a valid one, so two login pages open at once both work)."""
    siguiente = siguiente_local(request.query.get("siguiente"))
    return await _login_form(request, "", 200, siguiente)


async def login_post(request: web.Request) -> web.Response:
    """Check the password (rate-limited), open a session, go where the reviewer was going.

    The attempt is counted (``Intentos.reservar``: check and count with no ``await`` between)
    before the password check's first ``await``, so of a burst of concurrent guesses only as
    many as the limits allow reach argon2; the others see the earlier ones' attempts.
    """
    acceso = request.app[ACCESO]
    secreto = await _secreto_csrf(acceso)
    form = await request.post()
    if not csrf_login_valido(
        secreto, request.cookies.get(COOKIE_CSRF_LOGIN), texto(form.get("csrf"))
    ):
        raise web.HTTPForbidden(text="Formulario sin token CSRF válido.")
    nombre = texto(form.get("usuario")).strip()
    clave = texto(form.get("clave"))
    siguiente = siguiente_local(texto(form.get("siguiente")))
    ip = cliente(request.remote, request.headers.get("X-Forwarded-For"), acceso.proxies)
    if not acceso.intentos.reservar(nombre, ip):
        return await _login_form(
            request, "Demasiados intentos: espere unos minutos.", 429, siguiente
        )
    hash_ = await acceso.cuentas.hash_de(nombre)
    if not nombre or not await asyncio.to_thread(clave_correcta, hash_, clave):
        return await _login_form(request, "Usuario o contraseña incorrectos.", 401, siguiente)
    acceso.intentos.exito(nombre, ip)
    sesion, csrf = token(), token()
    ahora = time.time()
    await acceso.cuentas.abrir_sesion(
        hash_token(sesion), nombre, csrf, ahora, ahora + DURACION_SESION_S
    )
    respuesta = web.HTTPSeeOther(siguiente)
    _cookie(respuesta, acceso, COOKIE_SESION, sesion, DURACION_SESION_S)
    respuesta.del_cookie(COOKIE_CSRF_LOGIN, path="/")
    raise respuesta


async def logout(request: web.Request) -> web.Response:
    """Forget the session."""
    acceso = request.app[ACCESO]
    await acceso.cuentas.cerrar_sesion(hash_token(request.cookies.get(COOKIE_SESION, "")))
    respuesta = web.HTTPSeeOther("/login")
    respuesta.del_cookie(COOKIE_SESION, path="/")
    raise respuesta


async def _login_form(
    request: web.Request, error: str, status: int, siguiente: str
) -> web.Response:
    """The login page with a signed CSRF token: the browser's, if the server signed it."""
    acceso = request.app[ACCESO]
    secreto = await _secreto_csrf(acceso)
    csrf = request.cookies.get(COOKIE_CSRF_LOGIN, "")
    if not csrf_login_valido(secreto, csrf, csrf):
        csrf = csrf_login(secreto)
    respuesta = pagina(
        request.app[CTX],
        request,
        "login.html",
        status=status,
        csrf_login=csrf,
        error=error,
        siguiente=siguiente,
    )
    _cookie(respuesta, acceso, COOKIE_CSRF_LOGIN, csrf, CSRF_LOGIN_S)
    return respuesta


async def _secreto_csrf(acceso: Acceso) -> bytes:
    """The login CSRF key: read from the store once per process (every replica shares it)."""
    if acceso.secreto_csrf is None:
        acceso.secreto_csrf = await acceso.cuentas.secreto(SECRETO_CSRF)
    return acceso.secreto_csrf


def _cookie(
    respuesta: web.StreamResponse, acceso: Acceso, nombre: str, valor: str, max_age: int
) -> None:
    """An HttpOnly, SameSite=Strict cookie for the whole site; Secure with --cookie-segura."""
    respuesta.set_cookie(
        nombre,
        valor,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="Strict",
        secure=acceso.cookie_segura,
    )
