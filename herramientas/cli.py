"""The ``fichas`` command: ``worker``, ``procesar``, ``producir``, ``llm-local``, ``informe``,
``demo``, ``revisor``, ``evaluar``, ``calibrar``, ``puerta``, ``migrar``.

Each subcommand imports what it needs only when it runs, so ``fichas --help`` is instant and
``fichas procesar`` does not load Kafka clients.

Exit codes: 0 done; 2 bad usage or configuration (one line per problem on standard error, no
traceback); 3 the LLM stayed unreachable (``procesar``); 4 no Kafka broker answered at start-up
(``worker``, ``producir``); 5 the schema lock stayed held (``migrar``). Messages for
operators are in English (docs/operacion.md).
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from infra.config import ConfigError, Settings, effective, load_settings

EXIT_USAGE = 2
EXIT_LLM_UNAVAILABLE = 3
EXIT_BROKER_UNREACHABLE = 4

if TYPE_CHECKING:
    from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
    from grafo import FuentePuerta
    from herramientas.procesar import Resumen

log = logging.getLogger("fichas")

DESCRIPTION = """\
Turns supplier product-change events (EventoCambio) into publishable product pages (fichas):
a generator agent writes the ficha, code checks the mechanical rules, an evaluator agent
approves or lists problems, and a pure function publishes, retries, or after
FICHAS_MAX_INTENTOS attempts sends it to manual review.

