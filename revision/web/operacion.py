"""What machines read from the reviewer web app, without a session: ``/metrics`` (Prometheus,
``fichas_revision_*`` computed from the store by ``revision.web.metricas``), ``/health/live`` and
``/health/ready`` (the orchestrator's probes), and ``/favicon.ico``.
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from revision.web.base import CTX


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
    """The process answers: the liveness probe."""
    return web.Response(text="ok")


async def ready(request: web.Request) -> web.Response:
    """503 until the app's stream has started (``Flujo.listo``): the readiness probe."""
    if not request.app[CTX].flujo.listo:
        raise web.HTTPServiceUnavailable(text="starting")
    return web.Response(text="ok")
