"""The ``fichas`` command: one table of subcommands, read by the help and by the dispatch.

``SUBCOMANDOS`` names each subcommand, the module whose ``main(argv)`` runs it with its own
parser, and its line in ``fichas --help``. A module is imported only when its subcommand runs,
so ``fichas --help`` is instant and ``fichas procesar`` does not load Kafka clients. Exit codes
(``herramientas.arranque``): 0 done; 2 bad usage or configuration (one line per problem on
standard error, no traceback); 3 the LLM stayed unreachable (``procesar``); 4 no Kafka broker
answered at start-up (``worker``, ``producir``); 5 the schema lock stayed held (``migrar``).
Messages for operators are in English (docs/operacion.md).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

DESCRIPTION = """\
Turns supplier product-change events (EventoCambio) into publishable product pages (fichas):
a generator agent writes the ficha, code checks the mechanical rules, an evaluator agent
approves or lists problems, and a pure function publishes, retries, or after
FICHAS_MAX_INTENTOS attempts sends it to manual review.

Configuration comes from FICHAS_* environment variables (see the README). Logs, messages
and exit codes: docs/operacion.md."""


@dataclass(frozen=True)
class Subcomando:
    """One subcommand: the words that name it after ``fichas``, the module that runs it, its
    line in ``fichas --help`` (None: said by its first word's line) and the module's function
    that takes the arguments after those words."""

    palabras: tuple[str, ...]
    modulo: str
    ayuda: str | None
    funcion: str = "main"


SUBCOMANDOS: tuple[Subcomando, ...] = (
    Subcomando(
        ("procesar",),
        "herramientas.procesar",
        "run the loop over a JSONL file of EventoCambio, without Kafka",
    ),
    Subcomando(
        ("worker",),
        "herramientas.worker",
        "consume FICHAS_TOPIC_ENTRADA from Kafka until SIGTERM/SIGINT",
    ),
    Subcomando(
        ("producir",),
        "herramientas.producir",
        "send a JSONL file of EventoCambio to FICHAS_TOPIC_ENTRADA (key = SKU)",
    ),
    Subcomando(
        ("llm-local",),
        "herramientas.llm_local",
        "serve the small CPU model (needs the [local] extra): llm-local [serve|prepare] ...",
        funcion="main_cli",
    ),
    Subcomando(
        ("demo",),
        "herramientas.demo.principal",
        "the whole job on this machine: local Kafka, the CPU model, a worker, the sample feed",
    ),
    Subcomando(
        ("revisor",),
        "revision.web.app",
        "the reviewer web app; 'revisor usuarios NOMBRE' adds a reviewer (see --help)",
    ),
    Subcomando(
        ("informe",),
        "herramientas.informe",
        "approval rate per attempt, rejections by criterion, review reasons (see --help)",
        funcion="main_informe",
    ),
    Subcomando(
        ("migrar",),
        "herramientas.migrar",
        "create or upgrade every store's schema under one lock; run before a release's "
        "workers (see --help)",
    ),
    Subcomando(
        ("evaluar",),
        "herramientas.evaluar.principal",
        "measure evaluator or loop against the labelled set, compare runs (see --help)",
    ),
    Subcomando(
        ("calibrar",),
        "herramientas.calibrar.principal",
        "certify the publication gate's score threshold against people's labels; "
        "unbiased data only (see --help, docs/puerta.md)",
    ),
    Subcomando(("puerta", "promover"), "herramientas.promocion", None),
    Subcomando(
        ("puerta",),
        "herramientas.retencion",
        "hold a publication gate closed or release it: puerta retener|liberar FAMILIA|* "
        "--motivo TEXTO; promote a candidate key: puerta promover --de ID --a ID (see --help)",
    ),
)


def _parser() -> argparse.ArgumentParser:
    """``fichas``'s own parser: which subcommand, with the table's line for each; what follows
    the subcommand is its own parser's."""
    parser = argparse.ArgumentParser(
        prog="fichas", description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for subcomando in SUBCOMANDOS:
        if subcomando.ayuda is not None:
            sub.add_parser(subcomando.palabras[0], help=subcomando.ayuda, add_help=False)
    return parser


def subcomando_de(argv: Sequence[str]) -> Subcomando | None:
    """The table's entry ``argv`` starts with, the longest first (``puerta promover`` before
    ``puerta``); None when it names none."""
    for subcomando in sorted(SUBCOMANDOS, key=lambda s: -len(s.palabras)):
        if tuple(argv[: len(subcomando.palabras)]) == subcomando.palabras:
            return subcomando
    return None


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fichas`` console script."""
    argv = sys.argv[1:] if argv is None else argv
    subcomando = subcomando_de(argv)
    if subcomando is None:
        _parser().parse_args(argv)  # exits 2 with argparse's line (or 0 after --help)
        raise AssertionError(argv)
    modulo = importlib.import_module(subcomando.modulo)
    correr = cast(Callable[[list[str]], int], getattr(modulo, subcomando.funcion))
    return correr(list(argv[len(subcomando.palabras) :]))


if __name__ == "__main__":
    raise SystemExit(main())