Configuration comes from FICHAS_* environment variables (see the README). Logs, messages
and exit codes: docs/operacion.md."""


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
        '"dlq", "evento": {...}}. Invalid lines become dlq outcomes. Exit 0 when every line '
        "has an outcome; 2 on bad usage or configuration, or when FICHAS_DATA_DIR holds "
        "outcomes of these events made with another model or criteria version; 3 when the "
        "LLM stays unreachable.",
    )
    procesar.add_argument(
        "entrada",
        metavar="ENTRADA.jsonl",
        help="EventoCambio lines, or - for standard input; a leading UTF-8 BOM and blank "
        "lines are skipped and counted",
    )
    procesar.add_argument(
        "--espera-llm",
        type=float,
        default=600.0,
        metavar="S",
        help="give up (exit 3) if the LLM stays unreachable this many seconds (default 600); "
        "each retry is reported on stderr with its cause",
    )
    procesar.add_argument(
        "--puerta",
        type=Path,
        metavar="PUERTA.json",
        help="the publication gate to apply (the audit file fichas calibrar writes; default "
        "FICHAS_PUERTA_ARCHIVO). Without one every gate is closed and, under the default "
        "FICHAS_PUERTA=certificada, the loop publishes nothing (docs/puerta.md)",
    )

    sub.add_parser(
        "worker",
        help="consume FICHAS_TOPIC_ENTRADA from Kafka until SIGTERM/SIGINT",
        description="Run the stream worker: consume supplier events, emit outcomes. Logs are "
        "JSON lines on stderr (plain text when stderr is a terminal); docs/operacion.md says "
        "what each message means. Exit 2: bad configuration; 4: no Kafka broker answered "
        "within 60 s at start-up.",
    )
    producir = sub.add_parser(
        "producir",
        help="send a JSONL file of EventoCambio to FICHAS_TOPIC_ENTRADA (key = SKU)",
        description="Feed a running worker: check every line as the worker would and send "
        "the valid ones to FICHAS_TOPIC_ENTRADA on FICHAS_KAFKA_BROKERS, keyed by SKU. "
        "Invalid lines are reported (file:line: code: message) and skipped; exit 0 when "
        "everything valid was acknowledged by the broker.",
    )
    producir.add_argument(
        "entrada",
        metavar="FICHERO",
        nargs="?",
        help="EventoCambio lines, or - for standard input",
    )
    producir.add_argument(
        "--desde-dlq",
        action="store_true",
        help="instead of a file: send again the original payload of every record on "
        "FICHAS_TOPIC_DLQ (read to its end), through the same checks (docs/despliegue.md, "
        "'Reprocesar un topic')",
    )
    producir.add_argument(
        "--estricto",
        action="store_true",
        help="send nothing and exit 2 if any line is invalid",
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
        "revisor",
        help="the reviewer web app; 'revisor usuarios NOMBRE' adds a reviewer (see --help)",
        add_help=False,
    )
    sub.add_parser(
        "informe",
        help="approval rate per attempt, rejections by criterion, review reasons (see --help)",
        add_help=False,
    )
    sub.add_parser(
        "migrar",
        help="create or upgrade every store's schema under one lock; run before a release's "
        "workers (see --help)",
        add_help=False,
    )
    sub.add_parser(
        "evaluar",
        help="measure evaluator or loop against the labelled set, compare runs (see --help)",
        add_help=False,
    )
    sub.add_parser(
        "calibrar",
        help="certify the publication gate's score threshold against people's labels; "
        "unbiased data only (see --help, docs/puerta.md)",
        add_help=False,
    )
    sub.add_parser(
        "puerta",
        help="hold a publication gate closed or release it: puerta retener|liberar FAMILIA|* "
        "--motivo TEXTO; promote a candidate key: puerta promover --de ID --a ID (see --help)",
        add_help=False,
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fichas`` console script."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["informe"]:
        from herramientas.informe import main_informe

        return main_informe(argv[1:])
    if argv[:1] == ["revisor"]:
        from revision.web.app import main as revisor_main

        return revisor_main(argv[1:])
    if argv[:1] == ["migrar"]:
        from herramientas.migrar import main as migrar_main

        return migrar_main(argv[1:])
    if argv[:1] == ["evaluar"]:
        from herramientas.evaluar.principal import main as evaluar_main

        return evaluar_main(argv[1:])
    if argv[:1] == ["calibrar"]:
        from herramientas.calibrar.principal import main as calibrar_main

        return calibrar_main(argv[1:])
    if argv[:2] == ["puerta", "promover"]:
        from herramientas.promocion import main as promover_main

        return promover_main(argv[2:])
    if argv[:1] == ["puerta"]:
        from herramientas.retencion import main as puerta_main

        return puerta_main(argv[1:])
    if argv[:1] == ["demo"]:
        from herramientas.demo.principal import main as demo_main

        return demo_main(argv[1:])
    if argv[:1] == ["llm-local"]:
        from herramientas.llm_local import main as llm_main

        rest = argv[1:]
        return llm_main(rest if rest[:1] in (["serve"], ["prepare"]) else ["serve", *rest])
    args = _parser().parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as exc:
        for line in exc.lines:
            print(f"fichas {args.command}: {line}", file=sys.stderr)
        return EXIT_USAGE
    from grafo.contexto import campos  # the event a line is about, inside the worker's lanes
    from infra import logs

    logs.configure(settings.log_nivel, campos=campos)
    log.info("configuration", extra={"configuracion": effective(settings)})
    if args.command == "procesar":
        return _procesar(settings, args.entrada, args.espera_llm, args.puerta)
    if args.command == "producir":
        if (args.entrada is not None) == args.desde_dlq:
            print("fichas producir: give FICHERO (or -) or --desde-dlq", file=sys.stderr)
            return EXIT_USAGE
        return _producir(settings, args.entrada, args.estricto)
    if args.command == "worker":
        return _worker(settings)
    raise AssertionError(args.command)


def _worker(settings: Settings) -> int:
    """``fichas worker``: refuse a busy metrics port up front; exit 4 without a broker."""
    from aiokafka.errors import KafkaConnectionError

    from infra.kafka.access import refusal
    from infra.kafka.clients import BrokerUnreachable, GrupoIncompatible
    from infra.kafka.topics import ParticionesDistintas
    from stream.serving.main import run_worker

    busy = _port_busy(settings.metricas_puerto)
    if busy:
        print(
            f"fichas worker: FICHAS_METRICAS_PUERTO={settings.metricas_puerto} is not "
            f"available ({busy}): stop what uses it or choose another port",
            file=sys.stderr,
        )
        return EXIT_USAGE
    try:
        return run_worker(settings)
    except ConfigError as exc:  # the candidate's key is the live key (stream.candidata.bucle)
        for line in exc.lines:
            print(f"fichas worker: {line}", file=sys.stderr)
        return EXIT_USAGE
    except BrokerUnreachable as exc:
        log.critical("%s; exiting", exc)
        return EXIT_BROKER_UNREACHABLE
    except (ParticionesDistintas, GrupoIncompatible) as exc:  # settings, as a bad variable is
        log.critical("%s; exiting", exc)
        return EXIT_USAGE
    except KafkaConnectionError as exc:  # the broker went away between two start-up steps
        log.critical(
            "Kafka at %s (FICHAS_KAFKA_BROKERS) lost during start-up: %s; exiting",
            settings.kafka_brokers,
            exc,
        )
        return EXIT_BROKER_UNREACHABLE
    except Exception as exc:
        rechazo = refusal(exc, settings)  # a login, a certificate or an ACL: settings too
        if rechazo is None:
            raise
        log.critical("%s; exiting", rechazo)
        return EXIT_USAGE


def _port_busy(port: int) -> str | None:
    """Why the metrics server could not bind ``port`` (None when it can, or for port 0)."""
    if port == 0:
        return None
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def _estados_offline(settings: Settings, archivo: Path | None) -> dict[str, EstadoPuerta]:
    """The gate states ``fichas procesar`` applies: the audit file's, or none (all closed).

    Raises ``ValueError`` for a file that cannot be read as gate states.
    """
    from puerta.auditoria import estados_de_archivo

    archivo = archivo or settings.puerta_archivo
    return dict(estados_de_archivo(archivo)) if archivo is not None else {}


def _puerta_offline(
    settings: Settings,
    clave: ClavePuerta,
    estados: dict[str, EstadoPuerta],
    archivo: Path | None,
) -> FuentePuerta | None:
    """The gate ``fichas procesar`` applies under the running ``clave``; said on stderr."""
    from criterios import familias_conocidas
    from esquemas.constantes import PUERTA_VEREDICTO
    from stream.gobierno.fuente import fija, razon

    if settings.puerta == PUERTA_VEREDICTO:
        print(
            "fichas procesar: FICHAS_PUERTA=veredicto: published on the evaluator's yes; "
            "these publications are NOT certified against people",
            file=sys.stderr,
        )
        return None
    puerta = fija(clave, estados)
    if not (archivo or settings.puerta_archivo):
        print(
            "fichas procesar: no gate file (--puerta or FICHAS_PUERTA_ARCHIVO): every gate is "
            "closed, fichas whose checks pass go to review as sin_garantia",
            file=sys.stderr,
        )
    for familia in sorted(familias_conocidas()):
        texto = razon(familia, puerta.clave, puerta.estados())[1]
        print(f"fichas procesar: {texto}", file=sys.stderr)
    return puerta


def _procesar(
    settings: Settings, entrada: str, espera_llm: float, archivo_puerta: Path | None = None
) -> int:
    """``fichas procesar``: exit 0 when every line has an outcome, 3 if the LLM stayed down."""
    from criterios import CRITERIOS_VERSION
    from grafo import Backoff, LLMUnavailable
    from herramientas.procesar import (
        EstadoDeOtraEjecucion,
        Huella,
        guardar_huella,
        leer_entrada,
        leer_huella,
        procesar_fichero,
    )
    from infra import eventloop
    from stream.gobierno.identidad import clave_servida
    from stream.gobierno.runtime import build_processor

    try:
        leida = leer_entrada(entrada)
    except OSError as exc:
        print(f"fichas procesar: cannot read {entrada}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    _avisos_entrada("procesar", leida.bom, 0)  # blank lines: in the closing summary
    try:
        estados = _estados_offline(settings, archivo_puerta)
    except ValueError as exc:
        print(f"fichas procesar: {exc}", file=sys.stderr)
        return EXIT_USAGE
    actual = Huella(settings.llm_modelo, CRITERIOS_VERSION)
    guardada = leer_huella(settings.data_dir)
    donde = _donde(settings)
    policy = Backoff(max_wait_s=espera_llm, report_each=True)

    async def run() -> Resumen:
        # The key names the model the server serves, as the worker's does
        # (stream.gobierno.identidad).
        clave = await clave_servida(settings, policy)
        puerta = _puerta_offline(settings, clave, estados, archivo_puerta)
        async with build_processor(settings, clave, policy=policy, puerta=puerta) as proc:
            return await procesar_fichero(
                leida, proc, settings.concurrencia, huellas=(guardada, actual)
            )

    resumen: Resumen | None = None
    code = 0
    try:
        resumen = eventloop.run(run())
    except* LLMUnavailable as group:
        print(f"fichas procesar: {group.exceptions[0]}", file=sys.stderr)
        code = EXIT_LLM_UNAVAILABLE
    except* EstadoDeOtraEjecucion as group:
        print(
            f"fichas procesar: {group.exceptions[0]}. Not reusing them: set FICHAS_DATA_DIR "
            f"to an empty folder to start from scratch (stored state: {donde})",
            file=sys.stderr,
        )
        code = EXIT_USAGE
    if resumen is None:
        return code
    guardar_huella(settings.data_dir, actual)
    print(f"fichas procesar: {_resumen(resumen, leida.blancas, donde)}", file=sys.stderr)
    return 0


def _n(count: int, noun: str) -> str:
    """``1 blank line``, ``2 blank lines``."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _donde(settings: Settings) -> str:
    """Where the stored state lives, as the person configured it."""
    if settings.postgres_dsn:
        return "FICHAS_POSTGRES_DSN"
    return str(settings.data_dir)


