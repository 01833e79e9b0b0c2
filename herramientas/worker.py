"""``fichas worker``: the stream worker (``stream.serving.main``) as a command, its exit codes.

A busy metrics port is refused before anything starts; a broker that does not answer at
start-up exits 4; a refused login, certificate or ACL, unequal partition counts or an old
group's assignor are configuration errors (exit 2), said in one line. docs/operacion.md.
"""

from __future__ import annotations

import argparse
import logging
import socket
import sys
from collections.abc import Sequence

from herramientas.arranque import EXIT_BROKER_UNREACHABLE, EXIT_USAGE, ajustes
from infra.config import ConfigError, Settings

log = logging.getLogger("fichas")


def _parser() -> argparse.ArgumentParser:
    """``fichas worker`` takes no arguments: its configuration is ``FICHAS_*``."""
    return argparse.ArgumentParser(
        prog="fichas worker",
        description="Run the stream worker: consume supplier events, emit outcomes. Logs are "
        "JSON lines on stderr (plain text when stderr is a terminal); docs/operacion.md says "
        "what each message means. Exit 2: bad configuration; 4: no Kafka broker answered "
        "within 60 s at start-up.",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fichas worker``."""
    _parser().parse_args(argv)
    settings = ajustes("worker")
    if settings is None:
        return EXIT_USAGE
    return _worker(settings)


def _worker(settings: Settings) -> int:
    """Refuse a busy metrics port up front; exit 4 without a broker."""
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
