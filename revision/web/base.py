"""What every page of the reviewer web app shares: the context, the templates, the headers.

Server-rendered pages (aiohttp + Jinja2, autoescaped) and plain forms, one module per reason to
change: ``revision.web.acceso`` (who gets in), ``paginas`` (the queue, one item), ``acciones``
(what a click does), ``pagina_puertas`` (the gates), ``operacion`` (``/metrics``,
``/health/*``), ``app`` (the command and its routes). This module is what they all build on
and imports none of them: the handlers' context (``Contexto``, ``request.app[CTX]``),
rendering (``pagina``), the security headers on every response (``cabeceras``).
docs/revision.md, "Quién puede hacerlo".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jinja2
from aiohttp import web

from criterios import cargar_criterios
from revision.almacen.cola import Almacen
from revision.almacen.flujo import Flujo
from revision.almacen.recalificaciones import Recalificaciones
from revision.certificador.apertura import Apertura
from revision.certificador.vigilancia import Vigilancia
from revision.web.metricas import MetricasRevision
from versiones.almacen import VersionStore

# How long a reviewer's click waits for the broker to acknowledge the decision before the page
# says it will be sent once Kafka answers (``fichas revisor --envio-s``; docs/revision.md).
ENVIO_S = 20.0

CABECERAS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
}


@dataclass
class Contexto:
    """What the pages and actions need (who may get in is ``revision.web.acceso.Acceso``'s)."""

    almacen: Almacen
    flujo: Flujo
    versiones: VersionStore
    metricas: MetricasRevision
    modelo: str
    vigilancia: Vigilancia | None = None
    muestra_proporcion: float = (
        0.0  # the held-back sample's share (revision/certificador/retenidas.py)
    )
    sombra_proporcion: float = 0.0  # the workers' blind shadow share, outside that draw
    apertura: Apertura | None = (
        None  # the certifier that opens gates (revision/certificador/apertura.py)
    )
    envio_s: float = ENVIO_S  # a decision's wait for the broker's acknowledgement
    # the ``fichas calibrar --recalificar`` runs: variants tried on the same labels (Puertas)
    recalificaciones: Recalificaciones | None = None

    def __post_init__(self) -> None:
        self.jinja = jinja2.Environment(
            loader=jinja2.PackageLoader("revision.web", "plantillas"),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
        )
        self.jinja.filters["edad"] = edad
        self.jinja.filters["puntuacion"] = puntuacion
        self.criterios = [(c.id, c.regla) for c in cargar_criterios()]
        self.ids_criterios = {c for c, _ in self.criterios}


CTX: web.AppKey[Contexto] = web.AppKey("contexto", Contexto)


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


def texto(valor: Any) -> str:
    """A form or query field as text; anything else (absent, a file) is empty."""
    return valor if isinstance(valor, str) else ""


def pagina(
    ctx: Contexto, request: web.Request, plantilla: str, status: int = 200, **datos: Any
) -> web.Response:
    """A template rendered with the reviewer and the session's CSRF token (``revision.web.acceso``
    puts both on the request; a page without a session gets none)."""
    html = ctx.jinja.get_template(plantilla).render(
        usuario=request.get("usuario"), csrf=request.get("csrf", ""), **datos
    )
    return web.Response(text=html, content_type="text/html", status=status)


async def cabeceras(request: web.Request, respuesta: web.StreamResponse) -> None:
    """The security headers, in one place for every response: pages, redirects, errors (403,
    404, 429), static files. An ``on_response_prepare`` hook runs for all of them, including
    the ``HTTPException``s handlers and middlewares raise, which a middleware would miss."""
    for clave, valor in CABECERAS.items():
        respuesta.headers.setdefault(clave, valor)
    if not request.path.startswith("/estatico/"):
        respuesta.headers.setdefault("Cache-Control", "no-store")