def _avisos_entrada(command: str, bom: bool, blancas: int) -> None:
    """Say what was skipped in the input, so nothing vanishes without a word."""
    if bom:
        print(f"fichas {command}: UTF-8 BOM at the start of the input stripped", file=sys.stderr)
    if blancas:
        print(f"fichas {command}: {_n(blancas, 'blank line')} skipped", file=sys.stderr)


def _resumen(resumen: Resumen, blancas: int, donde: str) -> str:
    """``12 outcomes: 9 fichas.publicadas, ...; 3 reused from ./.fichas (...)``."""
    from esquemas.constantes import DESTINO_DLQ, DESTINO_PUBLICADAS, DESTINO_REVISION

    partes = ", ".join(
        f"{resumen.por_destino.get(d, 0)} {d}"
        for d in (DESTINO_PUBLICADAS, DESTINO_REVISION, DESTINO_DLQ)
    )
    texto = f"{resumen.total} outcomes: {partes}"
    if blancas:
        texto += f"; {_n(blancas, 'blank line')} skipped"
    if resumen.reutilizadas:
        texto += (
            f"; {resumen.reutilizadas} reused from {donde} (stored by an earlier run, no LLM "
            "call); FICHAS_DATA_DIR to start from scratch"
        )
    return texto


def _producir(settings: Settings, entrada: str | None, estricto: bool) -> int:
    """``fichas producir``: exit 0 sent, 2 invalid input with --estricto or Kafka refused, 4
    no broker. ``entrada`` None: the DLQ's payloads (``--desde-dlq``)."""
    from herramientas.procesar import leer_entrada
    from herramientas.producir import EXIT_INVALID, enviar, informar, leer_dlq, preparar
    from infra import eventloop
    from infra.kafka.access import refusal
    from infra.kafka.clients import BrokerUnreachable, explain_refusal

    try:
        if entrada is None:
            leida, omitidos = eventloop.run(leer_dlq(settings))
            for omitido in omitidos:
                print(f"fichas producir: not sent again: {omitido}", file=sys.stderr)
        else:
            leida = leer_entrada(entrada)
    except OSError as exc:
        print(f"fichas producir: cannot read {entrada}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokerUnreachable as exc:
        print(f"fichas producir: {exc}; nothing sent", file=sys.stderr)
        return EXIT_BROKER_UNREACHABLE
    except Exception as exc:
        rechazo = eventloop.run(explain_refusal(exc, settings))
        if rechazo is None:
            raise
        print(f"fichas producir: {rechazo}; nothing sent", file=sys.stderr)
        return EXIT_USAGE
    lote = preparar(leida)
    _avisos_entrada("producir", False, leida.blancas)
    informar(lote, leida, estricto)
    if lote.invalidos and estricto:
        return EXIT_INVALID
    try:
        eventloop.run(enviar(settings, lote.validos))
    except BrokerUnreachable as exc:
        print(f"fichas producir: {exc}; nothing sent", file=sys.stderr)
        return EXIT_BROKER_UNREACHABLE
    except Exception as exc:
        rechazo = refusal(exc, settings)
        if rechazo is None:
            raise
        print(f"fichas producir: {rechazo}; nothing sent", file=sys.stderr)
        return EXIT_USAGE
    print(
        f"fichas producir: {len(lote.validos)} events sent to {settings.topic_entrada} on "
        f"{settings.kafka_brokers}; {_n(len(lote.invalidos), 'invalid line')} skipped",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
