"""The fake LLM's HTTP server: OpenAI's chat completions, plus admin endpoints for tests.

Why a real HTTP process instead of a mock object: the processor talks to vLLM through
``ChatOpenAI`` and the ``openai`` client, with their own retries, timeouts, connection pools
and error classes. Only a real socket exercises those paths (429 with Retry-After, a server
that hangs, a server that drops the connection, a server that dies and comes back).

Per request: read the agent and the SKU (``prompt_contract``), take the next step of that
agent's script for that SKU (``script``), wait the scripted latency, and answer
(``answers``), fail, hang or close. Every request is recorded, to memory and to the record
file, so a restarted server continues the scripts where the killed one left them.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import os
import random
import signal
import socket
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from aiohttp import web

from harness.fake_llm.answers import (
    DEFAULT_IDENTITY,
    completion_body,
    content_for,
    error_response,
    identity_error,
    models_body,
)
from harness.fake_llm.limiter import ParallelLimiter
from harness.fake_llm.prompt_contract import (
    FICHA_PROPERTY,
    VERDICT_PROPERTY,
    detect_agent,
    detect_sku,
    is_rubric,
    last_user_text,
    quoting_task,
)
from harness.fake_llm.script import Config, ConfigError, Step, parse_config

LOG = logging.getLogger("fake_llm")

DOWN_MODES = ("503", "close", "hang")


class CloseConnection(Exception):
    """Raised after closing the transport, so the handler returns without an answer."""


@dataclass
class Outage:
    """An outage started by `POST /_admin/down`; `until` is on the monotonic clock."""

    mode: str
    until: float


@dataclass
class Record:
    """One chat request as `GET /_admin/requests` and the record file show it."""

    index: int
    received_at: float
    agent: str | None
    sku: str | None
    body: Any
    step: int | None = None
    action: str | None = None
    status: int | None = None
    outcome: str = "pending"
    duration_ms: float | None = None
    # time the request held one of ``max_parallel`` slots (duration less the queue before it)
    slot_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "received_at": self.received_at,
            "agent": self.agent,
            "sku": self.sku,
            "step": self.step,
            "action": self.action,
            "status": self.status,
            "outcome": self.outcome,
            "duration_ms": self.duration_ms,
            "slot_ms": self.slot_ms,
            "body": self.body,
            **self.extra,
        }


class FakeLLMServer:
    """State and handlers of the fake server; one instance per process."""

    def __init__(
        self, config: Config, record_path: Path | None, identity: dict[str, Any] | None = None
    ) -> None:
        self.config = config
        self.identity: dict[str, Any] = {**DEFAULT_IDENTITY, **(identity or {})}
        self.record_path = record_path
        self.records: list[Record] = []
        self.previous_records: list[dict[str, Any]] = []
        self.counters: dict[tuple[str, str], int] = {}
        self.outage: Outage | None = None
        self.limiter = ParallelLimiter(lambda: self.config.max_parallel)
        self.open_requests = 0
        self.hanging = 0
        self.stopping = False
        self.started_at = time.time()
        self._next_index = 0
        self._record_file: TextIO | None = None
        if record_path is not None:
            self._reload(record_path)
            self._record_file = record_path.open("a", encoding="utf-8")

    # ---- persistence

    def _reload(self, path: Path) -> None:
        """Continue the scripts where a previous process left them.

        A request the previous process never finished (killed, or stopped mid-request)
        is not in the file, or is marked `server_stopped`: the client got no answer, so
        the step is replayed, as a real server that died would have done no work.
        """
        if not path.exists():
            return
        loaded = 0
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue  # a torn last line from a killed process
                if not isinstance(item, dict):
                    continue
                loaded += 1
                self.previous_records.append(item)
                index = item.get("index")
                if isinstance(index, int):
                    self._next_index = max(self._next_index, index + 1)
                step, agent, sku = item.get("step"), item.get("agent"), item.get("sku")
                if not isinstance(step, int) or item.get("outcome") == "server_stopped":
                    continue
                key = (str(agent), sku or "")
                self.counters[key] = max(self.counters.get(key, 0), step + 1)
        LOG.info("reloaded %d records from %s: counters %s", loaded, path, self.counters)

    def _persist(self, record: Record) -> None:
        if self._record_file is None:
            return
        try:
            self._record_file.write(json.dumps(record.as_json(), ensure_ascii=False) + "\n")
            self._record_file.flush()
        except (OSError, ValueError) as exc:
            LOG.warning("could not append to %s: %s", self.record_path, exc)

    def close(self) -> None:
        if self._record_file is not None:
            self._record_file.close()
            self._record_file = None

    # ---- helpers

    def _current_outage(self) -> Outage | None:
        if self.outage is not None and time.monotonic() >= self.outage.until:
            self.outage = None
        return self.outage

    def _take_step(self, agent: str, sku: str) -> tuple[int, Step, float]:
        """Consume the next script step for (agent, sku): returns index, step, latency s."""
        scripts, latency_ms = self.config.scripts_for(sku)
        key = (agent, sku)
        step = self.counters.get(key, 0)
        self.counters[key] = step + 1
        script = scripts[agent]
        scripted = script[min(step, len(script) - 1)]
        jitter = self.config.latency_jitter_ms
        latency_ms += random.uniform(0, jitter) if jitter else 0.0
        return step, scripted, latency_ms / 1000

    async def _hang(self) -> None:
        """Wait until the client gives up (aiohttp then cancels this handler)."""
        self.hanging += 1
        try:
            await asyncio.Event().wait()
        finally:
            self.hanging -= 1

    @staticmethod
    def _close(request: web.Request) -> None:
        transport = request.transport
        if transport is not None:
            transport.close()
        raise CloseConnection

    # ---- chat

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        record = Record(
            index=self._next_index,
            received_at=time.time(),
            agent=None,
            sku=None,
            body=None,
        )
        self._next_index += 1
        self.records.append(record)
        self.open_requests += 1
        try:
            response = await self._answer_chat(request, record)
            record.status = response.status
            record.outcome = "answered"
            return response
        except CloseConnection:
            record.outcome = "closed"
            # The transport is closed: aiohttp's write of this response fails quietly.
            return web.Response(status=499)
        except asyncio.CancelledError:
            record.outcome = "server_stopped" if self.stopping else "client_gone"
            raise
        finally:
            self.open_requests -= 1
            record.duration_ms = round((time.monotonic() - started) * 1000, 3)
            self._persist(record)

    async def _answer_chat(self, request: web.Request, record: Record) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            record.body = raw.decode("utf-8", "replace")
            return error_response(400, "request body is not valid JSON")
        record.body = body
        if not isinstance(body, dict):
            return error_response(400, "request body must be a JSON object")
        agent = detect_agent(body)
        sku = detect_sku(body)
        record.agent, record.sku = agent, sku

        if body.get("stream"):
            return error_response(
                400, "fake_llm does not implement streaming; send stream=false (or omit it)"
            )
        if agent is None:
            return error_response(
                400,
                "fake_llm cannot tell the agent: response_format.json_schema.schema.properties "
                f"must contain {VERDICT_PROPERTY!r} (evaluador) or {FICHA_PROPERTY!r} (generador)",
            )

        outage = self._current_outage()
        if outage is not None:
            record.action = f"down:{outage.mode}"
            if outage.mode == "close":
                self._close(request)
            if outage.mode == "hang":
                await self._hang()
            return error_response(503, "fake_llm is down (POST /_admin/up to end it)")

        await self.limiter.acquire()
        slot_from = time.monotonic()
        try:
            step, scripted, latency_s = self._take_step(agent, sku or "")
            action = scripted.accion
            record.step, record.action = step, action
            if scripted.scored:
                record.extra["puntuacion"] = scripted.puntuacion
            if latency_s > 0:
                await asyncio.sleep(latency_s)
            if action == "cerrar":
                self._close(request)
            if action.startswith("error:"):
                status = int(action.removeprefix("error:"))
                return error_response(status, f"scripted error {status} for {agent} {sku}")
            if action != "colgar":
                content = content_for(
                    action,
                    agent,
                    sku or "",
                    last_user_text(body),
                    is_rubric(body),
                    quoting_task(body),
                )
                return web.json_response(completion_body(body, content, record.index, scripted))
        finally:
            self.limiter.release()
            record.slot_ms = round((time.monotonic() - slot_from) * 1000, 3)
        # colgar: a hung request is not being worked on, so it gives its slot back.
        await self._hang()
        raise AssertionError("unreachable: _hang only ends by cancellation")

    # ---- admin and models

    async def models(self, request: web.Request) -> web.Response:
        """The served model in vLLM's shape; down with the chat completions during an outage
        (a server that is down answers nothing)."""
        outage = self._current_outage()
        if outage is not None:
            if outage.mode == "close":
                self._close(request)
            if outage.mode == "hang":
                await self._hang()
            return error_response(503, "fake_llm is down (POST /_admin/up to end it)")
        return web.json_response(models_body(self.identity, int(self.started_at)))

    async def get_identity(self, request: web.Request) -> web.Response:
        return web.json_response(self.identity)

    async def set_identity(self, request: web.Request) -> web.Response:
        """Serve another model: the fields given over the defaults (``DEFAULT_IDENTITY``)."""
        try:
            identity = await request.json()
        except ValueError:
            identity = None
        problem = identity_error(identity)
        if problem is not None:
            return web.json_response({"error": problem}, status=400)
        self.identity = {**DEFAULT_IDENTITY, **identity}
        return web.json_response(self.identity)

    async def get_config(self, request: web.Request) -> web.Response:
        return web.json_response(self.config.raw)

    async def set_config(self, request: web.Request) -> web.Response:
        try:
            self.config = parse_config(await request.json())
        except (ConfigError, ValueError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        self.limiter.wake()  # a larger max_parallel lets queued requests in now
        return web.json_response(self.config.raw)

    def all_records(self) -> list[dict[str, Any]]:
        """Records of earlier processes (from the record file) followed by this one's."""
        return self.previous_records + [record.as_json() for record in self.records]

    async def get_requests(self, request: web.Request) -> web.Response:
        """Records, optionally filtered: ?agent=&sku=&since=<index>&bodies=0.

        Filters exist because a long benchmark accumulates many large bodies.
        """
        query = request.query
        try:
            since = int(query.get("since", "0"))
        except ValueError:
            return web.json_response({"error": "since must be an integer"}, status=400)
        with_bodies = query.get("bodies", "1") not in ("0", "false", "no")
        selected = []
        for item in self.all_records():
            if item.get("index", 0) < since:
                continue
            if "agent" in query and item.get("agent") != query["agent"]:
                continue
            if "sku" in query and item.get("sku") != query["sku"]:
                continue
            if not with_bodies:
                item = {key: value for key, value in item.items() if key != "body"}
            selected.append(item)
        return web.json_response(selected)

    async def reset(self, request: web.Request) -> web.Response:
        """Forget records and counters (config stays); the record file is truncated too,
        otherwise a later restart would resurrect the counters this reset cleared."""
        self.records.clear()
        self.previous_records.clear()
        self.counters.clear()
        self.limiter.reset_peak()
        if self._record_file is not None:
            self._record_file.seek(0)
            self._record_file.truncate()
            self._record_file.flush()
        return web.json_response({"ok": True})

    async def down(self, request: web.Request) -> web.Response:
        try:
            data = await request.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return web.json_response({"error": "body must be a JSON object"}, status=400)
        seconds, mode = data.get("seconds"), str(data.get("mode", "503"))
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            return web.json_response({"error": "seconds must be a number >= 0"}, status=400)
        if mode not in DOWN_MODES:
            return web.json_response({"error": f"mode must be one of {DOWN_MODES}"}, status=400)
        self.outage = Outage(mode=mode, until=time.monotonic() + float(seconds))
        return web.json_response({"down": True, "mode": mode, "seconds": seconds})

    async def up(self, request: web.Request) -> web.Response:
        self.outage = None
        return web.json_response({"down": False})

    async def stats(self, request: web.Request) -> web.Response:
        by_agent: dict[str, int] = {}
        by_status: dict[str, int] = {}
        by_outcome: dict[str, int] = {}
        by_agent_status: dict[str, dict[str, int]] = {}
        records = self.all_records()
        for item in records:
            agent = str(item.get("agent") or "unknown")
            outcome = str(item.get("outcome"))
            status = str(item["status"]) if item.get("status") is not None else outcome
            by_agent[agent] = by_agent.get(agent, 0) + 1
            by_status[status] = by_status.get(status, 0) + 1
            by_outcome[outcome] = by_outcome.get(outcome, 0) + 1
            per_agent = by_agent_status.setdefault(agent, {})
            per_agent[status] = per_agent.get(status, 0) + 1
        outage = self._current_outage()
        return web.json_response(
            {
                "total": len(records),
                "by_agent": by_agent,
                "by_status": by_status,
                "by_outcome": by_outcome,
                "by_agent_status": by_agent_status,
                "in_flight": self.limiter.active,
                "peak_in_flight": self.limiter.peak,
                "queued": self.limiter.queued,
                "hanging": self.hanging,
                "open_requests": self.open_requests,
                "down": None
                if outage is None
                else {"mode": outage.mode, "remaining_s": outage.until - time.monotonic()},
                "uptime_s": time.time() - self.started_at,
            }
        )

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(
            [
                web.post("/v1/chat/completions", self.chat_completions),
                web.get("/v1/models", self.models),
                web.get("/_admin/identity", self.get_identity),
                web.post("/_admin/identity", self.set_identity),
                web.get("/_admin/config", self.get_config),
                web.post("/_admin/config", self.set_config),
                web.get("/_admin/requests", self.get_requests),
                web.post("/_admin/reset", self.reset),
                web.post("/_admin/down", self.down),
                web.post("/_admin/up", self.up),
                web.get("/_admin/stats", self.stats),
            ]
        )
        return app


