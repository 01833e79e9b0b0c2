"""Starting and stopping what the demo needs: Kafka, the local model, one worker."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from infra import network
from infra.config import Settings
from infra.network import free_port, port_open

REPO_DIR = Path(__file__).resolve().parents[2]
KAFKA_SCRIPT = REPO_DIR / "scripts" / "kafka.sh"

# Worker settings for one small CPU model: two fichas in flight match the server's two slots;
# 700 tokens is ample for one ficha or verdict and cuts a looping answer early; the timeout
# covers a slow answer on a busy 2-core machine; repeat penalty as docs/llm_local.md asks.
# The generator reads the origin without prices, promotions, URLs, emojis, injections or
# shouting: the small model copies its input, and this removes every mechanical defect of its
# first attempt on the measured events (docs/calidad.md).
WORKER_TUNING = {
    "FICHAS_LIMPIAR_ORIGEN": "true",
    "FICHAS_LLM_REPEAT_PENALTY": "1.1",
    "FICHAS_LLM_MAX_TOKENS": "700",
    "FICHAS_LLM_TIMEOUT_S": "300",
    "FICHAS_CONCURRENCIA": "2",
    "FICHAS_GRACIA_S": "10",
    "FICHAS_LOG_NIVEL": "INFO",
}


# The evaluator of the demo unless the caller sets FICHAS_EVALUADOR: code alone with the
# reader of translations (issue 48). On the CPU models it approves more good fichas, with
# more precision, than the model's verdict (none) or its quotes, and costs no model call:
# the table that decided it is in docs/calidad.md («El juez que lee traducciones»).
EVALUADOR_DEMO = "lector"


class DemoError(RuntimeError):
    """Something the demo needs did not come up; the message says what and where to look."""


def say(text: str) -> None:
    """Progress of the start-up and the stop; never fails (stdout may be a closed pipe)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"demo: {text}", flush=True)


def wait_http(
    url: str, what: str, timeout: float, alive: Callable[[], bool], headers: Mapping[str, str]
) -> None:
    """``infra.network.wait_http`` with its failures as ``DemoError`` (a one-line message)."""
    try:
        network.wait_http(url, timeout, what, alive, headers)
    except (TimeoutError, RuntimeError) as exc:
        raise DemoError(str(exc)) from exc


def log_tail(path: Path, lines: int = 25) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


