"""``fichas procesar``: the same graph over a JSONL file, without Kafka.

Lines of different SKUs run concurrently (``FICHAS_CONCURRENCIA``), those of one SKU in file
order; outcomes are printed in input order, one JSON object per line; an invalid line becomes
a ``dlq`` outcome. Standard error says what was skipped and one summary line. Stored outcomes
are reused only when the same model and criteria version made them (``procesar.json`` in the
data folder); otherwise the run stops before any LLM call (exit 2). The command (``main``, its
parser, the gate from a file) sits after the processing. What it prints and why:
docs/operacion.md, "Commands people run".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, TextIO

from criterios import familias_conocidas
from esquemas import EventoCambio, EventoInvalido, leer_evento
from esquemas.constantes import DESTINO_DLQ
from grafo.contexto import sobre_evento
from herramientas.arranque import (
    EXIT_LLM_UNAVAILABLE,
    EXIT_USAGE,
    ajustes,
    avisos_entrada,
    contar,
)
from infra.config import Settings
from stream.flow.rechazo import evento_rechazado

if TYPE_CHECKING:
    from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
    from grafo import FuentePuerta
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


# -- the command -------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """``fichas procesar ENTRADA [--espera-llm S] [--puerta PUERTA.json]``."""
    parser = argparse.ArgumentParser(
        prog="fichas procesar",
        description="Run every line of ENTRADA through the ficha loop and print one outcome "
        'per line to stdout: {"destino": "fichas.publicadas" | "fichas.revision_manual" | '
        '"dlq", "evento": {...}}. Invalid lines become dlq outcomes. Exit 0 when every line '
        "has an outcome; 2 on bad usage or configuration, or when FICHAS_DATA_DIR holds "
        "outcomes of these events made with another model or criteria version; 3 when the "
        "LLM stays unreachable.",
    )
    parser.add_argument(
        "entrada",
        metavar="ENTRADA.jsonl",
        help="EventoCambio lines, or - for standard input; a leading UTF-8 BOM and blank "
        "lines are skipped and counted",
    )
    parser.add_argument(
        "--espera-llm",
        type=float,
        default=600.0,
        metavar="S",
        help="give up (exit 3) if the LLM stays unreachable this many seconds (default 600); "
        "each retry is reported on stderr with its cause",
    )
    parser.add_argument(
        "--puerta",
        type=Path,
        metavar="PUERTA.json",
        help="the publication gate to apply (the audit file fichas calibrar writes; default "
        "FICHAS_PUERTA_ARCHIVO). Without one every gate is closed and, under the default "
        "FICHAS_PUERTA=certificada, the loop publishes nothing (docs/puerta.md)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fichas procesar``: exit 0 when every line has an outcome, 3 if the LLM
    stayed down."""
    args = _parser().parse_args(argv)
    settings = ajustes("procesar")
    if settings is None:
        return EXIT_USAGE
    return _procesar(settings, args.entrada, args.espera_llm, args.puerta)


def _estados_sin_kafka(settings: Settings, archivo: Path | None) -> dict[str, EstadoPuerta]:
    """The gate states ``fichas procesar`` applies: the audit file's, or none (all closed).

    Raises ``ValueError`` for a file that cannot be read as gate states.
    """
    from puerta.auditoria import estados_de_archivo

    archivo = archivo or settings.puerta_archivo
    return dict(estados_de_archivo(archivo)) if archivo is not None else {}


def _puerta_sin_kafka(
    settings: Settings,
    clave: ClavePuerta,
    estados: dict[str, EstadoPuerta],
    archivo: Path | None,
) -> FuentePuerta | None:
    """The gate ``fichas procesar`` applies under the running ``clave``; said on stderr."""
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
    """Read the input, resolve the gate, run the loop over every line, say the summary."""
    from criterios import CRITERIOS_VERSION
    from grafo import Backoff, LLMUnavailable
    from infra import eventloop
    from stream.gobierno.identidad import clave_servida
    from stream.gobierno.runtime import build_processor

    try:
        leida = leer_entrada(entrada)
    except OSError as exc:
        print(f"fichas procesar: cannot read {entrada}: {exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    avisos_entrada("procesar", leida.bom, 0)  # blank lines: in the closing summary
    try:
        estados = _estados_sin_kafka(settings, archivo_puerta)
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
        puerta = _puerta_sin_kafka(settings, clave, estados, archivo_puerta)
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


def _donde(settings: Settings) -> str:
    """Where the stored state lives, as the person configured it."""
    if settings.postgres_dsn:
        return "FICHAS_POSTGRES_DSN"
    return str(settings.data_dir)


def _resumen(resumen: Resumen, blancas: int, donde: str) -> str:
    """``12 outcomes: 9 fichas.publicadas, ...; 3 reused from ./.fichas (...)``."""
    from esquemas.constantes import DESTINO_PUBLICADAS, DESTINO_REVISION

    partes = ", ".join(
        f"{resumen.por_destino.get(d, 0)} {d}"
        for d in (DESTINO_PUBLICADAS, DESTINO_REVISION, DESTINO_DLQ)
    )
    texto = f"{resumen.total} outcomes: {partes}"
    if blancas:
        texto += f"; {contar(blancas, 'blank line')} skipped"
    if resumen.reutilizadas:
        texto += (
            f"; {resumen.reutilizadas} reused from {donde} (stored by an earlier run, no LLM "
            "call); FICHAS_DATA_DIR to start from scratch"
        )
    return texto
