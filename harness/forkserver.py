"""The suite's ``python -m herramientas.cli`` processes, forked from a server that already
imported the third-party libraries (``PRELOAD``): 1 to 1.5 s of CPU per command instead of 4 to 6.

A fork runs the command's own ``__main__`` with the request's argv, environment, working
directory (first on ``sys.path``, as ``-m`` puts it), ``PYTHONPATH``, standard streams and
session; it answers signals at its own pid, and ends as an interpreter does (threads joined,
``atexit``, streams flushed), its status read back as ``Popen`` reports it.

Invariants: ``PRELOAD`` is third-party only, so the project's modules and every ``FICHAS_*``
read at import are loaded fresh in the child; a request whose ``PYTHON*`` start-up variables
differ from the server's (a shim package on ``PYTHONPATH``) runs as a real process; the suite
turns forking on (``enable``, tests/conftest.py) and a benchmark never does, since its
processes are what it measures. ``FICHAS_TEST_FORK=0`` keeps every command a real process.

Protocol: one Unix-socket connection per command; the client sends a JSON header with its three
standard descriptors (``SCM_RIGHTS``); the server forks, answers the pid, then the return code.
README, "Where the suite's time goes", has the measurements and what a fork does not share.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, Any

# Imported once in the server: what ``fichas worker``, ``fichas revisor`` and the tools load
# from outside the project (about 2.5 s of CPU for the worker's set). Third-party only.
PRELOAD = (
    "langchain_core.messages",
    "langchain_core.runnables",
    "langchain.agents",
    "langchain_openai",
    "openai",
    "openai.resources",  # the client's resources, loaded at its first request otherwise
    "httpcore",
    "trio",
    "numpy",
    "simplemma",
    "py3langid",
    "langgraph.graph",
    "langgraph.checkpoint.sqlite.aio",
    "langgraph.checkpoint.postgres.aio",
    "psycopg_pool",
    "aiokafka",
    "aiokafka.admin",
    "aiokafka.helpers",
    "aiokafka.coordinator.assignors",
    "pythonjsonlogger.json",
    "jinja2",  # the reviewer app's pages
    "argon2",  # its passwords
    "aiohttp.web",
    "prometheus_client",
    "pydantic",
    "pydantic_settings",
    "uvloop",
    "yaml",
)
PYTHON_VARIABLES = ("PYTHONPATH", "PYTHONHOME", "PYTHONSAFEPATH", "PYTHONSTARTUP",
                    "PYTHONNOUSERSITE", "PYTHONUSERBASE", "PYTHONEXECUTABLE", "PYTHONUTF8",
                    "PYTHONIOENCODING", "PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONOPTIMIZE",
                    "PYTHONINSPECT", "PYTHONVERBOSE", "PYTHONPROFILEIMPORTTIME",
                    "PYTHONFAULTHANDLER", "PYTHONTRACEMALLOC", "PYTHONINTMAXSTRDIGITS",
                    "PYTHONUNBUFFERED", "PYTHONHASHSEED")  # fmt: skip
REPO = Path(__file__).resolve().parents[1]
_HEADER = struct.Struct(">I")
_CODE = struct.Struct(">q")


# ------------------------------------------------------------------ server


def serve(path: str) -> None:
    """Import ``PRELOAD``, listen on ``path``, say ``ready`` on stdout, then fork a child per
    request until stdin closes (the test process that started it is gone)."""
    for name in PRELOAD:
        importlib.import_module(name)
    gc.freeze()  # the preloaded objects stay out of every child's collections (and its pages)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    waiting: dict[int, socket.socket] = {}
    os.write(1, b"ready\n")
    while True:
        readable, _, _ = select.select([listener.fileno(), 0, wake_r], [], [], 1.0)
        if 0 in readable and not os.read(0, 4096):
            break
        if wake_r in readable:
            os.read(wake_r, 4096)
        if listener.fileno() in readable:
            conn, _ = listener.accept()
            pid = _fork_request(conn, [listener, wake_r, wake_w], waiting)
            if pid:
                waiting[pid] = conn
        _reap(waiting)
    listener.close()


def _reap(waiting: dict[int, socket.socket]) -> None:
    """Tell each finished child's client its return code."""
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            try:
                conn.sendall(_CODE.pack(os.waitstatus_to_exitcode(status)))
            except OSError:
                pass
            conn.close()