@dataclass
class Services:
    """Everything the demo started, so that every way out stops exactly that, in order."""

    log_dir: Path
    kafka_env: dict[str, str] | None = None  # set once the demo started Kafka itself
    processes: list[tuple[str, subprocess.Popen[bytes], Path]] = field(default_factory=list)

    def spawn(self, name: str, argv: list[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
        """A child in its own process group: a Ctrl-C reaches the demo, which stops it in order."""
        log = self.log_dir / f"{name}.log"
        with log.open("ab") as handle:
            proc = subprocess.Popen(
                argv,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                process_group=0,
            )
        self.processes.append((name, proc, log))
        return proc

    def check(self) -> None:
        """Raise if a child died while the demo still needs it."""
        for name, proc, log in self.processes:
            if proc.poll() is not None:
                raise DemoError(
                    f"{name} exited with code {proc.returncode}; last lines of {log}:\n"
                    + log_tail(log)
                )

    def stop(self) -> None:
        """Worker first (SIGTERM: it drains), then the model, then Kafka if the demo started it.

        Each step is on its own: one failing (or a closed stdout) never skips the next.
        """
        for name, proc, _log in reversed(self.processes):
            if proc.poll() is not None:
                continue
            say(f"stopping {name} (pid {proc.pid})")
            try:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                with contextlib.suppress(OSError):
                    proc.kill()
                    proc.wait(timeout=10)
        self.processes.clear()
        if self.kafka_env is not None:
            say("stopping the local Kafka")
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                subprocess.run(
                    ["bash", str(KAFKA_SCRIPT), "stop"],
                    env=self.kafka_env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=False,
                    timeout=60,
                )
            self.kafka_env = None


def start_kafka(services: Services, env: Mapping[str, str]) -> str:
    """The bootstrap servers: the given broker, a running local one, or one started now."""
    port = int(env.get("FICHAS_KAFKA_PORT", "9092"))
    local = f"127.0.0.1:{port}"
    brokers = env.get("FICHAS_KAFKA_BROKERS")
    if brokers and brokers not in (local, f"localhost:{port}"):
        say(f"using the Kafka at {brokers} (FICHAS_KAFKA_BROKERS)")
        return brokers
    script_env = dict(env)
    status = subprocess.run(
        ["bash", str(KAFKA_SCRIPT), "status"],
        env=script_env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
    )
    if status.returncode == 0:
        say(f"using the local Kafka already running on {local}")
        return local
    if port_open("127.0.0.1", port):
        say(f"something already listens on {local}; using it as the Kafka broker")
        return local
    say(f"starting the local Kafka on {local} (scripts/kafka.sh)")
    services.kafka_env = script_env  # before starting: an interrupted start is stopped too
    started = subprocess.run(
        ["bash", str(KAFKA_SCRIPT), "start"], env=script_env, stdin=subprocess.DEVNULL, check=False
    )
    if started.returncode != 0:
        raise DemoError("scripts/kafka.sh start failed (see above)")
    return local


def cpu_busy(sample_s: float = 1.0) -> float:
    """How many CPUs' worth of work other processes are doing now (from /proc/stat)."""

    def snapshot() -> tuple[int, int]:
        with open("/proc/stat", encoding="ascii") as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return idle, sum(fields[:8])

    try:
        idle0, total0 = snapshot()
        time.sleep(sample_s)
        idle1, total1 = snapshot()
    except (OSError, ValueError, IndexError):
        return 0.0
    if total1 <= total0:
        return 0.0
    return (1 - (idle1 - idle0) / (total1 - total0)) * (os.cpu_count() or 1)


def choose_threads(busy_cpus: float, cpus: int) -> int:
    """All CPUs when they are idle; one when anything else is busy.

    llama.cpp's threads wait for each other at every step, so when another process takes one
    of the two cores the second thread mostly waits. Measured on this 2-core machine, one
    generator call (926 prompt tokens, 101 generated): idle, 6 s with 2 threads and 10 s with
    1; with one other busy process, 19 s with 2 threads and 11 s with 1 (while another model
    ran: 1.6-3.2 tokens/s with 2 threads, 10-12 with 1).
    """
    return max(1, cpus) if busy_cpus < 0.5 else 1


def start_llm(
    services: Services, env: Mapping[str, str], threads: int | None = None, key: str = "EMPTY"
) -> tuple[str, str | None]:
    """The LLM base URL and the model name to send (None: keep the worker's setting).

    ``threads``: of the local model (see ``choose_threads``); ``key``: the settings' API key
    (FICHAS_LLM_API_KEY or its file), which the server at FICHAS_LLM_URL may ask for.
    """
    url = env.get("FICHAS_LLM_URL")
    if url:
        say(f"using the LLM server at {url} (FICHAS_LLM_URL)")
        wait_http(
            url.rstrip("/") + "/models",
            "the LLM server",
            120,
            lambda: True,
            {"Authorization": f"Bearer {key}"},
        )
        return url, None
    if threads is None:
        threads = 1
    port = free_port()
    say(
        f"starting the local model on 127.0.0.1:{port} (fichas llm-local; log in "
        f"{services.log_dir / 'llm-local.log'})"
    )
    proc = services.spawn(
        "llm-local",
        [
            *(sys.executable, "-m", "herramientas.cli", "llm-local", "serve"),
            *("--port", str(port), "--threads", str(threads)),
        ],
        env,
    )
    # The first start joins and hashes the 491 MB model (seconds); loading takes a few more.
    wait_http(
        f"http://127.0.0.1:{port}/health", "fichas llm-local", 300, lambda: proc.poll() is None, {}
    )
    return f"http://127.0.0.1:{port}/v1", "local"


def demo_topics(base: Settings, run_id: str) -> dict[str, str]:
    """This run's topic names: the configured ones with ``.demo-<run id>`` appended."""
    suffix = f".demo-{run_id}"
    return {
        "FICHAS_TOPIC_ENTRADA": base.topic_entrada + suffix,
        "FICHAS_TOPIC_PUBLICADAS": base.topic_publicadas + suffix,
        "FICHAS_TOPIC_REVISION": base.topic_revision + suffix,
        "FICHAS_TOPIC_DLQ": base.topic_dlq + suffix,
        "FICHAS_TOPIC_MUESTRA": base.topic_muestra + suffix,
        "FICHAS_TOPIC_PUERTA": base.topic_puerta + suffix,
    }


def worker_env(
    env: Mapping[str, str],
    *,
    brokers: str,
    llm_url: str,
    llm_model: str | None,
    topics: Mapping[str, str],
    run_id: str,
    data_dir: Path,
    metrics_port: int,
    max_intentos: int,
) -> dict[str, str]:
    """The worker's environment: the caller's, with this run's names and the CPU tuning."""
    out = dict(env)
    out.update(WORKER_TUNING)
    out.setdefault("FICHAS_EVALUADOR", EVALUADOR_DEMO)
    out.update(topics)
    out.update(
        FICHAS_KAFKA_BROKERS=brokers,
        FICHAS_LLM_URL=llm_url,
        FICHAS_MAX_INTENTOS=str(max_intentos),
        FICHAS_DATA_DIR=str(data_dir),
        FICHAS_GRUPO=f"fichas-demo-{run_id}",
        FICHAS_METRICAS_PUERTO=str(metrics_port),
    )
    if llm_model is not None:
        out["FICHAS_LLM_MODELO"] = llm_model
    return out
