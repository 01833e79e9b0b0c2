"""A ``fichas`` subcommand as a real process with an HTTP health endpoint, as operators run it.

``WorkerProcess`` and ``RevisorProcess`` share this: start through the real entry point with
the output in a log file, wait for ``/health/ready``, read ``/metrics``, stop by signal.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from harness import forkserver

REPO = Path(__file__).resolve().parents[1]
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))

# What each command imports before its first step, the Postgres drivers included: loaded before
# the barrier, so that processes released together reach that step together.
PRECARGA = {
    "worker": ["stream.serving.main"],
    "revisor": ["revision.web.app"],
    "migrar": [
        "herramientas.migrar",
        "grafo.checkpointer",
        "revision.almacen.database",
        "versiones.almacen",
    ],
}
POSTGRES = ["langgraph.checkpoint.postgres.aio", "psycopg_pool"]

# ``python -c`` program: import what the command ``argv[2]`` needs (``PRECARGA``), say so with
# ``<argv[1]>.<pid>.listo``, wait for the file argv[1], run ``fichas``. Only that command's
# modules: a ``fichas migrar`` that imported the worker's LangChain spent 2 s of CPU more.
LANZADOR = f"""
import importlib, os, sys, time
import herramientas.cli
for modulo in {PRECARGA!r}.get(sys.argv[2], []) + {POSTGRES!r}:
    importlib.import_module(modulo)
barrera = sys.argv[1]
open(f"{{barrera}}.{{os.getpid()}}.listo", "w").close()
while not os.path.exists(barrera):
    time.sleep(0.002)
raise SystemExit(herramientas.cli.main(sys.argv[2:]))
"""


class CommandProcess:
    """``python -m herramientas.cli ARGS`` serving HTTP on 127.0.0.1:``port``."""

    name = "process"

    def __init__(self, env: dict[str, str], port: int, log_path: Path) -> None:
        self.env = env
        self.port = port
        self.log_path = log_path
        self.proc: Any = None  # subprocess.Popen, or forkserver.ForkedProcess

    @property
    def url(self) -> str:
        """Base URL of the process's HTTP server."""
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The ``fichas`` arguments; subclasses say which subcommand."""
        raise NotImplementedError

    def start(self, extra_env: dict[str, str] | None = None, barrera: Path | None = None) -> None:
        """Start the process, appending its output to ``log_path``.

        With ``barrera``, the process imports what the command needs, waits for that file to
        exist and then runs the command's entry point: processes started that way are released
        together by creating the file (start-up races). Waiting after the imports, not before
        an ``exec``, makes them reach their first step within milliseconds of each other: on a
        loaded machine the imports alone spread over tens of seconds.
        """
        log = self.log_path.open("ab")
        argv = [sys.executable, "-m", "herramientas.cli", *self.command()]
        if barrera is not None:
            argv = [sys.executable, "-c", LANZADOR, str(barrera), *self.command()]
        self.proc = forkserver.popen(
            argv,
            env={**self.env, **(extra_env or {})},
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def wait_ready(self, timeout: float = 120) -> None:
        """Block until ``/health/ready`` answers 200; fail with the log if the process died."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.alive(), self.log_tail()
            try:
                with _OPENER.open(f"{self.url}/health/ready", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"{self.name} never became ready\n" + self.log_tail())

    def metrics(self) -> str:
        """The process's ``/metrics`` text."""
        with _OPENER.open(f"{self.url}/metrics", timeout=10) as resp:
            return str(resp.read().decode())

    def alive(self) -> bool:
        """Started and not exited."""
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL, as a crash would."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self, timeout: float = 120) -> int:
        """SIGTERM and wait for the exit code."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the process's output."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def soltar(barrera: Path, procesos: int, timeout: float = 600) -> None:
    """Create ``barrera`` once ``procesos`` processes started with it wait on it."""
    deadline = time.monotonic() + timeout
    while len(list(barrera.parent.glob(barrera.name + ".*.listo"))) < procesos:
        assert time.monotonic() < deadline, "the processes never reached the barrier"
        time.sleep(0.05)
    barrera.touch()
