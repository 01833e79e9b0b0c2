"""``fichas demo`` (what ``make demo`` runs): the whole job on one machine.

It starts what is missing (the local Kafka of ``scripts/kafka.sh``, the small CPU model of
``fichas llm-local``, one ``fichas worker``), writes the sample supplier feed into the input
topic, shows every line's fate while the outcomes arrive, and ends with a summary. Everything it
started is stopped on the way out, whether the run completed, timed out or was interrupted.

Why a run never sees another run's messages: each run gets a run id, and the worker's topics,
consumer group and data directory carry it (``proveedor.cambios.demo-<id>``, ...,
``.fichas/demo-<id>``). A second run therefore works on the same broker, reprocesses the feed
from scratch (the version store is per run) and reads only its own outcomes.

How it knows the run is complete, with the contract's guarantees as the only knowledge: every
valid event has an outcome (published or manual review), or a newer version of its SKU has one
(then it was obsolete and never gets one: guarantee 1, and outcomes of a SKU come in version
order, guarantee 3); every invalid line has a DLQ record, found by the partition and offset it
was written to (``origen`` of ``EventoRechazado``). Outcomes are deduplicated on ``event_id``
because delivery is at least once.

Environment: ``FICHAS_KAFKA_BROKERS`` pointing elsewhere than the local script's port
(``127.0.0.1:${FICHAS_KAFKA_PORT:-9092}``) uses that broker and starts none; ``FICHAS_LLM_URL``
set uses that OpenAI-compatible server (e.g. a vLLM, with its ``FICHAS_LLM_MODELO``) and starts
no local model. Outcomes are also written to ``salida/demo-<id>.jsonl`` in the format of
``fichas procesar``, so ``fichas informe salida/demo-<id>.jsonl`` reads them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any, TextIO

from criterios import familias_conocidas
from esquemas import EventoCambio, EventoInvalido, leer_evento
from esquemas.constantes import DESTINO_DLQ, DESTINO_PUBLICADAS, DESTINO_REVISION
from harness import red
from harness.red import free_port, port_open
from herramientas.estadistica import percentile
from herramientas.informe import Informe, Salida, calcular_informe
from stream.config import Settings

REPO_DIR = Path(__file__).resolve().parent.parent
KAFKA_SCRIPT = REPO_DIR / "scripts" / "kafka.sh"
DEFAULT_FEED = REPO_DIR / "ejemplos" / "proveedor.jsonl"
DEFAULT_TIMEOUT_S = 15 * 60.0
# Two attempts, not the contract's default three, so the sample feed ends in under 10 minutes on
# 2 shared cores: the 0.5B model's evaluator rejects nearly every ficha, so each event uses all
# its attempts (two model calls each, ~13 s per call measured); with three attempts the
# 10 events of the feed took about 15 minutes.
DEFAULT_MAX_INTENTOS = 2

# What the table and the summary call each fate of a feed line.
PUBLICADA = "publicada"
REVISION = "revisión"
DLQ = "DLQ"
OBSOLETO = "obsoleto"
PENDING = "…"
LABELS = {DESTINO_PUBLICADAS: PUBLICADA, DESTINO_REVISION: REVISION, DESTINO_DLQ: DLQ}

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

ANSI_COLORS = {PUBLICADA: "32", REVISION: "33", DLQ: "31", OBSOLETO: "2"}


class DemoError(RuntimeError):
    """Something the demo needs did not come up; the message says what and where to look."""


# ----------------------------------------------------------------------------- the feed


@dataclass
class FeedLine:
    """One non-blank line of the feed: what was sent, where it landed, and its outcome."""

    number: int  # 1-based line number in the feed file
    raw: bytes
    key: bytes | None
    evento: EventoCambio | None  # None: invalid, a DLQ record is expected
    error: str | None = None
    partition: int | None = None
    offset: int | None = None
    produced_ms: int | None = None
    destino: str | None = None  # fichas.publicadas / fichas.revision_manual / dlq
    evento_salida: dict[str, Any] | None = None
    outcome_ms: int | None = None

    @property
    def sku(self) -> str:
        """The SKU, or as much of one as an invalid line lets us read."""
        if self.evento is not None:
            return self.evento.sku
        return self.key.decode("utf-8", "replace") if self.key is not None else "-"

    @property
    def version(self) -> int | None:
        return self.evento.version if self.evento is not None else None

    @property
    def intentos(self) -> int | None:
        if self.evento_salida is None or self.destino == DESTINO_DLQ:
            return None
        value = self.evento_salida.get("intentos")
        return value if isinstance(value, int) else None

    @property
    def latency_ms(self) -> int | None:
        """From the moment it was produced to the timestamp of its outcome record."""
        if self.produced_ms is None or self.outcome_ms is None:
            return None
        return max(0, self.outcome_ms - self.produced_ms)


def key_of(raw: bytes) -> bytes | None:
    """The message key a feed would use: the SKU when the line says one, else none."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    sku = data.get("sku") if isinstance(data, dict) else None
    return sku.encode("utf-8") if isinstance(sku, str) and sku else None


