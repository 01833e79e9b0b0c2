"""The reviewer web app: server-rendered pages (aiohttp + Jinja2, autoescaped), plain forms.

Routes (every page and action needs a session, except login, static files, health, metrics):
- ``GET /``: the queue of open items, oldest first, filters by family, reason and criterion;
- ``GET /item?id=EVENT_ID``: one item, origin against ficha, attempts, code checks, actions;
- ``POST /item/aprobar``: approve, as is or edited (the code checks run first);
- ``POST /item/rechazar``: reject with criteria and a note;
- ``POST /item/muestra``: a sample item is correct, or wrong with the failing criteria;
- ``GET /puertas``, ``POST /puertas/abrir``: the gates and their shadow-mode evidence
  (``revision.puertas``);
- ``GET|POST /login``, ``POST /logout``; ``/metrics``, ``/health/live``, ``/health/ready``.

Why an approval is safe to click twice, from two browsers, or across a crash: see
``revision.almacen`` (one decision per item, outbox) and ``revision.flujo`` (the sender).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import jinja2
from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from criterios import CRITERIOS_VERSION, atributos_obligatorios, cargar_criterios
from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_CORRECTA,
    DECISION_EDITADA,
    DECISION_INCORRECTA,
    DECISION_RECHAZADA,
    MOTIVO_MUESTRA,
    MOTIVO_RECHAZADA,
    MOTIVO_SALIDA_INVALIDA,
    MOTIVO_SIN_GARANTIA,
    TIPO_MUESTRA,
)
from esquemas.puerta import ClavePuerta
from infra.fault_points import REVISOR_CAIDA_TRAS_DECISION, fault_point
from revision import decisiones as dec
from revision.almacen import ABIERTA, Almacen, Cierre, Item
from revision.apertura import Apertura
from revision.flujo import Flujo
from revision.metricas import MetricasRevision
from revision.retenidas import en_muestra
from revision.seguridad import (
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
from revision.vigilancia import Vigilancia
from stream.versiones import VersionStore

log = logging.getLogger(__name__)

PUBLICAS = ("/login", "/estatico/", "/metrics", "/health/", "/favicon.ico")
MAX_NOTA = 2000
ENVIO_S = 20.0  # how long a reviewer waits for the broker's acknowledgement
MOTIVOS = (MOTIVO_RECHAZADA, MOTIVO_SALIDA_INVALIDA, MOTIVO_SIN_GARANTIA, MOTIVO_MUESTRA)
CABECERAS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}
# What the banner may say after a decision: the app puts a code in the URL, never text, so a
# crafted link cannot put words in the app's mouth. The item's SKU and version come from the
# store (``decidido=EVENT_ID``), and the verb from the decision stored for it.
AVISOS = {
    "enviada": "",
    "pendiente": " (guardada; se enviará en cuanto Kafka responda)",
}
VERBOS = {
    # The worker that owns the SKU publishes an approval (docs/revision.md, "Un solo escritor
    # por SKU"), unless a newer version got there first: the app does not say "publicada".
    DECISION_APROBADA: "aprobada",
    DECISION_EDITADA: "editada y aprobada",
    DECISION_RECHAZADA: "rechazada",
    DECISION_CORRECTA: "correcta",
    DECISION_INCORRECTA: "incorrecta",
}
SECRETO_CSRF = "csrf_login"  # name of the login form's signing key in the store


@dataclass
class Contexto:
    """What every handler needs."""

    almacen: Almacen
    flujo: Flujo
    versiones: VersionStore
    metricas: MetricasRevision
    modelo: str
    cookie_segura: bool = False
    vigilancia: Vigilancia | None = None
    muestra_proporcion: float = 0.0  # the held-back sample's share (revision/retenidas.py)
    intentos: Intentos | None = None
    proxies: tuple[Red, ...] = ()  # trusted proxies whose X-Forwarded-For is believed
    inactividad_s: float = INACTIVIDAD_S
    secreto_csrf: bytes | None = None  # read from the store on first use (``_secreto_csrf``)
    apertura: Apertura | None = None  # the certifier that opens gates (revision/apertura.py)

    def __post_init__(self) -> None:
        if self.intentos is None:
            self.intentos = Intentos()
        self.jinja = jinja2.Environment(
            loader=jinja2.PackageLoader("revision", "plantillas"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.jinja.filters["edad"] = edad
        self.jinja.filters["puntuacion"] = puntuacion
        self.criterios = [(c.id, c.regla) for c in cargar_criterios()]
        self.ids_criterios = {c for c, _ in self.criterios}


CTX: web.AppKey[Contexto] = web.AppKey("contexto", Contexto)
# Background tasks a request started and does not wait for (the event loop keeps only weak
# references to tasks).
_TAREAS: set[asyncio.Task[None]] = set()


def edad(segundos: float) -> str:
    """``3 min``, ``2 h``, ``4 d``: how long an item has waited."""
    if segundos < 3600:
        return f"{max(0, int(segundos // 60))} min"
    if segundos < 86400:
        return f"{int(segundos // 3600)} h"
    return f"{int(segundos // 86400)} d"


def puntuacion(valor: Any) -> str:
    """``0.873``, or ``sin puntuación`` when the evaluator gave none (the server returned no
    usable logprobs, or the record predates contract v1.2): absent counts as not approved."""
    if isinstance(valor, int | float) and not isinstance(valor, bool):
        return f"puntuación {valor:.3f}"
    return "sin puntuación"


def clave_puerta(datos: dict[str, Any]) -> str:
    """The 16-hex id of the gate's key on a published ficha, as the metrics label it; empty when
    the ficha carries no gate or an unreadable one."""
    puerta = datos.get("puerta")
    if not isinstance(puerta, dict):
        return ""
    try:
        return ClavePuerta.model_validate(puerta.get("clave")).texto()
    except ValueError:
        return ""


# ----------------------------------------------------------------------------- middlewares


@web.middleware
async def seguridad(request: web.Request, handler: Any) -> web.StreamResponse:
    """No page without a session (GET redirects to login), no action without session + CSRF.
    (The security headers are set by ``cabeceras``, on every response this one raises too.)"""
    ctx = request.app[CTX]
    publico = request.path.startswith(PUBLICAS)
    if not publico:
        sesion = await _sesion(ctx, request)
        if sesion is None:
            if request.method == "GET":
                destino = "/login?" + urlencode({"siguiente": request.path_qs})
                raise web.HTTPFound(destino)
            raise web.HTTPForbidden(text="Se necesita iniciar sesión.")
        request["usuario"], request["csrf"] = sesion
        if request.method == "POST":
            form = await request.post()
            if not mismo_token(sesion[1], _texto(form.get("csrf"))):
                raise web.HTTPForbidden(text="Formulario sin token CSRF válido.")
    return await handler(request)


async def cabeceras(request: web.Request, respuesta: web.StreamResponse) -> None:
    """The security headers, in one place for every response: pages, redirects, errors (403,
    404, 429), static files. An ``on_response_prepare`` hook runs for all of them, including
    the ``HTTPException``s handlers and middlewares raise, which a middleware would miss."""
    for clave, valor in CABECERAS.items():
        respuesta.headers.setdefault(clave, valor)
    if not request.path.startswith("/estatico/"):
        respuesta.headers.setdefault("Cache-Control", "no-store")


async def _sesion(ctx: Contexto, request: web.Request) -> tuple[str, str] | None:
    valor = request.cookies.get(COOKIE_SESION)
    if not valor:
        return None
    return await ctx.almacen.sesion(hash_token(valor), time.time(), ctx.inactividad_s)


def _texto(valor: Any) -> str:
    return valor if isinstance(valor, str) else ""


def _pagina(
    ctx: Contexto, request: web.Request, plantilla: str, status: int = 200, **datos: Any
) -> web.Response:
    html = ctx.jinja.get_template(plantilla).render(
        usuario=request.get("usuario"), csrf=request.get("csrf", ""), **datos
    )
    return web.Response(text=html, content_type="text/html", status=status)


# ----------------------------------------------------------------------------- login


async def login_get(request: web.Request) -> web.Response:
    """The login form, with a double-submit CSRF token signed by the server (kept if the
    browser already has a valid one, so two login pages open at once both work)."""
    ctx = request.app[CTX]
    return await _login_form(ctx, request, "", 200, siguiente_local(request.query.get("siguiente")))


async def login_post(request: web.Request) -> web.Response:
    """Check the password (rate-limited), open a session, go where the reviewer was going.

    The attempt is counted (``Intentos.reservar``: check and count with no ``await`` between)
    before the password check's first ``await``, so of a burst of concurrent guesses only as
    many as the limits allow reach argon2; the others see the earlier ones' attempts.
    """
    ctx = request.app[CTX]
    assert ctx.intentos is not None
    secreto = await _secreto_csrf(ctx)
    form = await request.post()
    if not csrf_login_valido(
        secreto, request.cookies.get(COOKIE_CSRF_LOGIN), _texto(form.get("csrf"))
    ):
        raise web.HTTPForbidden(text="Formulario sin token CSRF válido.")
    nombre = _texto(form.get("usuario")).strip()
    clave = _texto(form.get("clave"))
    siguiente = siguiente_local(_texto(form.get("siguiente")))
    ip = cliente(request.remote, request.headers.get("X-Forwarded-For"), ctx.proxies)
    if not ctx.intentos.reservar(nombre, ip):
        return await _login_form(
            ctx, request, "Demasiados intentos: espere unos minutos.", 429, siguiente
        )
    hash_ = await ctx.almacen.hash_de(nombre)
    if not nombre or not await asyncio.to_thread(clave_correcta, hash_, clave):
        return await _login_form(ctx, request, "Usuario o contraseña incorrectos.", 401, siguiente)
    ctx.intentos.exito(nombre, ip)
    sesion, csrf = token(), token()
    ahora = time.time()
    await ctx.almacen.abrir_sesion(
        hash_token(sesion), nombre, csrf, ahora, ahora + DURACION_SESION_S
    )
    respuesta = web.HTTPSeeOther(siguiente)
    _cookie(respuesta, ctx, COOKIE_SESION, sesion, DURACION_SESION_S)
    respuesta.del_cookie(COOKIE_CSRF_LOGIN, path="/")
    raise respuesta


async def _login_form(
    ctx: Contexto, request: web.Request, error: str, status: int, siguiente: str
) -> web.Response:
    """The login page with a signed CSRF token: the browser's, if the server signed it."""
    secreto = await _secreto_csrf(ctx)
    csrf = request.cookies.get(COOKIE_CSRF_LOGIN, "")
    if not csrf_login_valido(secreto, csrf, csrf):
        csrf = csrf_login(secreto)
    respuesta = _pagina(
        ctx, request, "login.html", status=status, csrf_login=csrf, error=error, siguiente=siguiente
    )
    _cookie(respuesta, ctx, COOKIE_CSRF_LOGIN, csrf, 600)
    return respuesta


