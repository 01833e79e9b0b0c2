"""Start and drive the fake LLM (`harness/fake_llm/`) as a real subprocess, for tests and bench.

Why a subprocess rather than an in-process server: the processor under test must be able to
lose the LLM server (kill, restart on the same port) exactly as it would lose vLLM, and the
server's event loop must not compete with the code under test for the same thread.

Nothing here imports pytest, so benchmarks use the same helper:

    script = {"default": {"generador": ["valida"], "evaluador": ["rechazar", "aprobar"]}}
    with FakeLLM(script) as llm:
        os.environ["FICHAS_LLM_URL"] = llm.url
        ...
        assert llm.stats()["by_agent"]["evaluador"] == 2

Admin calls are blocking (stdlib `urllib`, no proxy); from async code use the `a`-prefixed
variants, which run them in a thread so the event loop under test keeps going.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

# Run as a module of this checkout: the subprocess finds ``harness`` where this file is.
SERVER_MODULE = "harness.fake_llm"
CHECKOUT = Path(__file__).resolve().parents[2]
LISTENING_PREFIX = "LISTENING "

# Proxies from the environment must never see calls to a loopback test server.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class FakeLLMError(RuntimeError):
    """The fake server did not start, died, or refused an admin call."""


class FakeLLM:
    """Handle on one fake LLM server process.

    The server always records to a JSON-lines file (a temporary one unless `record_path` is
    given), so `restart()` and `start()` after `kill()` continue the per-SKU scripts and keep
    the request history. The last config given (constructor or `configure`) is passed again
    on every start, so a restarted server runs the same script.
    """

    def __init__(
        self,
        config: Mapping[str, Any] | None = None,
        *,
        record_path: str | os.PathLike[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        startup_timeout: float = 15.0,
        log_path: str | os.PathLike[str] | None = None,
        log_level: str = "WARNING",
        start: bool = True,
    ) -> None:
        self._workdir = tempfile.TemporaryDirectory(prefix="fake_llm_")
        work = Path(self._workdir.name)
        self.record_path = Path(record_path) if record_path else work / "requests.jsonl"
        self.log_path = Path(log_path) if log_path else work / "server.log"
        self._config_path = work / "config.json"
        self._config: dict[str, Any] = dict(config or {})
        self._config_path.write_text(json.dumps(self._config), encoding="utf-8")
        self._identity_path = work / "identity.json"
        self._identity_path.write_text("{}", encoding="utf-8")
        self.host = host
        self.port = port
        self.startup_timeout = startup_timeout
        self.log_level = log_level
        self.url = ""
        self._process: subprocess.Popen[str] | None = None
        self._log_file: Any = None
        if start:
            self.start()

    # ------------------------------------------------------------------ lifecycle

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def admin_url(self) -> str:
        """Base of the `/_admin` endpoints (the server root, without `/v1`)."""
        return self.url.removesuffix("/v1")

    def start(self) -> None:
        """Start the process and wait for its LISTENING line.

        After the first start the port is fixed, so clients configured with `url` keep
        working across `restart()`.
        """
        if self.running:
            raise FakeLLMError(f"fake LLM already running (pid {self.pid})")
        self._log_file = self.log_path.open("a", encoding="utf-8")
        command = [
            sys.executable,
            "-m",
            SERVER_MODULE,
            "--host",
            self.host,
            "--port",
            str(self.port),
            "--config",
            str(self._config_path),
            "--identity",
            str(self._identity_path),
            "--record",
            str(self.record_path),
            "--log-level",
            self.log_level,
            "--exit-with-parent",
        ]
        search_path = [str(CHECKOUT), *filter(None, [os.environ.get("PYTHONPATH")])]
        process = subprocess.Popen(
            command,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(search_path)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._log_file,
            text=True,
            encoding="utf-8",
        )
        self._process = process
        lines: queue.Queue[str | None] = queue.Queue()
        # The reader keeps draining stdout after the LISTENING line, so a chatty server can
        # never block on a full pipe.
        threading.Thread(
            target=_read_lines, args=(process, lines), name="fake-llm-stdout", daemon=True
        ).start()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            remaining = deadline - time.monotonic()
            try:
                line = lines.get(timeout=max(0.0, remaining))
            except queue.Empty:
                self.kill()
                raise FakeLLMError(
                    f"fake LLM did not start within {self.startup_timeout}s\n{self.log_tail()}"
                ) from None
            if line is None:
                process.wait()
                raise FakeLLMError(
                    f"fake LLM exited with {process.returncode} before listening\n{self.log_tail()}"
                )
            if line.startswith(LISTENING_PREFIX):
                self.url = line.removeprefix(LISTENING_PREFIX).strip()
                self.port = urllib.parse.urlsplit(self.url).port or self.port
                return

    def stop(self, timeout: float = 5.0) -> None:
        """SIGTERM, then SIGKILL if the server has not finished within `timeout` seconds.

        Requests in flight at that moment are recorded as `server_stopped` and their script
        steps are replayed by the next start, like a real server that died mid-request.
        """
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._after_exit()

    def kill(self) -> None:
        """SIGKILL: the abrupt death of the LLM server (in-flight requests get no answer)."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.kill()
        process.wait()
        self._after_exit()

    def restart(self, *, hard: bool = False) -> None:
        """Stop (or kill, with `hard=True`) and start again on the same port."""
        if hard:
            self.kill()
        else:
            self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server and delete its temporary files (record and log if defaulted)."""
        self.stop()
        self._workdir.cleanup()

    def _after_exit(self) -> None:
        self._process = None
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def log_tail(self, lines: int = 40) -> str:
        """Last lines of the server's stderr, for error messages."""
        with contextlib.suppress(OSError):
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
            return "\n".join(text.splitlines()[-lines:])
        return ""

    def __enter__(self) -> Self:
        if not self.running:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        # Last resort for a forgotten handle; close() is the way.
        process = getattr(self, "_process", None)
        if process is not None and process.poll() is None:
            process.kill()

    # ------------------------------------------------------------------ admin (blocking)

    def _call(self, method: str, path: str, payload: Any = None) -> Any:
        if not self.running:
            raise FakeLLMError("fake LLM is not running")
        data = None if payload is None else json.dumps(payload).encode("utf-8")
        request = urllib.request.Request(
            self.admin_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with _OPENER.open(request, timeout=10) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", "replace")
            raise FakeLLMError(f"{method} {path} -> {exc.code}: {detail}") from exc

    def configure(self, config: Mapping[str, Any]) -> dict[str, Any]:
        """Replace the whole config (missing keys take defaults); returns it as stored.

        Counters are kept: call `reset()` too when a test wants scripts to start over.
        """
        stored: dict[str, Any] = self._call("POST", "/_admin/config", dict(config))
        self._config = dict(config)
        self._config_path.write_text(json.dumps(self._config), encoding="utf-8")
        return stored

    def config(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/_admin/config")
        return result

    def serve_identity(self, identity: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Serve another model under ``/v1/models`` (the fields given over the defaults of
        ``harness.fake_llm.answers.DEFAULT_IDENTITY``; None or {}: the defaults), from now on
        and across restarts: new weights under the same name, as a restarted vLLM would."""
        stored: dict[str, Any] = self._call("POST", "/_admin/identity", dict(identity or {}))
        self._identity_path.write_text(json.dumps(dict(identity or {})), encoding="utf-8")
        return stored

    def identity(self) -> dict[str, Any]:
        """The model ``/v1/models`` says it serves now."""
        result: dict[str, Any] = self._call("GET", "/_admin/identity")
        return result

    def requests(
        self, *, agent: str | None = None, sku: str | None = None, bodies: bool = True
    ) -> list[dict[str, Any]]:
        """Recorded chat requests, oldest first, including those of earlier processes."""
        query = {"bodies": "1" if bodies else "0"}
        if agent is not None:
            query["agent"] = agent
        if sku is not None:
            query["sku"] = sku
        result: list[dict[str, Any]] = self._call(
            "GET", "/_admin/requests?" + urllib.parse.urlencode(query)
        )
        return result

    def reset(self) -> None:
        """Clear records and per-SKU counters (and the record file); the config stays."""
        self._call("POST", "/_admin/reset", {})

    def stats(self) -> dict[str, Any]:
        result: dict[str, Any] = self._call("GET", "/_admin/stats")
        return result

    def down(self, seconds: float, mode: str = "503") -> None:
        """Fail every chat request for `seconds`: mode "503", "close" or "hang"."""
        self._call("POST", "/_admin/down", {"seconds": seconds, "mode": mode})

    def up(self) -> None:
        self._call("POST", "/_admin/up", {})

    def wait_for_requests(
        self, count: int, timeout: float = 10.0, *, agent: str | None = None
    ) -> list[dict[str, Any]]:
        """Poll until at least `count` requests (of `agent`) are recorded as finished."""
        deadline = time.monotonic() + timeout
        while True:
            found = [
                item
                for item in self.requests(agent=agent, bodies=False)
                if item.get("outcome") != "pending"
            ]
            if len(found) >= count or time.monotonic() >= deadline:
                if len(found) < count:
                    raise FakeLLMError(f"only {len(found)} of {count} requests after {timeout}s")
                return found
            time.sleep(0.05)

    # ------------------------------------------------------------------ admin (async)

    async def aconfigure(self, config: Mapping[str, Any]) -> dict[str, Any]:
        return await asyncio.to_thread(self.configure, config)

    async def arequests(
        self, *, agent: str | None = None, sku: str | None = None, bodies: bool = True
    ) -> list[dict[str, Any]]:
        return await asyncio.to_thread(self.requests, agent=agent, sku=sku, bodies=bodies)

    async def areset(self) -> None:
        await asyncio.to_thread(self.reset)

    async def astats(self) -> dict[str, Any]:
        return await asyncio.to_thread(self.stats)

    async def adown(self, seconds: float, mode: str = "503") -> None:
        await asyncio.to_thread(self.down, seconds, mode)

    async def aup(self) -> None:
        await asyncio.to_thread(self.up)

    async def arestart(self, *, hard: bool = False) -> None:
        await asyncio.to_thread(self.restart, hard=hard)


def _read_lines(process: subprocess.Popen[str], lines: queue.Queue[str | None]) -> None:
    """Forward the server's stdout lines to `lines`; None marks end of output."""
    stdout = process.stdout
    if stdout is not None:
        for line in stdout:
            lines.put(line)
        stdout.close()
    lines.put(None)