def read_feed(path: Path) -> list[FeedLine]:
    """Every non-blank line, validated as the worker will, so the demo knows what to expect."""
    familias = familias_conocidas()
    lines: list[FeedLine] = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            raw = line.rstrip(b"\r\n")
            if not raw.strip():
                continue
            try:
                evento: EventoCambio | None = leer_evento(raw, familias)
                error = None
            except EventoInvalido as exc:
                evento, error = None, str(exc)
            lines.append(FeedLine(number, raw, key_of(raw), evento, error))
    return lines


# ----------------------------------------------------------------------------- progress


class Progress:
    """What has happened to each feed line, fed with the records of the output topics."""

    def __init__(self, lines: Sequence[FeedLine], input_topic: str, topics: Mapping[str, str]):
        """``topics`` maps each output topic to the ``destino`` its records mean."""
        self.lines = list(lines)
        self.input_topic = input_topic
        self.topics = dict(topics)
        self.duplicates = 0
        self.unmatched = 0
        self._by_event_id = {
            line.evento.event_id: line for line in self.lines if line.evento is not None
        }
        self._by_position: dict[tuple[int, int], FeedLine] = {}
        self._shown: dict[int, str] = {}

    def produced(self, line: FeedLine, partition: int, offset: int, timestamp_ms: int) -> None:
        """The broker acknowledged the line at this partition and offset."""
        line.partition, line.offset, line.produced_ms = partition, offset, timestamp_ms
        self._by_position[(partition, offset)] = line

    def record(self, topic: str, value: bytes | None, timestamp_ms: int) -> FeedLine | None:
        """Match one output record to its feed line; returns the line when it is news."""
        destino = self.topics.get(topic)
        try:
            evento = json.loads(value) if value is not None else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            evento = None
        if destino is None or not isinstance(evento, dict):
            self.unmatched += 1
            return None
        line = self._match(destino, evento)
        if line is None:
            self.unmatched += 1
            return None
        if line.destino is not None:  # at-least-once delivery: keep the first
            self.duplicates += 1
            return None
        line.destino, line.evento_salida, line.outcome_ms = destino, evento, timestamp_ms
        return line

    def _match(self, destino: str, evento: dict[str, Any]) -> FeedLine | None:
        """DLQ records by where the message was written; outcomes by ``event_id``."""
        if destino == DESTINO_DLQ:
            origen = evento.get("origen") or {}
            if origen.get("topic") != self.input_topic:
                return None
            particion, offset = origen.get("particion"), origen.get("offset")
            if not isinstance(particion, int) or not isinstance(offset, int):
                return None
            return self._by_position.get((particion, offset))
        event_id = evento.get("event_id")
        return self._by_event_id.get(event_id) if isinstance(event_id, str) else None

    def superseded(self, line: FeedLine) -> bool:
        """A newer version of the same SKU has an outcome: this one will never have one."""
        if line.evento is None:
            return False
        sku, version = line.evento.sku, line.evento.version
        return any(
            other.evento is not None
            and other.evento.sku == sku
            and other.evento.version > version
            and other.destino in (DESTINO_PUBLICADAS, DESTINO_REVISION)
            for other in self.lines
        )

    def state(self, line: FeedLine) -> str:
        """publicada / revisión / DLQ / obsoleto, or pending."""
        if line.destino is not None:
            return LABELS[line.destino]
        if self.superseded(line):
            return OBSOLETO
        return PENDING

    def complete(self) -> bool:
        """Every line has its final fate (see the module docstring)."""
        return all(self.state(line) != PENDING for line in self.lines)

    def pending(self) -> int:
        return sum(1 for line in self.lines if self.state(line) == PENDING)

    def changed(self) -> list[FeedLine]:
        """Lines whose state changed since the last call, in feed order."""
        out = []
        for line in self.lines:
            state = self.state(line)
            if self._shown.get(line.number, PENDING) != state:
                self._shown[line.number] = state
                out.append(line)
        return out

    def outcomes(self) -> list[dict[str, Any]]:
        """``{"destino", "evento"}`` per line with an outcome, in feed order (procesar's format)."""
        return [
            {"destino": line.destino, "evento": line.evento_salida}
            for line in self.lines
            if line.destino is not None and line.evento_salida is not None
        ]