async def _secreto_csrf(ctx: Contexto) -> bytes:
    """The login CSRF key: read from the store once per process (every replica shares it)."""
    if ctx.secreto_csrf is None:
        ctx.secreto_csrf = await ctx.almacen.secreto(SECRETO_CSRF)
    return ctx.secreto_csrf


def _cookie(
    respuesta: web.StreamResponse, ctx: Contexto, nombre: str, valor: str, max_age: int
) -> None:
    respuesta.set_cookie(
        nombre,
        valor,
        max_age=max_age,
        path="/",
        httponly=True,
        samesite="Strict",
        secure=ctx.cookie_segura,
    )


async def logout(request: web.Request) -> web.Response:
    """Forget the session."""
    ctx = request.app[CTX]
    await ctx.almacen.cerrar_sesion(hash_token(request.cookies.get(COOKIE_SESION, "")))
    respuesta = web.HTTPSeeOther("/login")
    respuesta.del_cookie(COOKIE_SESION, path="/")
    raise respuesta


# ----------------------------------------------------------------------------- the queue


async def cola(request: web.Request) -> web.Response:
    """Open items, oldest first, with filters and the count of each filter value."""
    ctx = request.app[CTX]
    abiertos = await ctx.almacen.abiertos()
    filtros = {k: request.query.get(k, "") for k in ("familia", "motivo", "criterio")}
    visibles = [i for i in abiertos if _pasa(i, filtros)]
    ahora = time.time()
    filas = [
        {
            "item": i,
            "edad": ahora - i.recibido_en,
            "titulo": _titulo(i),
            "url": "/item?" + urlencode({"id": i.event_id}),
            "muestra_retenidas": _muestra_retenidas(ctx, i),
        }
        for i in visibles
    ]
    cuentas = {
        "familia": _contar(abiertos, lambda i: [i.familia]),
        "motivo": _contar(abiertos, lambda i: [i.motivo]),
        "criterio": _contar(abiertos, lambda i: i.criterios),
    }
    return _pagina(
        ctx,
        request,
        "cola.html",
        filas=filas,
        filtros=filtros,
        cuentas=cuentas,
        total=len(abiertos),
        aviso=await _aviso(ctx, request),
        enlace=lambda **cambio: (
            "/?" + urlencode({k: v for k, v in {**filtros, **cambio}.items() if v})
        ),
    )


