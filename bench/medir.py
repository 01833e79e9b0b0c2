"""Measuring a process from outside and a run from its records: CPU, RSS, rows, latency.

Everything is read the way an operator could read it: ``/proc/<pid>`` for CPU and peak RSS,
the SQLite files under ``FICHAS_DATA_DIR`` for checkpoint rows, the broker's record
timestamps for latency and throughput. Nothing here asks the processor about itself.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from grafo.checkpointer import SQLITE_FILE

REPO = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def cpu_ms(pid: int) -> float:
    """utime + stime of a process (all its threads), in milliseconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    # after "pid (comm)": state is field 3, utime 14, stime 15 -> indexes 11 and 12 here
    return (int(fields[11]) + int(fields[12])) * 1000 / CLK_TCK


def machine_cpu_ms() -> tuple[float, float]:
    """(busy, total) CPU milliseconds of the whole machine so far, summed over its CPUs.

    Busy is everything but idle and iowait in the ``cpu`` line of ``/proc/stat``: the broker,
    the fake LLM, the harness and anything else running count too, which is the point.
    """
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
    idle = fields[3] + fields[4]
    total = sum(fields)
    return (total - idle) * 1000 / CLK_TCK, total * 1000 / CLK_TCK


def peak_rss_mib(pid: int) -> float:
    """VmHWM: the highest resident set size the process has had."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@dataclass
class Proceso:
    """One measured process: ``fichas worker`` or ``bench.naive``, started by the harness."""

    nombre: str
    command: list[str]
    env: dict[str, str]
    log_path: Path
    ready_url: str | None = None  # worker: /health/ready
    ready_file: Path | None = None  # naive: a file it writes once partitions are assigned
    proc: subprocess.Popen[bytes] | None = None
    cpu_ready_ms: float = 0.0
    cpu_end_ms: float = 0.0
    rss_mib: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    def start(self) -> None:
        """Start it with its output to its log file."""
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(
                self.command,
                env=self.env,
                cwd=REPO,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def is_ready(self) -> bool:
        """Ready: the worker answers /health/ready, or the naive loop created its file."""
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise RuntimeError(f"{self.nombre} exited early\n{self.log_tail()}")
        if self.ready_file is not None:
            return self.assigned_partitions() is not None
        assert self.ready_url is not None
        try:
            with _OPENER.open(self.ready_url, timeout=2):
                return True
        except OSError:
            return False

    def wait_ready(self, timeout: float = 120) -> None:
        """Block until the process answers ready."""
        deadline = time.monotonic() + timeout
        while not self.is_ready():
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.nombre} never became ready\n{self.log_tail()}")
            time.sleep(0.1)

    def assigned_partitions(self) -> int | None:
        """Partitions of the last assignment the process logged, or None before the first.

        The worker logs ``assigned [...]`` on every rebalance (a JSON line, or text on a
        terminal); the naive loop writes its count to its ready file.
        """
        if self.ready_file is not None:
            text = self.ready_file.read_text() if self.ready_file.exists() else ""
            return int(text) if text.strip() else None
        if not self.log_path.exists():
            return None
        messages = [
            message
            for line in self.log_path.read_text(errors="replace").splitlines()
            if (message := _worker_message(line)).startswith("assigned [")
        ]
        if not messages:
            return None
        # Input partitions only: the worker is also assigned fichas.decisiones, co-partitioned
        # with the input (stream.flow.decisiones), which holds no work of the bench.
        topics = re.findall(r"\('([^']+)', \d+\)", messages[-1])
        return sum(1 for topic in topics if not topic.endswith("fichas.decisiones"))

    def mark_cpu(self) -> None:
        """Take the CPU spent so far: start-up and group join are not per ficha."""
        self.cpu_ready_ms = cpu_ms(self.pid)

    def sample_end(self) -> None:
        """CPU and peak RSS once every outcome is in, before the process is stopped."""
        self.cpu_end_ms = cpu_ms(self.pid)
        self.rss_mib = peak_rss_mib(self.pid)

    def stop(self, timeout: float = 60) -> None:
        """SIGTERM and wait; SIGKILL if it does not stop in time."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def log_tail(self, lines: int = 40) -> str:
        """Last lines of its log, for error messages."""
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def worker_command() -> list[str]:
    """``fichas worker`` exactly as the console script runs it."""
    return [sys.executable, "-m", "herramientas.cli", "worker"]


