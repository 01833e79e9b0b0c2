"""``fichas procesar``: the same graph over a JSONL file, without Kafka.

Lines of different SKUs run concurrently (bounded by ``FICHAS_CONCURRENCIA``); lines of one
SKU run one after another in file order, as the worker keeps per-SKU order. Outcomes are
printed in input order, one JSON object per line, so two runs over one file can be diffed.
An invalid line becomes a ``dlq`` outcome and processing goes on.

What the person running it reads on standard error: blank lines skipped and a leading UTF-8 BOM
stripped (a spreadsheet export starts with one), then one summary line with the count per
destination, and how many outcomes came from the state an earlier run stored in
``FICHAS_DATA_DIR`` instead of the LLM.

Stored outcomes are reused only when they were made with the same model and criteria version:
the data folder remembers both (``procesar.json``) and a run with another model or criteria
version over events it already holds stops before any LLM call (exit 2), naming both and the
way out (another ``FICHAS_DATA_DIR``). Silently returning the first model's fichas would look
like the second model's output.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from criterios import familias_conocidas
from esquemas import EventoCambio, EventoInvalido, leer_evento
from esquemas.constantes import DESTINO_DLQ
from grafo.contexto import sobre_evento
from stream.flow.rechazo import evento_rechazado

if TYPE_CHECKING:
    from grafo.ejecucion import Procesador


@dataclass
class Linea:
    """One non-blank input line with its position (``donde``: where it came from, when not a
    line of a file: a DLQ record's topic, partition and offset)."""

    offset: int
    raw: bytes
    donde: str | None = None


BOM = b"\xef\xbb\xbf"
STDIN = "-"
MARCA = "procesar.json"  # in FICHAS_DATA_DIR: model and criteria version of the stored outcomes


@dataclass
class Entrada:
    """The input file read: its non-blank lines, and what was skipped on the way."""

    nombre: str
    lineas: list[Linea]
    blancas: int = 0
    bom: bool = False


def leer_entrada(nombre: str, stdin: BinaryIO | None = None) -> Entrada:
    """Read ``nombre`` (``-``: standard input) as bytes, keeping 0-based line numbers."""
    if nombre == STDIN:
        return _leer(nombre, stdin or sys.stdin.buffer)
    with Path(nombre).open("rb") as handle:
        return _leer(nombre, handle)


def _leer(nombre: str, handle: BinaryIO) -> Entrada:
    """Split into lines; count blank ones; strip a BOM at the very start."""
    entrada = Entrada(nombre, [])
    for offset, line in enumerate(handle):
        if offset == 0 and line.startswith(BOM):
            line = line[len(BOM) :]
            entrada.bom = True
        if line.strip():
            entrada.lineas.append(Linea(offset, line.rstrip(b"\r\n")))
        else:
            entrada.blancas += 1
    return entrada


@dataclass
class Resumen:
    """What one run did, for the closing line on standard error."""

    por_destino: Counter[str] = field(default_factory=Counter)
    reutilizadas: int = 0

    @property
    def total(self) -> int:
        """Outcomes printed."""
        return sum(self.por_destino.values())


class EstadoDeOtraEjecucion(Exception):
    """Stored outcomes for these events were made with another model or criteria version."""


@dataclass(frozen=True)
class Huella:
    """Model and criteria version a data folder's stored outcomes were made with."""

    modelo: str
    criterios_version: str

    def texto(self) -> str:
        """``model X, criteria vN`` for messages."""
        return f"model {self.modelo!r}, criteria {self.criterios_version}"


def leer_huella(data_dir: Path) -> Huella | None:
    """The fingerprint stored in the data folder, None if there is none (or it is unreadable)."""
    try:
        datos = json.loads((data_dir / MARCA).read_text(encoding="utf-8"))
        return Huella(str(datos["modelo"]), str(datos["criterios_version"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def guardar_huella(data_dir: Path, huella: Huella) -> None:
    """Remember which model and criteria version filled this data folder."""
    data_dir.mkdir(parents=True, exist_ok=True)
    datos = {"modelo": huella.modelo, "criterios_version": huella.criterios_version}
    (data_dir / MARCA).write_text(json.dumps(datos) + "\n", encoding="utf-8")


def _validar(
    lineas: Iterable[Linea], origen: str
) -> tuple[dict[int, dict[str, Any]], dict[str, list[tuple[int, EventoCambio]]]]:
    """Split lines into DLQ outcomes (by offset) and valid events grouped by SKU."""
    familias = familias_conocidas()
    rechazos: dict[int, dict[str, Any]] = {}
    por_sku: dict[str, list[tuple[int, EventoCambio]]] = defaultdict(list)
    for linea in lineas:
        try:
            evento = leer_evento(linea.raw, familias)
        except EventoInvalido as exc:
            rechazo = evento_rechazado(exc, linea.raw, origen, 0, linea.offset)
            rechazos[linea.offset] = {"destino": DESTINO_DLQ, "evento": rechazo}
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


async def contar_guardadas(
    por_sku: dict[str, list[tuple[int, EventoCambio]]], procesador: Procesador
) -> int:
    """How many of these events already have an outcome in the stored state."""
    guardadas = 0
    for eventos in por_sku.values():
        for _, evento in eventos:
            if await procesador.guardado(evento) is not None:
                guardadas += 1
    return guardadas


async def procesar_fichero(
    entrada: Path | Entrada,
    procesador: Procesador,
    concurrencia: int,
    out: TextIO = sys.stdout,
    huellas: tuple[Huella | None, Huella] | None = None,
) -> Resumen:
    """Process every line; return the counts. ``huellas``: (stored, this run) to compare."""
    if isinstance(entrada, Path):
        entrada = leer_entrada(str(entrada))
    rechazos, por_sku = _validar(entrada.lineas, entrada.nombre)
    if huellas is not None:
        guardada, actual = huellas
        if guardada is not None and guardada != actual:
            if n := await contar_guardadas(por_sku, procesador):
                raise EstadoDeOtraEjecucion(
                    f"{n} of these events already have outcomes stored by a run with "
                    f"{guardada.texto()}; this run uses {actual.texto()}"
                )
    offsets = list(rechazos) + [o for eventos in por_sku.values() for o, _ in eventos]
    printer = _OrderedPrinter(offsets, out)
    resumen = Resumen()
    for offset, salida in rechazos.items():
        printer.put(offset, salida)
        resumen.por_destino[DESTINO_DLQ] += 1
    limite = asyncio.Semaphore(concurrencia)

    async def run_sku(eventos: list[tuple[int, EventoCambio]]) -> None:
        for offset, evento in eventos:
            async with limite:
                with sobre_evento(evento.sku, evento.event_id, evento.version):
                    resultado = await procesador.procesar(evento)
            printer.put(offset, {"destino": resultado.destino, "evento": resultado.salida})
            resumen.por_destino[resultado.destino] += 1
            resumen.reutilizadas += resultado.reentregada

    async with asyncio.TaskGroup() as group:
        for eventos in por_sku.values():
            group.create_task(run_sku(eventos))
    return resumen
