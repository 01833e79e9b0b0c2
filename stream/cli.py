"""The ``fichas`` command: ``worker``, ``procesar``, ``llm-local``.

Each subcommand imports what it needs only when it runs, so ``fichas --help`` is instant and
``fichas procesar`` does not load Kafka clients.
"""

from __future__ import annotations

import argparse
import asyncio
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
    llm = sub.add_parser(
        "llm-local",
        help="serve the small CPU model (needs the [local] extra) on an OpenAI-compatible API",
        description="Serve Qwen2.5-Coder-0.5B-Instruct (Q4_K_M) with llama.cpp on the CPU.",
    )
    llm.add_argument("--host", default="127.0.0.1")
    llm.add_argument("--port", type=int, default=8000)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fichas`` console script."""
    args = _parser().parse_args(argv)
    settings = Settings()
    logging.basicConfig(
        level=settings.log_nivel.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if args.command == "procesar":
        return _procesar(settings, args.entrada, args.espera_llm)
    if args.command == "worker":
        from stream.worker import run_worker

        return run_worker(settings)
    if args.command == "llm-local":
        from stream.llm_local import main as llm_main

        return llm_main(["serve", "--host", args.host, "--port", str(args.port)])
    raise AssertionError(args.command)


def _procesar(settings: Settings, entrada: Path, espera_llm: float) -> int:
    """``fichas procesar``: exit 0 when every line has an outcome, 3 if the LLM stayed down."""
    from grafo import LLMUnavailable, RetryPolicy
    from stream.offline import procesar_fichero
    from stream.runtime import build_processor

    if not entrada.is_file():
        print(f"fichas procesar: no such file: {entrada}", file=sys.stderr)
        return 2

    async def run() -> int:
        async with build_processor(settings, policy=RetryPolicy(max_wait_s=espera_llm)) as proc:
            return await procesar_fichero(entrada, proc, settings.concurrencia)

    try:
        printed = asyncio.run(run())
    except* LLMUnavailable as group:
        print(f"fichas procesar: {group.exceptions[0]}", file=sys.stderr)
        printed = -1
    if printed < 0:
        return EXIT_LLM_UNAVAILABLE
    logging.getLogger("fichas").info("procesar: %d outcomes", printed)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