def _fork_request(
    conn: socket.socket, own: list[Any], waiting: Mapping[int, socket.socket]
) -> int | None:
    """Read one request and fork its child; the child never returns from here."""
    try:
        conn.settimeout(30)
        # the descriptors come with the message's first bytes: read those with recv_fds
        msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 3)
        while len(msg) < _HEADER.size:
            msg += _recv_exactly(conn, _HEADER.size - len(msg))
        size = _HEADER.unpack(msg[: _HEADER.size])[0]
        body = msg[_HEADER.size :]
        if len(body) < size:
            body += _recv_exactly(conn, size - len(body))
        request = json.loads(body)
        conn.settimeout(None)
    except (OSError, ValueError) as exc:
        print(f"forkserver: bad request: {exc!r}", file=sys.stderr, flush=True)
        conn.close()
        return None
    pid = os.fork()
    if pid == 0:
        try:
            for item in (*own, *waiting.values(), conn):
                if isinstance(item, socket.socket):
                    item.close()
                else:
                    os.close(item)
            _child(request, fds)
        finally:
            os._exit(70)  # the child never goes back to the server's loop
    for fd in fds:
        os.close(fd)
    conn.sendall(_CODE.pack(pid))
    return pid


def _recv_exactly(conn: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise OSError("connection closed mid-request")
        data += chunk
    return data


def _child(request: dict[str, Any], fds: list[int]) -> None:
    """Become the request's process: descriptors, session, directory, environment, argv and
    path as ``python -m MODULE`` (or ``-c CODE``) would have them; run it; end like an
    interpreter does."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    if request.get("setsid"):
        os.setsid()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in set(fds):
        if fd > 2:
            os.close(fd)
    cwd = request["cwd"]
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(request["env"])
    time.tzset()
    extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    base = [p for p in sys.path[1:] if p not in _server_pythonpath()]
    sys.path[:] = [cwd if request.get("module") else "", *extra, *base]
    code = 0
    try:
        if request.get("module"):
            import runpy

            sys.argv = [request["module"], *request["args"]]
            runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
        else:
            sys.argv = ["-c", *request["args"]]
            exec(compile(request["code"], "<string>", "exec"), {"__name__": "__main__"})
    except SystemExit as exit_:
        code = _exit_code(exit_.code)
    except KeyboardInterrupt:
        code = -signal.SIGINT
    except BaseException as error:
        # the traceback starts where a fresh interpreter's would, not in this function
        trace = error.__traceback__.tb_next if error.__traceback__ else None
        sys.excepthook(type(error), error.with_traceback(trace), trace)
        code = 1
    _finish(code)


def _server_pythonpath() -> set[str]:
    """The server's own PYTHONPATH entries (its start-up put them on ``sys.path``)."""
    return {p for p in os.environ.get("_FORKSERVER_PYTHONPATH", "").split(os.pathsep) if p}


def _exit_code(value: object) -> int:
    """``SystemExit``'s argument as the interpreter turns it into a status."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    print(value, file=sys.stderr)
    return 1


def _finish(code: int) -> None:
    """What the interpreter does at exit, then the exit: threads joined, ``atexit``, streams
    flushed. A death by SIGINT is re-raised as the signal, as Python 3.8+ does."""
    try:
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
    if code < 0:
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    os._exit(code)


# ------------------------------------------------------------------ client

_server: subprocess.Popen[bytes] | None = None
_socket_path: str | None = None
_lock = threading.Lock()


_enabled = False
_TRACE = os.environ.get("FICHAS_TEST_FORK_TRACE", "")  # a file: each command not forked, and why


def enable() -> None:
    """Fork this process's commands from now on (the suite's ``conftest.py`` calls it; a
    benchmark never does: its processes are measured, so they are real). ``FICHAS_TEST_FORK=0``
    keeps it off."""
    global _enabled
    _enabled = os.environ.get("FICHAS_TEST_FORK", "1") != "0"


def enabled() -> bool:
    """Whether commands are forked."""
    return _enabled


def _python_variables(env: Mapping[str, str], cwd: str) -> dict[str, str]:
    """The ``PYTHON*`` start-up variables of ``env``; a ``PYTHONPATH`` entry that only repeats
    the working directory (``-m`` puts it first anyway) is left out."""
    found = {k: env[k] for k in PYTHON_VARIABLES if env.get(k)}
    if "PYTHONPATH" in found:
        own = {cwd, str(REPO)}  # the checkout holds only the project's packages, none preloaded
        rest = [p for p in found["PYTHONPATH"].split(os.pathsep) if p and p not in own]
        if rest:
            found["PYTHONPATH"] = os.pathsep.join(rest)
        else:
            del found["PYTHONPATH"]
    return found


def _start_server() -> str:
    """The server of this test process, started at the first command."""
    global _server, _socket_path
    with _lock:
        if _server is not None and _server.poll() is None and _socket_path:
            return _socket_path
        folder = tempfile.mkdtemp(prefix="forkserver-")
        path = os.path.join(folder, "s")
        env = dict(os.environ)
        env["_FORKSERVER_PYTHONPATH"] = env.get("PYTHONPATH", "")
        log = open(os.path.join(folder, "server.log"), "ab")
        proc = subprocess.Popen(
            [sys.executable, "-m", "harness.forkserver", path],
            cwd=REPO,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if line != b"ready\n":
            raise RuntimeError(f"the fork server did not start ({proc.poll()}); see {log.name}")
        _server, _socket_path = proc, path
        atexit.register(_stop_server, proc)
        return path


def _stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Close the server's stdin: it ends its loop; its children are the tests' to stop."""
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def forkable(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> bool:
    """A ``python -m herramientas.cli`` (or ``-c``) command whose start-up variables are the
    server's: it can be a fork."""
    if not enabled() or len(argv) < 3 or argv[0] != sys.executable:
        return False
    if argv[1] not in ("-m", "-c"):
        return False
    if argv[1] == "-m" and argv[2] != "herramientas.cli":
        return False
    return _python_variables(env, cwd) == _python_variables(os.environ, cwd)


def _descriptor(spec: Any, default: int, pipes: list[tuple[int, int]], write: bool) -> int:
    """The descriptor the child gets for one of ``Popen``'s ``stdin``/``stdout``/``stderr``."""
    if spec is None:
        return default
    if spec == subprocess.PIPE:
        r, w = os.pipe()
        pipes.append((r, w))
        return w if write else r
    if spec == subprocess.DEVNULL:
        return os.open(os.devnull, os.O_WRONLY if write else os.O_RDONLY)
    if isinstance(spec, int):
        return spec
    return int(spec.fileno())


def _stream(fd: int, mode: str, text: bool) -> IO[Any]:
    """Our end of a pipe, in text (UTF-8, universal newlines) or bytes, as ``Popen`` gives it."""
    if text:
        return open(fd, mode, encoding="utf-8")
    return open(fd, mode + "b")


class ForkedProcess:
    """The part of ``subprocess.Popen`` the suite uses, for a command forked by the server."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        stdin: Any = None,
        stdout: Any = None,
        stderr: Any = None,
        text: bool = False,
        start_new_session: bool = False,
    ) -> None:
        self.args = list(args)
        self.returncode: int | None = None
        self.stdin: IO[Any] | None = None
        self.stdout: IO[Any] | None = None
        self.stderr: IO[Any] | None = None
        directory = os.fspath(cwd) if cwd is not None else os.getcwd()
        request: dict[str, Any] = {
            "env": dict(os.environ if env is None else env),
            "cwd": os.path.abspath(directory),
            "setsid": start_new_session,
            "args": self.args[3:],
        }
        if self.args[1] == "-m":
            request["module"] = self.args[2]
        else:
            request["code"] = self.args[2]
        opened: list[int] = []
        ins: list[tuple[int, int]] = []
        outs: list[tuple[int, int]] = []
        errs: list[tuple[int, int]] = []
        fd_in = _descriptor(stdin, 0, ins, write=False)
        fd_out = _descriptor(stdout, 1, outs, write=True)
        fd_err = fd_out if stderr == subprocess.STDOUT else _descriptor(stderr, 2, errs, True)
        for spec, fd in ((stdin, fd_in), (stdout, fd_out), (stderr, fd_err)):
            if spec == subprocess.DEVNULL:
                opened.append(fd)
        self._conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            self._conn.connect(_start_server())
            payload = json.dumps(request).encode()
            message = _HEADER.pack(len(payload)) + payload
            sent = socket.send_fds(self._conn, [message], [fd_in, fd_out, fd_err])
            self._conn.sendall(message[sent:])
            self.pid = _CODE.unpack(_recv_exactly(self._conn, _CODE.size))[0]
        finally:
            for fd in opened:
                os.close(fd)
            for child_end, _ in ins:
                os.close(child_end)
            for _, child_end in (*outs, *errs):
                os.close(child_end)
        if ins:
            self.stdin = _stream(ins[0][1], "w", text)
        if outs:
            self.stdout = _stream(outs[0][0], "r", text)
        if errs:
            self.stderr = _stream(errs[0][0], "r", text)

    def poll(self) -> int | None:
        """The return code if the process ended, else None."""
        if self.returncode is None:
            readable, _, _ = select.select([self._conn], [], [], 0)
            if readable:
                self._read_code()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the end; ``subprocess.TimeoutExpired`` after ``timeout`` seconds."""
        if self.returncode is None:
            readable, _, _ = select.select([self._conn], [], [], timeout)
            if not readable:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            self._read_code()
        assert self.returncode is not None
        return self.returncode

    def _read_code(self) -> None:
        try:
            self.returncode = _CODE.unpack(_recv_exactly(self._conn, _CODE.size))[0]
        except OSError:
            self.returncode = -signal.SIGKILL  # the server died: its children are gone too
        self._conn.close()

    def send_signal(self, sig: int) -> None:
        """Signal the process unless it has ended."""
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: Any = None, timeout: float | None = None) -> tuple[Any, Any]:
        """Write ``input``, read stdout and stderr to their ends, wait; as ``Popen`` does."""
        results: dict[str, Any] = {}

        def read(name: str, stream: IO[Any]) -> None:
            results[name] = stream.read()
            stream.close()

        readers = [
            threading.Thread(target=read, args=(name, stream), daemon=True)
            for name, stream in (("out", self.stdout), ("err", self.stderr))
            if stream is not None
        ]
        for reader in readers:
            reader.start()
        if self.stdin is not None:
            try:
                if input:
                    self.stdin.write(input)
                self.stdin.close()
            except BrokenPipeError:
                pass
        deadline = None if timeout is None else time.monotonic() + timeout
        for reader in readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.wait(remaining)
        return results.get("out"), results.get("err")

    def __enter__(self) -> ForkedProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        for stream in (self.stdin, self.stdout, self.stderr):
            if stream is not None:
                stream.close()
        self.wait()