# ----------------------------------------------------------------------------- summary


@dataclass
class Summary:
    """The closing numbers of a run."""

    counts: dict[str, int]
    informe: Informe
    latencies_ms: list[int]
    p50_ms: int | None
    p95_ms: int | None
    pending: int = 0
    duplicates: int = 0


def summarize(progress: Progress, max_intentos: int | None = None) -> Summary:
    """Counts per fate, approval per attempt (``herramientas.informe``), latency percentiles."""
    counts = dict.fromkeys((PUBLICADA, REVISION, DLQ, OBSOLETO, PENDING), 0)
    for line in progress.lines:
        counts[progress.state(line)] += 1
    fichas: list[Salida] = [
        (line.destino, line.evento_salida)
        for line in progress.lines
        if line.destino in (DESTINO_PUBLICADAS, DESTINO_REVISION)
        and line.destino is not None
        and line.evento_salida is not None
    ]
    informe = calcular_informe(fichas, max_intentos=max_intentos)
    latencies = [
        ms
        for line in progress.lines
        if line.destino in (DESTINO_PUBLICADAS, DESTINO_REVISION)
        and (ms := line.latency_ms) is not None
    ]
    pending = counts.pop(PENDING)
    return Summary(
        counts=counts,
        informe=informe,
        latencies_ms=latencies,
        p50_ms=percentile(latencies, 0.50),
        p95_ms=percentile(latencies, 0.95),
        pending=pending,
        duplicates=progress.duplicates,
    )


def _seconds(ms: int | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.1f} s"


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def render_summary(summary: Summary, where: Sequence[str]) -> str:
    """The closing text: counts, approval per attempt, latency, where the outcomes are."""
    c = summary.counts
    out = [
        "Resumen",
        f"  publicadas {c[PUBLICADA]}   revisión manual {c[REVISION]}   DLQ {c[DLQ]}   "
        f"obsoletas {c[OBSOLETO]}"
        + (f"   sin terminar {summary.pending}" if summary.pending else ""),
        "  aprobación por intento:",
    ]
    for fila in summary.informe.por_intento:
        out.append(
            f"    intento {fila.intento}: {fila.aprobadas}/{fila.llegaron} aprobadas "
            f"({_pct(fila.tasa)})"
        )
    if not summary.informe.por_intento:
        out.append("    (ninguna ficha terminada)")
    if summary.informe.rechazos:
        rechazos = ", ".join(f"{k} {v}" for k, v in summary.informe.rechazos.items())
        out.append(f"  rechazos por criterio (fichas en revisión): {rechazos}")
    out.append(
        f"  latencia por evento (de producido a salida): p50 {_seconds(summary.p50_ms)}, "
        f"p95 {_seconds(summary.p95_ms)} (n={len(summary.latencies_ms)})"
    )
    if summary.duplicates:
        out.append(
            f"  salidas repetidas descartadas (entrega al menos una vez): {summary.duplicates}"
        )
    out.append("  salidas escritas en:")
    out += [f"    {w}" for w in where]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------- live view