# --------------------------------------------------------------------------- main


def loopback_only(host: str) -> str:
    """Refuse to listen beyond this machine: the fake has no auth and echoes prompts."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise SystemExit(f"fake_llm: refusing to bind to {host!r}; use a loopback address")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # Lets a restarted server take the same port while old connections sit in TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


async def _watch_parent(stop: asyncio.Event) -> None:
    """Stop when the process that started us is gone, so a killed test run leaves no orphan."""
    parent = os.getppid()
    while not stop.is_set():
        if os.getppid() != parent:
            LOG.warning("parent process %d is gone; stopping", parent)
            stop.set()
            return
        await asyncio.sleep(0.5)


async def serve(
    host: str,
    port: int,
    config: Config,
    record_path: Path | None,
    exit_with_parent: bool = False,
    identity: dict[str, Any] | None = None,
) -> None:
    server = FakeLLMServer(config, record_path, identity)
    # handler_cancellation: a client that gives up must free its slot and be recorded.
    runner = web.AppRunner(server.make_app(), handler_cancellation=True, access_log=None)
    await runner.setup()
    sock = _bind(host, port)
    site = web.SockSite(runner, sock, shutdown_timeout=1.0)
    await site.start()
    bound_host, bound_port = sock.getsockname()[:2]
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(f"LISTENING http://{shown_host}:{bound_port}/v1", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    watcher = asyncio.create_task(_watch_parent(stop)) if exit_with_parent else None
    try:
        await stop.wait()
    finally:
        server.stopping = True  # before cleanup cancels the handlers still running
        if watcher is not None:
            watcher.cancel()
        await runner.cleanup()
        server.close()
