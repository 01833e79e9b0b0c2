"""``python -m harness.fake_llm``: the scriptable fake LLM as a process, until SIGTERM/SIGINT.

It prints one line ``LISTENING http://127.0.0.1:<port>/v1`` to stdout once it accepts
connections; everything else goes to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from harness.fake_llm.answers import identity_error
from harness.fake_llm.script import ACTIONS_HELP, ConfigError, parse_config
from harness.fake_llm.server import loopback_only, serve

DESCRIPTION = "Scriptable OpenAI-compatible LLM server for tests and benchmarks."

TRY_IT = """\
Try fichas without a model: start this server, then point the product at the URL it prints.

  python -m harness.fake_llm --port 8000 &
  FICHAS_LLM_URL=http://127.0.0.1:8000/v1 fichas procesar ejemplos/proveedor.jsonl

With no --config every ficha is written and approved; a config scripts rejections, invalid
output, HTTP errors, hangs and closed connections per agent and SKU (harness.fake_llm.script),
and the evaluator's score when the request asks for logprobs, e.g.
  {"rules": [{"sku": "SKU-1", "evaluador": [{"accion": "aprobar", "puntuacion": 0.83}]}]}
Actions:
"""


def main(argv: list[str] | None = None) -> None:
    """``python -m harness.fake_llm``: serve until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.fake_llm",
        description=DESCRIPTION + "\n\n" + TRY_IT + ACTIONS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--config", type=Path, help="JSON script file (harness/fake_llm/script.py)")
    parser.add_argument("--record", type=Path, help="append every request here as JSON lines")
    parser.add_argument(
        "--identity",
        type=Path,
        help="JSON file: the model /v1/models says it serves (id, owned_by, root, "
        "max_model_len, parent; missing fields take the defaults)",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        help="DEBUG, INFO, WARNING (default) or ERROR; logs go to stderr",
    )
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="stop when the parent process dies"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s fake_llm %(levelname)s %(message)s",
    )
    host = loopback_only(args.host)
    try:
        raw = json.loads(args.config.read_text(encoding="utf-8")) if args.config else {}
        config = parse_config(raw)
    except (OSError, ValueError, ConfigError) as exc:
        raise SystemExit(f"fake_llm: bad --config: {exc}") from exc
    try:
        identity = json.loads(args.identity.read_text(encoding="utf-8")) if args.identity else {}
    except (OSError, ValueError) as exc:
        raise SystemExit(f"fake_llm: bad --identity: {exc}") from exc
    problem = identity_error(identity)
    if problem is not None:
        raise SystemExit(f"fake_llm: bad --identity: {problem}")
    asyncio.run(serve(host, args.port, config, args.record, args.exit_with_parent, identity))


if __name__ == "__main__":
    main()