def render_rows(progress: Progress, now_ms: int) -> list[str]:
    """The table: one row per feed line with SKU, version, attempts, fate and elapsed time."""
    rows = [f"{'#':>3}  {'SKU':<12} {'versión':>7} {'intentos':>8}  {'destino':<10} {'tiempo':>9}"]
    for line in progress.lines:
        state = progress.state(line)
        if state == PENDING and line.produced_ms is not None:
            elapsed = f"{(now_ms - line.produced_ms) / 1000:.0f} s"
        elif state == OBSOLETO:
            elapsed = "-"
        else:
            elapsed = _seconds(line.latency_ms)
        version = "-" if line.version is None else str(line.version)
        intentos = "-" if line.intentos is None else str(line.intentos)
        rows.append(
            f"{line.number:>3}  {line.sku[:12]:<12} {version:>7} {intentos:>8}  "
            f"{state:<10} {elapsed:>9}"
        )
    return rows


class LiveView:
    """The table redrawn in place on a terminal; one line per finished event otherwise."""

    def __init__(self, out: TextIO, run_id: str, tty: bool | None = None) -> None:
        self._out = out
        self._run_id = run_id
        self._tty = out.isatty() if tty is None else tty
        self._drawn = 0
        self._started = time.monotonic()

    def _header(self, progress: Progress) -> str:
        done = len(progress.lines) - progress.pending()
        elapsed = int(time.monotonic() - self._started)
        return (
            f"demo {self._run_id}: {done}/{len(progress.lines)} líneas terminadas, "
            f"{elapsed // 60}:{elapsed % 60:02d} transcurrido"
        )

    def update(self, progress: Progress, now_ms: int) -> None:
        """Redraw (terminal) or print what changed (pipe, log file)."""
        if self._tty:
            self._redraw(progress, now_ms)
            return
        for line in progress.changed():
            state = progress.state(line)
            intentos = f" intentos {line.intentos}" if line.intentos is not None else ""
            version = f" v{line.version}" if line.version is not None else ""
            tiempo = f" en {_seconds(line.latency_ms)}" if line.latency_ms is not None else ""
            self._out.write(
                f"línea {line.number:>2} {line.sku}{version}: {state}{intentos}{tiempo}\n"
            )
        self._out.flush()

    def _redraw(self, progress: Progress, now_ms: int) -> None:
        width = shutil.get_terminal_size((100, 40)).columns
        rows = [self._header(progress), *render_rows(progress, now_ms)]
        text = []
        if self._drawn:
            text.append(f"\x1b[{self._drawn}F")  # to the first column of the table's first row
        text.append("\x1b[J")  # clear from there to the end of the screen
        for row in rows:
            text.append(_colour(row[: width - 1]) + "\n")
        self._out.write("".join(text))
        self._out.flush()
        self._drawn = len(rows)


def _colour(row: str) -> str:
    """Colour the fate word of a table row (terminal only)."""
    for label, code in ANSI_COLORS.items():
        marker = f"  {label}"
        if marker in row:
            return row.replace(marker, f"  \x1b[{code}m{label}\x1b[0m", 1)
    return row


# ----------------------------------------------------------------------------- services


def say(text: str) -> None:
    """Progress of the start-up and the stop; never fails (stdout may be a closed pipe)."""
    with contextlib.suppress(OSError, ValueError):
        print(f"demo: {text}", flush=True)


