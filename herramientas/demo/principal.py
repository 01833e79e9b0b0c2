"""The command line of ``fichas demo``: parse, start the services, run, summarise, stop."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import secrets
import signal
import sys
import time
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

from esquemas.constantes import DESTINO_DLQ, DESTINO_PUBLICADAS, DESTINO_REVISION
from herramientas.arranque import leer_ajustes
from herramientas.demo import revisor
from herramientas.demo.avance import LABELS, Progress, read_feed
from herramientas.demo.estados_puerta import escribir_archivo, lineas_puerta, lineas_tokens
from herramientas.demo.kafka import watch_outcomes, write_outcomes
from herramientas.demo.resumen import render_summary, summarize
from herramientas.demo.servicios import (
    REPO_DIR,
    DemoError,
    Services,
    choose_threads,
    cpu_busy,
    demo_topics,
    say,
    start_kafka,
    start_llm,
    wait_http,
    worker_env,
)
from herramientas.demo.vista import LiveView
from infra.config import Settings
from infra.network import free_port

DEFAULT_FEED = REPO_DIR / "ejemplos" / "proveedor.jsonl"
DEFAULT_TIMEOUT_S = 15 * 60.0
# Two attempts, not the contract's default three, so the sample feed ends in under 10 minutes on
# 2 shared cores: the 0.5B model's evaluator rejects nearly every ficha, so each event uses all
# its attempts (two model calls each, ~13 s per call measured); with three attempts the
# 10 events of the feed took about 15 minutes.
DEFAULT_MAX_INTENTOS = 2


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
    parser.add_argument(
        "--puerta",
        type=Path,
        default=None,
        metavar="PUERTA.json",
        help="gate states to apply (the audit file fichas calibrar writes; default "
        "FICHAS_PUERTA_ARCHIVO); without one every gate is closed and nothing is published "
        "automatically (docs/puerta.md)",
    )
    # --- reviewer app (herramientas/demo/revisor.py) ---
    parser.add_argument(
        "--sin-revisor",
        action="store_true",
        help="end after the summary instead of serving the review app until Ctrl-C",
    )
    # --- end reviewer app ---
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
    kafka = Settings().model_copy(update={"kafka_brokers": brokers})  # the demo's own clients
    llm_url, llm_model = start_llm(services, env, threads, kafka.llm_api_key)
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
    # --- reviewer app: sample every published ficha, decisions on this run's topic ---
    if not args.sin_revisor:
        wenv.update(revisor.WORKER_ENV)
    wenv["FICHAS_TOPIC_DECISIONES"] = Settings().topic_decisiones + f".demo-{run_id}"
    # --- end reviewer app ---
    archivo_puerta = args.puerta or (
        Path(env["FICHAS_PUERTA_ARCHIVO"]) if env.get("FICHAS_PUERTA_ARCHIVO") else None
    )
    wenv.pop("FICHAS_PUERTA_ARCHIVO", None)  # the worker reads the topic, never the file
    if archivo_puerta is not None:
        try:
            escritos = asyncio.run(
                escribir_archivo(kafka, archivo_puerta, topics["FICHAS_TOPIC_PUERTA"])
            )
        except ValueError as exc:
            raise DemoError(str(exc)) from exc
        say(f"{escritos} gate state(s) from {archivo_puerta} on {topics['FICHAS_TOPIC_PUERTA']}")
    else:
        say("no gate file (--puerta): every gate is closed, nothing is published automatically")
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
    complete = asyncio.run(watch_outcomes(kafka, progress, view, services.check, deadline))

    salida = args.salida / f"demo-{run_id}.jsonl"
    write_outcomes(progress, salida)
    where = [f"{topic} ({LABELS[destino]})" for topic, destino in output_topics.items()]
    where.append(f"{salida} ({len(progress.outcomes())} líneas, formato de fichas procesar)")
    print()
    puerta = [f"  evaluador: {wenv['FICHAS_EVALUADOR']} (FICHAS_EVALUADOR)"]
    puerta += _lineas_puerta(metrics_port, progress)
    print(render_summary(summarize(progress, args.max_intentos), where, puerta), end="", flush=True)
    if not complete:
        print(
            f"demo: timed out after {args.timeout:.0f} s with {progress.pending()} lines "
            "still pending",
            file=sys.stderr,
        )
        return 1
    # --- reviewer app: serve the queue this run filled, until Ctrl-C ---
    if not args.sin_revisor:
        return revisor.servir(services, wenv, 0)
    # --- end reviewer app ---
    return 0


def _lineas_puerta(metrics_port: int, progress: Progress) -> list[str]:
    """The summary's gate lines, for the families of this run's fichas, from the worker."""
    familias = {
        str(line.evento_salida.get("familia"))
        for line in progress.lines
        if line.evento_salida is not None and line.evento_salida.get("familia")
    }
    try:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"http://127.0.0.1:{metrics_port}/metrics", timeout=5) as r:
            metricas = r.read().decode()
    except OSError as exc:
        return [f"  puerta: no se pudo leer /metrics del worker ({exc})"]
    fichas = sum(1 for line in progress.lines if line.evento_salida is not None)
    return lineas_puerta(metricas, familias) + lineas_tokens(metricas, fichas)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; whatever happens, what the demo started is stopped before it returns."""
    args = _parser().parse_args(argv)
    if leer_ajustes("demo") is None:
        return 2  # one line per bad variable, before anything is started
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
