"""``fichas producir FICHERO|-``: feed a running worker from a JSONL file of ``EventoCambio``.

Each line is checked as the worker checks it (``esquemas.leer_evento``: size, JSON, schema,
family) and sent to ``FICHAS_TOPIC_ENTRADA`` with the SKU as key, the partitioning the worker's
per-SKU order relies on. An invalid line is reported on standard error (line number, code,
message) and skipped; with ``--estricto`` any invalid line stops the command before anything is
sent. Lines are sent as they are in the file (after a leading BOM is stripped), so the worker
sees exactly what the file says.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

from criterios import familias_conocidas
from esquemas import EventoInvalido, leer_evento
from herramientas.procesar import Entrada
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
