"""Rows and bytes of every state table before, during and after N fichas through the worker.

    python -m bench.estado --fichas 10000 --skus 100 [--postgres DSN] [--repo PATH]

Runs a private Kafka broker (or uses ``--bootstrap``'s), the fake LLM at 0 latency and one
``fichas worker`` (from ``--repo``, default this checkout, so an older release can be
measured the same way). The
events are ``--skus`` SKUs with successive versions, produced one version at a time and
each batch awaited, so every event goes through the graph (none is skipped as obsolete).
With ``--postgres`` a fresh database is created in that cluster and dropped afterwards; else
the embedded SQLite files are measured. Prints one JSON line per measurement point.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, worker_env
from infra.network import free_port

REPO = Path(__file__).resolve().parents[1]
PG_TABLES = (
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "fichas_versiones",
    "fichas_resultados",
)


def _medir_postgres(dsn: str) -> dict[str, Any]:
    """Rows and total bytes (with indexes and TOAST) of every state table."""
    import psycopg

    out: dict[str, Any] = {}
    with psycopg.connect(dsn, autocommit=True) as conn:
        for table in PG_TABLES:
            exists = conn.execute("select to_regclass(%s)", (table,)).fetchone()
            if not exists or exists[0] is None:
                continue
            rows = conn.execute(f"select count(*) from {table}").fetchone()
            size = conn.execute("select pg_total_relation_size(%s)", (table,)).fetchone()
            out[table] = {"rows": rows[0] if rows else 0, "bytes": size[0] if size else 0}
    return out


def _medir_sqlite(data_dir: Path) -> dict[str, Any]:
    """Rows per table and bytes per file (database + WAL) of the embedded stores; every table
    found is listed (``versiones.sqlite`` holds ``fichas_versiones`` and ``fichas_resultados``
    since its migration 1, ``versiones``/``resultados`` in a release before migrations)."""
    out: dict[str, Any] = {}
    for name in ("checkpoints.sqlite", "versiones.sqlite"):
        path = data_dir / name
        if not path.exists():
            continue
        conn = sqlite3.connect(str(path))
        try:
            query = "select name from sqlite_master where type='table'"
            tables = [r[0] for r in conn.execute(query)]
            for table in tables:
                out[f"{name}:{table}"] = {
                    "rows": conn.execute(f"select count(*) from {table}").fetchone()[0]
                }
        finally:
            conn.close()
        wal = path.with_name(path.name + "-wal")
        out[f"{name}:bytes"] = path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    return out


def _eventos_terminados(worker: WorkerProcess) -> float:
    return sum(
        worker.metric("fichas_events_total", result=r)
        for r in ("publicada", "revision_manual", "obsoleto", "reentregada")
    )


async def medir(args: argparse.Namespace) -> None:
    """Start what the run needs, feed the worker version after version, print each point."""
    tmp = Path(tempfile.mkdtemp(prefix="fichas-estado-"))
    broker = None
    bootstrap: str = args.bootstrap
    if not bootstrap:
        broker = KafkaBroker(free_port(), tmp / "kafka", controller_port=free_port())
        broker.start()
        bootstrap = broker.bootstrap
    llm = FakeLLM()
    llm.configure({"latency_ms": 0})
    dsn = None
    admin_dsn = args.postgres
    if admin_dsn:
        import psycopg

        db = f"estado_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(admin_dsn, autocommit=True) as conn:
            conn.execute(f"create database {db}")
        dsn = admin_dsn.rsplit("/", 1)[0] + f"/{db}"
    topics = Topics()
    data_dir = tmp / "datos"
    extra = {"FICHAS_RETENCION_H": str(args.retencion_h)}
    if dsn:
        extra["FICHAS_POSTGRES_DSN"] = dsn
    env = worker_env(bootstrap, llm, topics, data_dir, **extra)
    env["PYTHONPATH"] = str(args.repo)
    worker = WorkerProcess(env, tmp / "worker.log")
    worker.proc = None

    def medida(fichas: int) -> None:
        datos = _medir_postgres(dsn) if dsn else _medir_sqlite(data_dir)
        print(json.dumps({"fichas": fichas, "tablas": datos}), flush=True)

    try:
        await create_input_topic(bootstrap, topics.entrada, partitions=4)
        import subprocess

        log = (tmp / "worker.log").open("ab")
        worker.proc = subprocess.Popen(
            [sys.executable, "-m", "herramientas.cli", "worker"],
            env=env,
            cwd=args.repo,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        worker.wait_ready(timeout=120)
        medida(0)
        versions = args.fichas // args.skus
        puntos = {int(versions * f) for f in (0.25, 0.5, 0.75, 1.0)}
        started = time.monotonic()
        for version in range(1, versions + 1):
            lote = [
                evento_dict(f"EST-{n:05d}", version, event_id=f"EST-{n:05d}-v{version}")
                for n in range(args.skus)
            ]
            await produce(
                bootstrap,
                topics.entrada,
                [(e["sku"].encode(), json.dumps(e).encode()) for e in lote],
            )
            deadline = time.monotonic() + 300 + args.skus * 0.2
            while _eventos_terminados(worker) < version * args.skus:
                assert time.monotonic() < deadline, worker.log_tail()
                await asyncio.sleep(0.2)
            if version in puntos:
                medida(version * args.skus)
        print(
            json.dumps({"segundos": round(time.monotonic() - started, 1)}),
            flush=True,
        )
        if args.esperar_poda_s:
            await asyncio.sleep(args.esperar_poda_s)
            medida(versions * args.skus)
    finally:
        if worker.proc is not None:
            worker.terminate(timeout=120)
        llm.stop()
        if broker is not None:
            broker.stop()
        if admin_dsn and dsn:
            import psycopg

            with psycopg.connect(admin_dsn, autocommit=True) as conn:
                conn.execute(f"drop database if exists {dsn.rsplit('/', 1)[1]} with (force)")
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    """Parse the options and measure."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--fichas", type=int, default=10_000)
    parser.add_argument("--skus", type=int, default=100)
    parser.add_argument("--postgres", default=os.environ.get("FICHAS_TEST_POSTGRES_DSN"))
    parser.add_argument("--sqlite", action="store_true", help="ignore --postgres")
    parser.add_argument("--repo", type=Path, default=REPO)
    parser.add_argument("--retencion-h", type=float, default=168.0)
    parser.add_argument("--esperar-poda-s", type=float, default=0.0)
    parser.add_argument(
        "--bootstrap", help="a running broker to use instead of starting a private one"
    )
    args = parser.parse_args(argv)
    if args.sqlite:
        args.postgres = None
    asyncio.run(medir(args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
