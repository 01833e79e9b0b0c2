"""``fichas producir FICHERO|-``: feed a running worker from a JSONL file of ``EventoCambio``.

Each line is checked as the worker checks it (``esquemas.leer_evento``: size, JSON, schema,
family) and sent to ``FICHAS_TOPIC_ENTRADA`` with the SKU as key, the partitioning the worker's
per-SKU order relies on. An invalid line is reported on standard error (line number, code,
message) and skipped; with ``--estricto`` any invalid line stops the command before anything is
sent. Lines are sent as they are in the file (after a leading BOM is stripped), so the worker
sees exactly what the file says.

``--desde-dlq`` sends again what the DLQ holds (``leer_dlq``), after the feed or the criteria
were fixed: each ``EventoRechazado``'s original ``payload`` (decoded when base64), read to the
DLQ's end at the start, through the same checks; a payload the worker had to cut cannot be sent
again and is named. The worker answers an event it already handled with the same outcome.
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
from herramientas.procesar import Entrada, Linea, leer_entrada
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
            donde = linea.donde or f"{entrada.nombre}:{linea.offset + 1}"
            lote.invalidos.append(f"{donde}: {exc.codigo}: {exc.mensaje}{campo}")
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


async def leer_dlq(settings: Settings) -> tuple[Entrada, list[str]]:
    """The payloads on ``FICHAS_TOPIC_DLQ`` up to its end, as lines to check and send, and one
    message per record that cannot be sent again (not an ``EventoRechazado``, a cut payload)."""
    import base64

    from pydantic import ValidationError

    from esquemas.salidas import EventoRechazado
    from infra.kafka.clients import connect_admin
    from infra.kafka.read import read_to_end

    admin = await connect_admin(settings)  # a clear message, bounded, if no broker answers
    await admin.close()
    registros, _ = await read_to_end(settings, [settings.topic_dlq], "fichas-producir-dlq")
    entrada, omitidos = Entrada(settings.topic_dlq, []), []
    for registro in registros:
        donde = f"{registro.topic} partition {registro.partition} offset {registro.offset}"
        try:
            rechazado = EventoRechazado.model_validate_json(registro.value or b"")
        except ValidationError:
            omitidos.append(f"{donde}: not an EventoRechazado")
            continue
        if rechazado.truncado:
            omitidos.append(f"{donde}: its payload was cut when written; send it from the feed")
            continue
        texto = rechazado.payload
        raw = base64.b64decode(texto) if rechazado.payload_codificacion == "base64" else texto
        crudo = raw if isinstance(raw, bytes) else raw.encode("utf-8")
        entrada.lineas.append(Linea(registro.offset, crudo, donde))
    return entrada, omitidos


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
        "entrada",
        metavar="FICHERO",
        nargs="?",
        help="EventoCambio lines, or - for standard input",
    )
    parser.add_argument(
        "--desde-dlq",
        action="store_true",
        help="instead of a file: send again the original payload of every record on "
        "FICHAS_TOPIC_DLQ (read to its end), through the same checks (docs/despliegue.md, "
        "'Reprocesar un topic')",
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
    if (args.entrada is not None) == args.desde_dlq:
        print("fichas producir: give FICHERO (or -) or --desde-dlq", file=sys.stderr)
        return EXIT_USAGE
    settings = ajustes("producir")
    if settings is None:
        return EXIT_USAGE
    return _producir(settings, args.entrada, args.estricto)


def _producir(settings: Settings, entrada: str | None, estricto: bool) -> int:
    """Read and check the file (``entrada`` None: the DLQ's payloads, ``--desde-dlq``), send
    the valid lines, say what was sent and skipped."""
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