def popen(args: Sequence[str], **kwargs: Any) -> Any:
    """``subprocess.Popen(args, **kwargs)``, or the same command forked by the server when it
    can be (``forkable``). Only ``env``, ``cwd``, ``stdin``, ``stdout``, ``stderr``, ``text``
    and ``start_new_session`` are understood by the fork; anything else runs a real process."""
    env = kwargs.get("env")
    cwd = os.path.abspath(os.fspath(kwargs.get("cwd") or os.getcwd()))
    known = {"env", "cwd", "stdin", "stdout", "stderr", "text", "start_new_session"}
    fork = set(kwargs) <= known and forkable(args, os.environ if env is None else env, cwd)
    if _TRACE:
        with open(_TRACE, "a") as trace:
            why = sorted(set(kwargs) - known) or _python_variables(env or os.environ, cwd)
            print("fork" if fork else "spawn", list(args)[1:4], why, file=trace)
    if fork:
        return ForkedProcess(args, **kwargs)
    return subprocess.Popen(args, **kwargs)


def run(
    args: Sequence[str],
    *,
    input: Any = None,
    capture_output: bool = False,
    timeout: float | None = None,
    check: bool = False,
    **kwargs: Any,
) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run``, with ``popen``'s choice of a fork or a real process."""
    if capture_output:
        kwargs["stdout"] = kwargs["stderr"] = subprocess.PIPE
    if input is not None:
        kwargs["stdin"] = subprocess.PIPE
    proc = popen(args, **kwargs)
    try:
        out, err = proc.communicate(input, timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise
    result = subprocess.CompletedProcess(list(args), proc.returncode, out, err)
    if check:
        result.check_returncode()
    return result


if __name__ == "__main__":
    serve(sys.argv[1])
