"""``fichas procesar``: the same graph over a JSONL file, without Kafka.

Lines of different SKUs run concurrently (bounded by ``FICHAS_CONCURRENCIA``); lines of one
SKU run one after another in file order, as the worker keeps per-SKU order. Outcomes are
printed in input order, one JSON object per line, so two runs over one file can be diffed.
An invalid line becomes a ``dlq`` outcome and processing goes on.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from criterios import familias_conocidas
from esquemas import EventoCambio, EventoInvalido, leer_evento
from esquemas.constantes import DESTINO_DLQ
from grafo import Procesador
from stream.rechazo import evento_rechazado


@dataclass
class _Linea:
    """One non-blank input line with its position."""

    offset: int
    raw: bytes


def leer_lineas(path: Path) -> list[_Linea]:
    """Non-blank lines of the file as bytes, keeping their 0-based line numbers."""
    with path.open("rb") as handle:
        return [
            _Linea(offset, line.rstrip(b"\r\n"))
            for offset, line in enumerate(handle)
            if line.strip()
        ]


def _validar(
    lineas: Iterable[_Linea], origen: str
) -> tuple[dict[int, dict[str, Any]], dict[str, list[tuple[int, EventoCambio]]]]:
    """Split lines into DLQ outcomes (by offset) and valid events grouped by SKU."""
    familias = familias_conocidas()
    rechazos: dict[int, dict[str, Any]] = {}
    por_sku: dict[str, list[tuple[int, EventoCambio]]] = defaultdict(list)
    for linea in lineas:
        try:
            evento = leer_evento(linea.raw, familias)
        except EventoInvalido as exc:
            registro = evento_rechazado(exc, linea.raw, origen, 0, linea.offset)
            rechazos[linea.offset] = {"destino": DESTINO_DLQ, "evento": registro}
            continue
        por_sku[evento.sku].append((linea.offset, evento))
    return rechazos, por_sku


class _OrderedPrinter:
    """Prints outcomes in input order as soon as every earlier one is known."""

    def __init__(self, offsets: list[int], out: TextIO) -> None:
        self._pending = sorted(offsets)
        self._ready: dict[int, dict[str, Any]] = {}
        self._out = out
        self.printed = 0

    def put(self, offset: int, salida: dict[str, Any]) -> None:
        """Record one outcome and flush the ready prefix."""
        self._ready[offset] = salida
        while self._pending and self._pending[0] in self._ready:
            linea = json.dumps(self._ready.pop(self._pending.pop(0)), ensure_ascii=False)
            self._out.write(linea + "\n")
            self.printed += 1
        self._out.flush()


async def procesar_fichero(
    path: Path, procesador: Procesador, concurrencia: int, out: TextIO = sys.stdout
) -> int:
    """Process every line of ``path``; return how many outcomes were printed."""
    rechazos, por_sku = _validar(leer_lineas(path), str(path))
    offsets = list(rechazos) + [o for eventos in por_sku.values() for o, _ in eventos]
    printer = _OrderedPrinter(offsets, out)
    for offset, salida in rechazos.items():
        printer.put(offset, salida)
    limite = asyncio.Semaphore(concurrencia)

    async def run_sku(eventos: list[tuple[int, EventoCambio]]) -> None:
        for offset, evento in eventos:
            async with limite:
                resultado = await procesador.procesar(evento)
            printer.put(offset, {"destino": resultado.destino, "evento": resultado.salida})

    async with asyncio.TaskGroup() as group:
        for eventos in por_sku.values():
            group.create_task(run_sku(eventos))
    return printer.printed