def wait_http(
    url: str, what: str, timeout: float, alive: Callable[[], bool], headers: Mapping[str, str]
) -> None:
    """``harness.red.wait_http`` with its failures as ``DemoError`` (a one-line message)."""
    try:
        red.wait_http(url, timeout, what, alive, headers)
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
    services: Services, env: Mapping[str, str], threads: int | None = None
) -> tuple[str, str | None]:
    """The LLM base URL and the model name to send (None: keep the worker's setting).

    ``threads``: of the local model (see ``choose_threads``).
    """
    url = env.get("FICHAS_LLM_URL")
    if url:
        say(f"using the LLM server at {url} (FICHAS_LLM_URL)")
        key = env.get("FICHAS_LLM_API_KEY", "EMPTY")
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


# ----------------------------------------------------------------------------- the run


async def produce_feed(brokers: str, topic: str, progress: Progress) -> None:
    """Write every feed line in order, key = its SKU (or none), and note where each landed."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(
        bootstrap_servers=brokers, acks="all", enable_idempotence=True, linger_ms=20
    )
    await producer.start()
    try:
        sent = []
        for line in progress.lines:
            now_ms = int(time.time() * 1000)
            future = await producer.send(topic, line.raw, key=line.key, timestamp_ms=now_ms)
            sent.append((line, future, now_ms))
        for line, future, now_ms in sent:
            meta = await future
            progress.produced(line, meta.partition, meta.offset, now_ms)
    finally:
        await producer.stop()


async def watch_outcomes(
    brokers: str,
    progress: Progress,
    view: LiveView,
    check: Callable[[], None],
    deadline: float,
) -> bool:
    """Read the output topics from the start until the run is complete; False on timeout."""
    from harness.topicos import build_reader, describe_partitions

    partitions, _ = await describe_partitions(brokers, list(progress.topics), "fichas-demo")
    consumer = build_reader(brokers, "fichas-demo")
    await consumer.start()
    try:
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        await produce_feed(brokers, progress.input_topic, progress)
        while not progress.complete():
            if time.monotonic() > deadline:
                return False
            check()
            batch = await consumer.getmany(timeout_ms=500)
            for tp, records in batch.items():
                for record in records:
                    progress.record(tp.topic, record.value, record.timestamp)
            view.update(progress, int(time.time() * 1000))
        # A line marked obsolete may still have its own outcome on another topic, not yet
        # read: take everything written so far before the final numbers.
        ends = await consumer.end_offsets(partitions)
        while any([await consumer.position(tp) < ends[tp] for tp in partitions]):
            batch = await consumer.getmany(timeout_ms=500)
            for tp, records in batch.items():
                for record in records:
                    progress.record(tp.topic, record.value, record.timestamp)
        view.update(progress, int(time.time() * 1000))
        return True
    finally:
        await consumer.stop()


def write_outcomes(progress: Progress, path: Path) -> None:
    """The outcomes as ``fichas procesar`` prints them, one JSON object per line."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for salida in progress.outcomes():
            handle.write(json.dumps(salida, ensure_ascii=False) + "\n")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fichas demo",
        description="Run the whole job locally: Kafka, the small CPU model (or FICHAS_LLM_URL), "
        "one worker, and the sample feed; show progress and a summary; stop what was started.",
    )
    parser.add_argument("--feed", type=Path, default=DEFAULT_FEED, help="EventoCambio JSONL")
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_S,
        metavar="S",
        help="give up after this many seconds (default 900)",
    )
    parser.add_argument(
        "--max-intentos",
        type=int,
        default=DEFAULT_MAX_INTENTOS,
        metavar="N",
        help="FICHAS_MAX_INTENTOS of the worker (default 2, see DEFAULT_MAX_INTENTOS)",
    )
    parser.add_argument(
        "--llm-threads",
        type=int,
        default=None,
        metavar="N",
        help="CPU threads of the local model (default: all CPUs if idle, else 1)",
    )
    parser.add_argument("--run-id", default=None, help="default: date, time and a random tag")
    parser.add_argument(
        "--salida", type=Path, default=Path("salida"), help="folder of the outcomes JSONL"
    )
    return parser


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    """SIGTERM ends the demo the way Ctrl-C does: through the clean-up path."""
    raise KeyboardInterrupt


