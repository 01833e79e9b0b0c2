"""The worker's small HTTP server: ``/metrics``, ``/health/live`` and ``/health/ready``.

It runs on the worker's own event loop (aiohttp), not in a thread as
``prometheus_client.start_http_server`` would: then a blocked or dead loop also stops
``/health/live`` from answering, which is exactly what the liveness probe must notice.
Readiness is a callable owned by the worker (see ``Worker.readiness``), so this module knows
nothing about Kafka or the LLM.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from aiohttp import web
from prometheus_client import CollectorRegistry
from prometheus_client.exposition import choose_encoder

log = logging.getLogger(__name__)

Readiness = Callable[[], tuple[bool, str]]


class HealthServer:
    """Serves a metrics registry and the two probes on ``host:port`` (0: any free port)."""

    def __init__(
        self, registry: CollectorRegistry, ready: Readiness, port: int, host: str = "0.0.0.0"
    ) -> None:
        self._registry = registry
        self._ready = ready
        self._host = host
        self._requested_port = port
        self._runner: web.AppRunner | None = None
        self.port = port

    def _app(self) -> web.Application:
        """The routes; a new application per start so stop/start cycles are clean."""
        app = web.Application()
        app.router.add_get("/metrics", self._metrics)
        app.router.add_get("/health/live", self._live)
        app.router.add_get("/health/ready", self._ready_handler)
        return app

    async def start(self) -> None:
        """Bind and serve; ``.port`` is the bound port afterwards (useful with port 0)."""
        if self._runner is not None:
            return
        runner = web.AppRunner(self._app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self._host, self._requested_port)
        try:
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        addresses = runner.addresses
        if addresses:
            self.port = int(addresses[0][1])
        log.info("metrics and health on %s:%d", self._host, self.port)

    async def stop(self) -> None:
        """Stop serving; safe to call twice or without start."""
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _metrics(self, request: web.Request) -> web.Response:
        """Prometheus exposition of the registry, OpenMetrics when the scraper asks."""
        encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
        body = encoder(self._registry)
        return web.Response(body=body, headers={"Content-Type": content_type})

    async def _live(self, request: web.Request) -> web.Response:
        """Answering at all proves the event loop turns."""
        return web.json_response({"status": "live"})

    async def _ready_handler(self, request: web.Request) -> web.Response:
        """200 when the worker says it can take events, else 503 with its reason."""
        try:
            ready, reason = self._ready()
        except Exception as exc:  # a broken check means "not ready", never a 500
            ready, reason = False, f"readiness check failed: {exc}"
        if ready:
            return web.json_response({"status": "ready", "reason": reason})
        return web.json_response({"status": "not_ready", "reason": reason}, status=503)