async def _aviso(ctx: Contexto, request: web.Request) -> str:
    """The banner after a decision, built only from what the app knows: ``aviso`` must be a
    code of ``AVISOS`` and ``decidido`` an item with a stored decision; anything else shows
    nothing."""
    sufijo = AVISOS.get(request.query.get("aviso", ""))
    event_id = request.query.get("decidido", "")
    if sufijo is None or not event_id:
        return ""
    item = await ctx.almacen.item(event_id)
    decision = await ctx.almacen.decision(event_id)
    if item is None or decision is None or decision.decision not in VERBOS:
        return ""
    return f"{item.sku} v{item.version}: {VERBOS[decision.decision]}{sufijo}"


def _muestra_retenidas(ctx: Contexto, item: Item) -> bool:
    """Whether a held-back ficha is in the random sample recall is measured on: reviewers are
    asked to decide all of those (revision/retenidas.py)."""
    return item.motivo == MOTIVO_SIN_GARANTIA and en_muestra(item.event_id, ctx.muestra_proporcion)


def _pasa(item: Item, filtros: dict[str, str]) -> bool:
    return (
        (not filtros["familia"] or item.familia == filtros["familia"])
        and (not filtros["motivo"] or item.motivo == filtros["motivo"])
        and (not filtros["criterio"] or filtros["criterio"] in item.criterios)
    )