def run(args: argparse.Namespace, services: Services, env: Mapping[str, str]) -> int:
    """Start the services, run the feed through, print the summary; 0 when complete."""
    run_id = args.run_id or time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)
    deadline = time.monotonic() + args.timeout
    lines = read_feed(args.feed)
    if not lines:
        raise DemoError(f"{args.feed} has no lines")
    data_dir = Path(".fichas").resolve() / f"demo-{run_id}"
    data_dir.mkdir(parents=True, exist_ok=True)
    services.log_dir = data_dir
    say(f"run {run_id}: {len(lines)} lines from {args.feed}; logs in {data_dir}/")

    threads = args.llm_threads
    if threads is None and not env.get("FICHAS_LLM_URL"):
        # Measured before the demo starts anything, so its own start-up does not count.
        busy = cpu_busy()
        threads = choose_threads(busy, os.cpu_count() or 1)
        say(f"other processes keep {busy:.1f} CPUs busy: the local model gets {threads} thread(s)")
    brokers = start_kafka(services, env)
    llm_url, llm_model = start_llm(services, env, threads)
    topics = demo_topics(Settings(), run_id)
    metrics_port = free_port()
    wenv = worker_env(
        env,
        brokers=brokers,
        llm_url=llm_url,
        llm_model=llm_model,
        topics=topics,
        run_id=run_id,
        data_dir=data_dir,
        metrics_port=metrics_port,
        max_intentos=args.max_intentos,
    )
    say(f"starting fichas worker (metrics on :{metrics_port}, log in {data_dir / 'worker.log'})")
    worker = services.spawn("worker", [sys.executable, "-m", "herramientas.cli", "worker"], wenv)
    wait_http(
        f"http://127.0.0.1:{metrics_port}/health/ready",
        "fichas worker",
        120,
        lambda: worker.poll() is None,
        {},
    )

    output_topics = {
        topics["FICHAS_TOPIC_PUBLICADAS"]: DESTINO_PUBLICADAS,
        topics["FICHAS_TOPIC_REVISION"]: DESTINO_REVISION,
        topics["FICHAS_TOPIC_DLQ"]: DESTINO_DLQ,
    }
    progress = Progress(lines, topics["FICHAS_TOPIC_ENTRADA"], output_topics)
    view = LiveView(sys.stdout, run_id)
    say(f"producing {len(lines)} lines into {topics['FICHAS_TOPIC_ENTRADA']}")
    complete = asyncio.run(watch_outcomes(brokers, progress, view, services.check, deadline))

    salida = args.salida / f"demo-{run_id}.jsonl"
    write_outcomes(progress, salida)
    where = [f"{topic} ({LABELS[destino]})" for topic, destino in output_topics.items()]
    where.append(f"{salida} ({len(progress.outcomes())} líneas, formato de fichas procesar)")
    print()
    print(render_summary(summarize(progress, args.max_intentos), where), end="", flush=True)
    if not complete:
        print(
            f"demo: timed out after {args.timeout:.0f} s with {progress.pending()} lines "
            "still pending",
            file=sys.stderr,
        )
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; whatever happens, what the demo started is stopped before it returns."""
    args = _parser().parse_args(argv)
    services = Services(log_dir=Path(".fichas"))
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    code = 1
    try:
        code = run(args, services, os.environ)
    except KeyboardInterrupt:
        print("\ndemo: interrupted", file=sys.stderr, flush=True)
        code = 130
    except DemoError as exc:
        print(f"demo: {exc}", file=sys.stderr, flush=True)
        code = 1
    finally:
        # A second Ctrl-C must not leave children behind half-way through the stop.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        with contextlib.suppress(Exception):
            services.stop()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
