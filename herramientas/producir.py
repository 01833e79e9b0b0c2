"""``fichas producir FICHERO|-``: feed a running worker from a JSONL file of ``EventoCambio``.

Each line is checked as the worker checks it (``esquemas.leer_evento``: size, JSON, schema,
family) and sent to ``FICHAS_TOPIC_ENTRADA`` with the SKU as key, the partitioning the worker's
per-SKU order relies on. An invalid line is reported on standard error (line number, code,
message) and skipped; with ``--estricto`` any invalid line stops the command before anything is
sent. Lines are sent as they are in the file (after a leading BOM is stripped), so the worker
sees exactly what the file says.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from criterios import familias_conocidas
from esquemas import EventoInvalido, leer_evento
from herramientas.arranque import (
    EXIT_BROKER_UNREACHABLE,
    EXIT_USAGE,
    ajustes,
    avisos_entrada,
    contar,
)
from herramientas.procesar import Entrada, leer_entrada
from infra.config import Settings

EXIT_INVALID = 2


@dataclass
class Lote:
    """The file split into what will be sent and what was refused."""

    validos: list[tuple[bytes, bytes]] = field(default_factory=list)  # (key, value)
    invalidos: list[str] = field(default_factory=list)  # one message per refused line


def preparar(entrada: Entrada) -> Lote:
    """Validate every line as the worker would; keep (SKU, raw line) for the valid ones."""
    familias = familias_conocidas()
    lote = Lote()
    for linea in entrada.lineas:
        try:
            evento = leer_evento(linea.raw, familias)
        except EventoInvalido as exc:
            campo = f" (campo {exc.campo})" if exc.campo else ""
            lote.invalidos.append(
                f"{entrada.nombre}:{linea.offset + 1}: {exc.codigo}: {exc.mensaje}{campo}"
            )
            continue
        lote.validos.append((evento.sku.encode("utf-8"), linea.raw))
    return lote


async def enviar(settings: Settings, mensajes: list[tuple[bytes, bytes]]) -> None:
    """Send every message to ``FICHAS_TOPIC_ENTRADA`` and wait for the broker's
    acknowledgement of each."""
    from infra.kafka.clients import build_writer, connect_admin

    admin = await connect_admin(settings)  # a clear message, bounded, if no broker answers
    await admin.close()
    topic = settings.topic_entrada
    producer = build_writer(settings)
    await producer.start()
    try:
        pendientes = [await producer.send(topic, value, key=key) for key, value in mensajes]
        for pendiente in pendientes:
            await pendiente
    finally:
        await producer.stop()


def informar(lote: Lote, entrada: Entrada, estricto: bool) -> None:
    """The invalid lines, one per line on standard error, and what happens to them."""
    for mensaje in lote.invalidos:
        print(f"fichas producir: invalid line {mensaje}", file=sys.stderr)
    if lote.invalidos and estricto:
        print(
            f"fichas producir: {len(lote.invalidos)} invalid "
            f"line{'' if len(lote.invalidos) == 1 else 's'} and --estricto: nothing sent",
            file=sys.stderr,
        )
    if entrada.bom:
        print("fichas producir: UTF-8 BOM at the start stripped", file=sys.stderr)


# -- the command -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """``fichas producir FICHERO [--estricto]``."""
    parser = argparse.ArgumentParser(
        prog="fichas producir",
        description="Feed a running worker: check every line as the worker would and send "
        "the valid ones to FICHAS_TOPIC_ENTRADA on FICHAS_KAFKA_BROKERS, keyed by SKU. "
        "Invalid lines are reported (file:line: code: message) and skipped; exit 0 when "
        "everything valid was acknowledged by the broker.",
    )
    parser.add_argument(
        "entrada", metavar="FICHERO", help="EventoCambio lines, or - for standard input"
    )
    parser.add_argument(
        "--estricto",
        action="store_true",
        help="send nothing and exit 2 if any line is invalid",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fichas producir``: exit 0 sent, 2 invalid input with --estricto, 4 no
    broker."""
    args = _parser().parse_args(argv)
    settings = ajustes("producir")
    if settings is None:
        return EXIT_USAGE
    return _producir(settings, args.entrada, args.estricto)


def _producir(settings: Settings, entrada: str, estricto: bool) -> int:
    """Read and check the file, send the valid lines, say what was sent and skipped."""
    from infra import eventloop
    from infra.kafka.access import refusal
    from infra.kafka.clients import BrokerUnreachable

    try:
        leida = leer_entrada(entrada)
    except OSError as exc:
        print(f"fichas producir: cannot read {entrada}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    lote = preparar(leida)
    avisos_entrada("producir", False, leida.blancas)
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
        f"{settings.kafka_brokers}; {contar(len(lote.invalidos), 'invalid line')} skipped",
        file=sys.stderr,
    )
    return 0