def _contar(items: list[Item], valores: Any) -> list[tuple[str, int]]:
    cuentas: dict[str, int] = {}
    for item in items:
        for valor in valores(item):
            cuentas[valor] = cuentas.get(valor, 0) + 1
    return sorted(cuentas.items())


def _titulo(item: Item) -> str:
    ficha = dec.ficha_de(item) or {}
    origen = (item.datos.get("origen") or {}).get("ficha_proveedor") or {}
    return str(ficha.get("titulo") or origen.get("titulo") or "")


# ----------------------------------------------------------------------------- one item


async def item_get(request: web.Request) -> web.Response:
    """One item as it stands."""
    ctx = request.app[CTX]
    item = await _item(ctx, request.query.get("id", ""))
    return await _render_item(ctx, request, item, dec.ficha_de(item), {})


async def _item(ctx: Contexto, event_id: str) -> Item:
    item = await ctx.almacen.item(event_id)
    if item is None:
        raise web.HTTPNotFound(text="No existe ese elemento.")
    return item


async def _render_item(
    ctx: Contexto,
    request: web.Request,
    item: Item,
    ficha: dict[str, Any] | None,
    errores: dict[str, list[str]],
    status: int = 200,
    mensaje: str = "",
) -> web.Response:
    """The item page; ``ficha`` is what the form shows (the stored one, or the reviewer's edit)."""
    origen = dec.origen_de(item)
    proveedor = origen["ficha_proveedor"]
    ficha_form = ficha or {"titulo": "", "descripcion": "", "atributos": {}}
    atributos = _atributos_form(item, ficha_form, proveedor)
    comprobaciones = dec.comprobaciones(ficha, item) if ficha else {}
    decision = None
    if item.estado != ABIERTA:
        decision = await ctx.almacen.decision(item.event_id)
    siguiente = await ctx.almacen.siguiente(item.event_id)
    return _pagina(
        ctx,
        request,
        "item.html",
        status=status,
        item=item,
        proveedor=proveedor,
        cifras=origen["cifras"],
        ficha=ficha_form,
        atributos=atributos,
        diff_titulo=diff_palabras(str(proveedor.get("titulo") or ""), ficha_form["titulo"]),
        diff_descripcion=diff_palabras(
            str(proveedor.get("descripcion") or ""), ficha_form["descripcion"]
        ),
        comprobaciones=comprobaciones,
        errores=errores,
        criterios=ctx.criterios,
        criterios_version=CRITERIOS_VERSION,
        decision=decision,
        mensaje=mensaje,
        es_muestra=item.tipo == TIPO_MUESTRA,
        clave_puerta=clave_puerta(item.datos),
        muestra_retenidas=_muestra_retenidas(ctx, item),
        siguiente="/item?" + urlencode({"id": siguiente}) if siguiente else "",
        edad=time.time() - item.recibido_en,
        aviso=await _aviso(ctx, request) if request.method == "GET" else "",
    )


