"""The ``fichas`` command: ``worker``, ``procesar``, ``llm-local``, ``informe``, ``demo``,
``evaluar``.

Each subcommand imports what it needs only when it runs, so ``fichas --help`` is instant and
``fichas procesar`` does not load Kafka clients.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from stream.config import Settings

EXIT_LLM_UNAVAILABLE = 3

DESCRIPTION = """\
Turns supplier product-change events (EventoCambio) into publishable product pages (fichas):
a generator agent writes the ficha, code checks the mechanical rules, an evaluator agent
approves or lists problems, and a pure function publishes, retries, or after
FICHAS_MAX_INTENTOS attempts sends it to manual review.

Configuration comes from FICHAS_* environment variables (see the README)."""


def _parser() -> argparse.ArgumentParser:
    """The argument parser with one subparser per command."""
    parser = argparse.ArgumentParser(
        prog="fichas", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    procesar = sub.add_parser(
        "procesar",
        help="run the loop over a JSONL file of EventoCambio, without Kafka",
        description="Run every line of ENTRADA through the ficha loop and print one outcome "
        'per line to stdout: {"destino": "fichas.publicadas" | "fichas.revision_manual" | '
        '"dlq", "evento": {...}}. Invalid lines become dlq outcomes; exit 0.',
    )
    procesar.add_argument("entrada", type=Path, metavar="ENTRADA.jsonl")
    procesar.add_argument(
        "--espera-llm",
        type=float,
        default=600.0,
        metavar="S",
        help="give up (exit 3) if the LLM stays unreachable this many seconds (default 600)",
    )

    sub.add_parser(
        "worker",
        help="consume FICHAS_TOPIC_ENTRADA from Kafka until SIGTERM/SIGINT",
        description="Run the stream worker: consume supplier events, emit outcomes.",
    )
    sub.add_parser(
        "llm-local",
        help="serve the small CPU model (needs the [local] extra): llm-local [serve|prepare] ...",
        add_help=False,
    )
    sub.add_parser(
        "demo",
        help="the whole job on this machine: local Kafka, the CPU model, a worker, the sample feed",
        add_help=False,
    )
    sub.add_parser(
        "informe",
        help="approval rate per attempt, rejections by criterion, review reasons (see --help)",
        add_help=False,
    )
    sub.add_parser(
        "evaluar",
        help="measure evaluator or loop against the labelled set, compare runs (see --help)",
        add_help=False,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fichas`` console script."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["informe"]:
        from herramientas.informe import main_informe

        return main_informe(argv[1:])
    if argv[:1] == ["evaluar"]:
        from herramientas.evaluar import main as evaluar_main

        return evaluar_main(argv[1:])
    if argv[:1] == ["demo"]:
        from herramientas.demo import main as demo_main

        return demo_main(argv[1:])
    if argv[:1] == ["llm-local"]:
        from herramientas.llm_local import main as llm_main

        rest = argv[1:]
        return llm_main(rest if rest[:1] in (["serve"], ["prepare"]) else ["serve", *rest])
    args = _parser().parse_args(argv)
    settings = Settings()
    logging.basicConfig(
        level=settings.log_nivel.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    # httpx logs every LLM request at INFO (six lines per 3-attempt ficha); the sensor already
    # counts them, and failed requests surface as the exceptions the worker logs.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(max(logging.WARNING, logging.getLogger().level))
    if args.command == "procesar":
        return _procesar(settings, args.entrada, args.espera_llm)
    if args.command == "worker":
        from stream.worker import run_worker

        return run_worker(settings)
    raise AssertionError(args.command)


def _procesar(settings: Settings, entrada: Path, espera_llm: float) -> int:
    """``fichas procesar``: exit 0 when every line has an outcome, 3 if the LLM stayed down."""
    from grafo import LLMUnavailable, RetryPolicy
    from herramientas.procesar import procesar_fichero
    from stream import eventloop
    from stream.runtime import build_processor

    if not entrada.is_file():
        print(f"fichas procesar: no such file: {entrada}", file=sys.stderr)
        return 2

    async def run() -> int:
        async with build_processor(settings, policy=RetryPolicy(max_wait_s=espera_llm)) as proc:
            return await procesar_fichero(entrada, proc, settings.concurrencia)

    try:
        printed = eventloop.run(run())
    except* LLMUnavailable as group:
        print(f"fichas procesar: {group.exceptions[0]}", file=sys.stderr)
        printed = -1
    if printed < 0:
        return EXIT_LLM_UNAVAILABLE
    logging.getLogger("fichas").info("procesar: %d outcomes", printed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