def naive_command() -> list[str]:
    """The naive design's process."""
    return [sys.executable, "-m", "bench.naive"]


@dataclass(frozen=True)
class Filas:
    """Checkpoint rows and bytes in one SQLite checkpoint file, in total and per SKU class."""

    checkpoints: int
    writes: int
    bytes: int
    por_clase: dict[str, tuple[int, int]]  # class prefix -> (checkpoints, writes)


COUNTER_TABLE = "bench_filas"


def count_inserts(data_dir: Path) -> bool:
    """Count, from now on, every row the saver inserts, with triggers in its own SQLite file.

    The worker deletes a ficha's checkpoint thread once its outcome is recorded, so the rows
    left after a run say nothing of what the run wrote; these counters do. Call it once the
    process is ready (its saver has created the tables); False when there is no file yet.
    """
    path = data_dir / SQLITE_FILE
    if not path.exists():
        return False
    with sqlite3.connect(path, timeout=30) as conn:
        conn.execute(
            f"create table if not exists {COUNTER_TABLE} (tabla text, clase text, filas integer, "
            "bytes integer, primary key (tabla, clase))"
        )
        for tabla, size in (
            ("checkpoints", "length(new.checkpoint) + length(new.metadata)"),
            ("writes", "length(new.value)"),
        ):
            conn.execute(
                f"create trigger if not exists bench_{tabla} after insert on {tabla} begin "
                f"insert into {COUNTER_TABLE} values ('{tabla}', substr(new.thread_id, 1, 2), "
                f"1, {size}) on conflict (tabla, clase) do update set filas = filas + 1, "
                f"bytes = bytes + excluded.bytes; end"
            )
    return True


def checkpoint_rows(data_dir: Path) -> Filas:
    """Checkpoint and write rows and the bytes of their blobs, in total and per SKU class.

    Bytes are ``checkpoint`` + ``metadata`` of checkpoints and ``value`` of writes: what the
    saver serialised. The class of a row is its thread id's SKU prefix (A1, A2, A3, NV). Where
    ``count_inserts`` ran, the rows inserted since; otherwise the rows present now.
    """
    path = data_dir / SQLITE_FILE
    if not path.exists():
        return Filas(0, 0, 0, {})
    with sqlite3.connect(path) as conn:
        counted = conn.execute(
            "select 1 from sqlite_master where name = ?", (COUNTER_TABLE,)
        ).fetchone()
        query = (
            f"select tabla, clase, filas, bytes from {COUNTER_TABLE}"
            if counted
            else "select 'checkpoints', substr(thread_id, 1, 2), count(*), "
            "coalesce(sum(length(checkpoint) + length(metadata)), 0) from checkpoints group by 2 "
            "union all select 'writes', substr(thread_id, 1, 2), count(*), "
            "coalesce(sum(length(value)), 0) from writes group by 2"
        )
        rows = conn.execute(query).fetchall()
    por_clase: dict[str, list[int]] = {}
    totals = {"checkpoints": 0, "writes": 0}
    total_bytes = 0
    for tabla, clase, filas, size in rows:
        por_clase.setdefault(clase, [0, 0])[0 if tabla == "checkpoints" else 1] += filas
        totals[tabla] += filas
        total_bytes += size
    return Filas(
        totals["checkpoints"],
        totals["writes"],
        total_bytes,
        {k: (v[0], v[1]) for k, v in por_clase.items()},
    )


def _worker_message(line: str) -> str:
    """The message of one ``stream.flow.worker`` log line, JSON or text; "" for any other line."""
    if line.startswith("{"):
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            return ""
        return (
            str(record.get("message", "")) if record.get("logger") == "stream.flow.worker" else ""
        )
    _, marker, message = line.partition("stream.flow.worker: ")
    return message if marker else ""