def _atributos_form(
    item: Item, ficha: dict[str, Any], proveedor: dict[str, Any]
) -> list[dict[str, Any]]:
    """One row per attribute the ficha has or the family requires, with the origin's value."""
    try:
        requeridos = list(atributos_obligatorios(item.familia))
    except Exception:  # an unknown family: no required attributes to offer
        requeridos = []
    de_ficha = dict(ficha.get("atributos") or {})
    de_origen = dict(proveedor.get("atributos") or {})
    nombres = requeridos + [k for k in de_ficha if k not in requeridos]
    return [
        {
            "nombre": n,
            "valor": str(de_ficha.get(n, "")),
            "origen": str(de_origen.get(n, "")),
            "requerido": n in requeridos,
            "distinto": str(de_ficha.get(n, "")) != str(de_origen.get(n, "")),
        }
        for n in nombres
    ]


_PALABRA = re.compile(r"\w+", re.UNICODE)


def diff_palabras(origen: str, texto: str) -> list[tuple[str, bool]]:
    """``texto`` cut in segments, each marked True when its words are not in ``origen``.

    Word-level and order-aware (difflib over lower-cased words), so a reviewer sees at a glance
    what the ficha says that the supplier did not. The segments are rendered escaped.
    """
    tokens = re.findall(r"\w+|\W+", texto, re.UNICODE)
    base = [t.lower() for t in _PALABRA.findall(origen)]
    palabras = [(i, t.lower()) for i, t in enumerate(tokens) if _PALABRA.fullmatch(t)]
    matcher = difflib.SequenceMatcher(a=base, b=[p for _, p in palabras], autojunk=False)
    nuevos: set[int] = set()
    vocabulario = set(base)
    for tag, _a0, _a1, b0, b1 in matcher.get_opcodes():
        if tag in ("replace", "insert"):
            nuevos |= {palabras[j][0] for j in range(b0, b1) if palabras[j][1] not in vocabulario}
    segmentos: list[tuple[str, bool]] = []
    for i, t in enumerate(tokens):
        marcado = i in nuevos
        if segmentos and segmentos[-1][1] == marcado:
            segmentos[-1] = (segmentos[-1][0] + t, marcado)
        else:
            segmentos.append((t, marcado))
    return segmentos


# ----------------------------------------------------------------------------- actions


async def aprobar(request: web.Request) -> web.Response:
    """Approve the ficha as shown in the form; publish only if every code check passes."""
    ctx = request.app[CTX]
    form = await request.post()
    item = await _item(ctx, _texto(form.get("event_id")))
    if item.tipo == TIPO_MUESTRA:
        raise web.HTTPBadRequest(text="Un elemento de la muestra se marca correcto o incorrecto.")
    ficha = _ficha_del_form(form)
    resultado = dec.comprobaciones(ficha, item)
    errores = dec.errores_por_campo(resultado)
    if errores:
        return await _render_item(
            ctx,
            request,
            item,
            ficha,
            errores,
            status=422,
            mensaje="La ficha no pasa las comprobaciones: no se publica.",
        )
    cerrado = await _no_abierto(ctx, request, item)
    if cerrado is not None:
        return cerrado
    superada = await _version_superada(ctx, item)
    if superada is not None:
        return await _render_item(
            ctx,
            request,
            await _item(ctx, item.event_id),
            ficha,
            {},
            status=409,
            mensaje=f"Hay una versión más nueva de {item.sku} (v{superada}): no se publica una "
            "versión anterior.",
        )
    editados = dec.campos_editados(dec.ficha_de(item), ficha)
    decision = DECISION_EDITADA if editados else DECISION_APROBADA
    ahora = time.time()
    usuario = request["usuario"]
    cierre = Cierre(
        decision=decision,
        criterios=[],
        revisor=usuario,
        decidida_en=ahora,
        registro=dec.decision_de(item, decision, usuario, ahora, editados=editados),
        publicacion=dec.publicacion(item, ficha, usuario, bool(editados), ahora, ctx.modelo),
    )
    return await _cerrar(ctx, request, item, cierre)


async def rechazar(request: web.Request) -> web.Response:
    """Reject with at least one criterion and an optional note; nothing is published."""
    ctx = request.app[CTX]
    form = await request.post()
    item = await _item(ctx, _texto(form.get("event_id")))
    if item.tipo == TIPO_MUESTRA:
        raise web.HTTPBadRequest(text="Un elemento de la muestra se marca correcto o incorrecto.")
    criterios, nota = _criterios_y_nota(ctx, form)
    if not criterios:
        return await _render_item(
            ctx,
            request,
            item,
            dec.ficha_de(item),
            {"rechazo": ["Marque al menos un criterio que falla."]},
            status=422,
        )
    cierre = _cierre_sin_publicar(item, DECISION_RECHAZADA, request["usuario"], criterios, nota)
    return await _cerrar(ctx, request, item, cierre)


async def muestra(request: web.Request) -> web.Response:
    """A sample item: ``correcta``, or ``incorrecta`` with the criteria it fails."""
    ctx = request.app[CTX]
    form = await request.post()
    item = await _item(ctx, _texto(form.get("event_id")))
    if item.tipo != TIPO_MUESTRA:
        raise web.HTTPBadRequest(text="Solo los elementos de la muestra se marcan así.")
    veredicto = _texto(form.get("veredicto"))
    if veredicto not in (DECISION_CORRECTA, DECISION_INCORRECTA):
        raise web.HTTPBadRequest(text="Veredicto desconocido.")
    criterios, nota = _criterios_y_nota(ctx, form)
    if veredicto == DECISION_INCORRECTA and not criterios:
        return await _render_item(
            ctx,
            request,
            item,
            dec.ficha_de(item),
            {"rechazo": ["Marque los criterios que fallan."]},
            status=422,
        )
    if veredicto == DECISION_CORRECTA:
        criterios = []
    cierre = _cierre_sin_publicar(item, veredicto, request["usuario"], criterios, nota)
    return await _cerrar(ctx, request, item, cierre)


def _cierre_sin_publicar(
    item: Item, decision: str, usuario: str, criterios: list[str], nota: str
) -> Cierre:
    """A decision that publishes nothing (reject, sample verdict), stamped now."""
    ahora = time.time()
    return Cierre(
        decision=decision,
        criterios=criterios,
        revisor=usuario,
        decidida_en=ahora,
        registro=dec.decision_de(item, decision, usuario, ahora, criterios, nota),
        publicacion=None,
    )


async def _cerrar(ctx: Contexto, request: web.Request, item: Item, cierre: Cierre) -> web.Response:
    """Persist the decision, then send it; the reviewer hears back only after both."""
    decision = await ctx.almacen.decidir(item, cierre)
    if decision is None:
        cerrado = await _no_abierto(ctx, request, await _item(ctx, item.event_id))
        assert cerrado is not None
        return cerrado
    if decision.publicacion is not None:
        fault_point(REVISOR_CAIDA_TRAS_DECISION)
    if ctx.vigilancia is not None and decision.tipo == TIPO_MUESTRA:
        ctx.vigilancia.anotar(decision.decision, item.datos)
        cierre_puerta = asyncio.create_task(ctx.vigilancia.revisar_o_registrar())
        _TAREAS.add(cierre_puerta)
        cierre_puerta.add_done_callback(_TAREAS.discard)
    if ctx.apertura is not None and decision.tipo != TIPO_MUESTRA:
        _en_segundo_plano(ctx.apertura.revisar_o_registrar())
    aviso = "enviada"
    # The send goes on even if the reviewer stops waiting: cancelling it half-way could leave a
    # record in the producer's buffer that the outbox would then send a second time.
    envio = asyncio.create_task(ctx.flujo.enviar(decision.event_id))
    envio.add_done_callback(_registrar_fallo)
    try:
        await asyncio.wait_for(asyncio.shield(envio), ENVIO_S)
    except Exception:  # broker down or slow: the outbox sends it later, say so
        log.warning("decision %s stored, sending pending", decision.event_id)
        aviso = "pendiente"
    siguiente = await ctx.almacen.siguiente(item.event_id)
    destino = (
        "/item?" + urlencode({"id": siguiente, "decidido": item.event_id, "aviso": aviso})
        if siguiente
        else "/?" + urlencode({"decidido": item.event_id, "aviso": aviso})
    )
    raise web.HTTPSeeOther(destino)


def _en_segundo_plano(corrutina: Any) -> None:
    """Run a coroutine the request does not wait for, keeping a reference until it ends."""
    tarea = asyncio.create_task(corrutina)
    _TAREAS.add(tarea)
    tarea.add_done_callback(_TAREAS.discard)


def _registrar_fallo(envio: asyncio.Task[bool]) -> None:
    """A send that failed after the reviewer stopped waiting: logged; the outbox retries."""
    if not envio.cancelled() and envio.exception() is not None:
        log.warning("sending a decision failed; the outbox will retry: %r", envio.exception())


async def _no_abierto(ctx: Contexto, request: web.Request, item: Item) -> web.Response | None:
    """The page a reviewer sees when someone (or a newer version) got there first."""
    actual = await ctx.almacen.item(item.event_id)
    if actual is None or actual.estado == ABIERTA:
        return None
    decision = await ctx.almacen.decision(item.event_id)
    quien = f" por {decision.revisor}" if decision else ""
    que = decision.decision if decision else actual.estado
    return await _render_item(
        ctx,
        request,
        actual,
        dec.ficha_de(actual),
        {},
        status=409,
        mensaje=f"Este elemento ya está cerrado ({que}{quien}).",
    )


async def _version_superada(ctx: Contexto, item: Item) -> int | None:
    """The newer version of the SKU, if the worker or this app has handled one.

    A newer version closes the item as ``obsoleta`` right away (its decision is sent).
    """
    del_worker = await ctx.versiones.get(item.sku)
    vista = await ctx.almacen.version_vista(item.sku)
    nueva = max(v for v in (del_worker, vista, item.version) if v is not None)
    if nueva <= item.version:
        return None
    cerradas = await ctx.almacen.observar_version(item.sku, nueva, time.time())
    for decision in cerradas:
        await ctx.flujo.enviar(decision.event_id)
    return nueva


def _ficha_del_form(form: Any) -> dict[str, Any]:
    """The ficha the reviewer submitted: title, description, attributes (empty ones dropped)."""
    atributos = {}
    for clave in form:
        if clave.startswith("atributo__"):
            valor = _texto(form.get(clave)).strip()
            if valor:
                atributos[clave.removeprefix("atributo__")] = valor
    return {
        "titulo": _texto(form.get("titulo")).replace("\r\n", "\n").strip(),
        "descripcion": _texto(form.get("descripcion")).replace("\r\n", "\n").strip(),
        "atributos": atributos,
    }


def _criterios_y_nota(ctx: Contexto, form: Any) -> tuple[list[str], str]:
    criterios = sorted({c for c in form.getall("criterio", []) if c in ctx.ids_criterios})
    return criterios, _texto(form.get("nota")).strip()[:MAX_NOTA]


# ----------------------------------------------------------------------------- operations


async def metrics(request: web.Request) -> web.Response:
    """Prometheus exposition of ``fichas_revision_*`` (computed from the store)."""
    ctx = request.app[CTX]
    await ctx.metricas.actualizar()  # the store's figures, read before the sync collector runs
    cuerpo = await asyncio.to_thread(generate_latest, ctx.metricas)
    respuesta = web.Response(body=cuerpo)
    respuesta.content_type = CONTENT_TYPE_LATEST.split(";")[0]
    return respuesta


async def favicon(request: web.Request) -> web.Response:
    """No icon: answered here so the browser's request never lands on the login page."""
    return web.Response(status=204)


async def live(request: web.Request) -> web.Response:
    return web.Response(text="ok")


async def ready(request: web.Request) -> web.Response:
    if not request.app[CTX].flujo.listo:
        raise web.HTTPServiceUnavailable(text="starting")
    return web.Response(text="ok")


def crear_app(ctx: Contexto) -> web.Application:
    """The aiohttp application with its routes and the security middleware.

    The Puertas page's routes are added by ``revision.app`` (``revision.puertas.rutas``): that
    module builds on this one (its pages, the context), so this one must not import it back.
    """
    from importlib.resources import files

    app = web.Application(middlewares=[seguridad], client_max_size=256 * 1024)
    app[CTX] = ctx
    app.on_response_prepare.append(cabeceras)
    app.router.add_get("/", cola)
    app.router.add_get("/item", item_get)
    app.router.add_post("/item/aprobar", aprobar)
    app.router.add_post("/item/rechazar", rechazar)
    app.router.add_post("/item/muestra", muestra)
    app.router.add_get("/login", login_get)
    app.router.add_post("/login", login_post)
    app.router.add_post("/logout", logout)
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/favicon.ico", favicon)
    app.router.add_get("/health/live", live)
    app.router.add_get("/health/ready", ready)
    app.router.add_static("/estatico/", str(files("revision") / "estatico"))
    return app
