"""``fichas informe``: what the outcomes say about the loop, read after the fact.

It reads a ``fichas procesar`` run, a copy of the output topics or the live topics
(``--kafka``), without any metrics history; everything but reading the input is a pure function
over ``(destino, evento)`` pairs. A published ficha's earlier attempts count as rejections
without detail (its event carries only ``intentos``); no recommendation on
``FICHAS_MAX_INTENTOS`` below ``MUESTRA_MINIMA`` fichas.
How to read it: docs/operacion.md, "fichas informe"; its chart: ``herramientas.informe_grafico``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from esquemas.constantes import (
    DESTINO_DLQ,
    DESTINO_PUBLICADAS,
    DESTINO_REVISION,
)
from grafo.intentos import contar_rechazos, resumen_intentos
from herramientas.definiciones import (
    Informe,
    Salida,
    TasaIntento,
    historial_de,
    intentos_de,
    leer_salida,
    nombres_criterios,
    porcentaje,
    tasas_por_intento,
)

if TYPE_CHECKING:
    from infra.config import Settings

UMBRAL_DEFECTO = 0.10
MUESTRA_MINIMA = 20  # fichas that reached the last attempt, before recommending anything
PNG_EXTRA = "pip install 'fichas[report]'  (matplotlib)"

__all__ = ["Informe", "Salida", "TasaIntento", "calcular_informe"]


# -- reading ---------------------------------------------------------------------------------


def clasificar(obj: Any) -> Salida | None:
    """Tell a ``fichas procesar`` line or a raw outcome event apart; None when it is neither.

    Raw events are recognised by the fields only their type has, so the same function reads
    the output topics and files dumped from them.
    """
    if not isinstance(obj, dict):
        return None
    destino, evento = obj.get("destino"), obj.get("evento")
    if isinstance(destino, str) and isinstance(evento, dict):
        return destino, evento
    if "historial" in obj or "motivo" in obj:
        return DESTINO_REVISION, obj
    if "publicada_en" in obj:
        return DESTINO_PUBLICADAS, obj
    if "error" in obj and "payload" in obj:
        return DESTINO_DLQ, obj
    return None


def read_jsonl(lines: Iterable[str]) -> Iterator[Any]:
    """Parsed JSON per non-blank line; a line that is not JSON yields None (counted ignored)."""
    for line in lines:
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError:
            yield None


def deduplicar(objetos: Iterable[Any]) -> tuple[list[Salida], int, int]:
    """Classified outcomes, once per ``event_id``; also how many were duplicates and ignored.

    Delivery is at least once, so a topic may hold the same outcome twice; the contract lets
    consumers deduplicate on ``event_id``, and so does the report. DLQ records have no
    ``event_id`` and are all kept.
    """
    salidas: list[Salida] = []
    vistos: set[str] = set()
    duplicadas = ignoradas = 0
    for obj in objetos:
        salida = clasificar(obj)
        if salida is None:
            ignoradas += 1
            continue
        event_id = salida[1].get("event_id")
        if isinstance(event_id, str):
            if event_id in vistos:
                duplicadas += 1
                continue
            vistos.add(event_id)
        salidas.append(salida)
    return salidas, duplicadas, ignoradas


# -- computing -------------------------------------------------------------------------------


def calcular_informe(
    salidas: Iterable[Salida],
    umbral: float = UMBRAL_DEFECTO,
    max_intentos: int | None = None,
    duplicadas: int = 0,
    ignoradas: int = 0,
    muestra_minima: int = MUESTRA_MINIMA,
) -> Informe:
    """Counts per destination, approval per attempt, rejections, reasons and the verdict.

    ``max_intentos`` is the attempt judged as "the last one"; by default the highest attempt
    any ficha reached, which is ``FICHAS_MAX_INTENTOS`` whenever some ficha used them all.
    """
    salidas = list(salidas)
    destinos: Counter[str] = Counter()
    rechazos: Counter[str] = Counter()
    motivos: Counter[str] = Counter()
    rechazos_sin_detalle = salidas_invalidas = 0

    for destino, evento in salidas:
        destinos[destino] += 1
        if destino == DESTINO_PUBLICADAS:
            rechazos_sin_detalle += max(intentos_de(evento) - 1, 0)
        elif destino == DESTINO_REVISION:
            motivos[str(evento.get("motivo", "desconocido"))] += 1
            intentos = resumen_intentos(historial_de(evento))
            salidas_invalidas += sum(i.invalida for i in intentos)
            for rechazo, n in contar_rechazos(intentos).items():
                rechazos[rechazo.criterio] += n

    por_intento = tasas_por_intento(salidas)
    por_n = {t.intento: t for t in por_intento}
    ultimo_n = max_intentos or (por_intento[-1].intento if por_intento else 0)
    ultimo = por_n.get(ultimo_n, TasaIntento(ultimo_n, 0, 0)) if ultimo_n else None
    compensa, conclusion = _conclusion(ultimo, umbral, muestra_minima)
    return Informe(
        destinos=dict(sorted(destinos.items())),
        por_intento=por_intento,
        rechazos=dict(sorted(rechazos.items())),
        rechazos_sin_detalle=rechazos_sin_detalle,
        salidas_invalidas=salidas_invalidas,
        motivos=dict(sorted(motivos.items())),
        umbral=umbral,
        ultimo=ultimo,
        compensa=compensa,
        conclusion=conclusion,
        duplicadas=duplicadas,
        ignoradas=ignoradas,
    )


def _conclusion(
    ultimo: TasaIntento | None, umbral: float, muestra_minima: int = MUESTRA_MINIMA
) -> tuple[bool | None, str]:
    """Whether the last attempt approves enough of the fichas that reach it to be worth it."""
    if ultimo is None:
        return None, "Ninguna ficha tiene intentos: no hay nada que concluir."
    if ultimo.intento <= 1:
        return None, "Solo hay un intento: no hay un intento extra que valorar."
    tasa = ultimo.tasa
    if tasa is None:
        return None, f"Ninguna ficha llegó al intento {ultimo.intento}: no se puede valorar."
    if ultimo.llegaron < muestra_minima:
        return None, (
            f"El intento {ultimo.intento} aprueba el {tasa:.1%} de las fichas que llegan a él, "
            f"pero solo llegaron {ultimo.llegaron} (mínimo {muestra_minima} para recomendar): "
            "muestra insuficiente, no se recomienda nada."
        )
    if tasa < umbral:
        return False, (
            f"El intento {ultimo.intento} aprueba el {tasa:.1%} de las fichas que llegan a él, "
            f"por debajo del umbral del {umbral:.1%}: no compensa; considera bajar "
            f"FICHAS_MAX_INTENTOS a {ultimo.intento - 1}."
        )
    return True, (
        f"El intento {ultimo.intento} aprueba el {tasa:.1%} de las fichas que llegan a él, "
        f"no menos que el umbral del {umbral:.1%}: compensa mantenerlo."
    )


# -- rendering -------------------------------------------------------------------------------


def render_text(informe: Informe) -> str:
    """A plain-text report with aligned tables, for a terminal or a ticket."""
    total = sum(informe.destinos.values())
    lineas = [
        f"Salidas: {total} (duplicadas descartadas: {informe.duplicadas}, "
        f"líneas ignoradas: {informe.ignoradas})",
    ]
    for destino, n in informe.destinos.items():
        lineas.append(f"  {destino:<24}{n:>7}")

    lineas += [
        "",
        "Aprobación por intento",
        f"  {'intento':>7}{'llegaron':>10}{'aprobadas':>11}{'tasa':>9}",
    ]
    for fila in informe.por_intento:
        lineas.append(
            f"  {fila.intento:>7}{fila.llegaron:>10}{fila.aprobadas:>11}{porcentaje(fila.tasa):>9}"
        )
    if not informe.por_intento:
        lineas.append("  (sin intentos)")

    lineas += ["", "Rechazos por criterio (historial de las fichas en revisión manual)"]
    nombres = nombres_criterios()
    for criterio, n in informe.rechazos.items():
        lineas.append(f"  {criterio:<24}{n:>7}  {nombres.get(criterio, '')}".rstrip())
    if not informe.rechazos:
        lineas.append("  (ninguno)")
    lineas.append(
        f"  {'sin detalle':<24}{informe.rechazos_sin_detalle:>7}"
        "  (intentos previos de fichas publicadas)"
    )
    lineas.append(f"  {'salida inválida':<24}{informe.salidas_invalidas:>7}")

    lineas += ["", "Motivos de revisión manual"]
    for motivo, n in informe.motivos.items():
        lineas.append(f"  {motivo:<24}{n:>7}")
    if not informe.motivos:
        lineas.append("  (ninguna ficha en revisión manual)")

    lineas += ["", f"Umbral del último intento: {porcentaje(informe.umbral)}", informe.conclusion]
    lineas += [f"Aviso: {aviso}" for aviso in informe.avisos]
    return "\n".join(lineas) + "\n"


# -- Kafka -----------------------------------------------------------------------------------


async def read_kafka(
    settings: Settings, topics: Mapping[str, str], timeout_s: float = 120.0
) -> tuple[list[Salida], int, int, list[str]]:
    """Read ``topics`` (topic -> destino) from the beginning up to their current end offsets.

    A group-less consumer with manual assignment: it commits nothing and joins no group, so
    running the report never moves the worker's offsets. The end offsets are taken once at
    the start, so a live topic still gives a finite read. Each record is read as this version
    reads it (``herramientas.definiciones.leer_salida``). Returns the deduplicated outcomes,
    duplicates, ignored records and warnings (e.g. a topic that does not exist).
    """
    from infra.kafka.read import read_to_end

    leidos, ausentes = await read_to_end(settings, list(topics), "fichas-informe", timeout_s)
    avisos = [f"el topic {topic} no existe o no tiene particiones" for topic in ausentes]
    registros = [(r.topic, r.value) for r in leidos]

    objetos: list[Any] = []
    for topic, valor in registros:
        # The topic says the destination even if it was renamed by configuration.
        evento = leer_salida(topics[topic], valor)
        objetos.append({"destino": topics[topic], "evento": evento} if evento else None)
    salidas, duplicadas, ignoradas = deduplicar(objetos)
    return salidas, duplicadas, ignoradas, avisos


# -- command ---------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """Arguments of ``fichas informe``."""
    parser = argparse.ArgumentParser(
        prog="fichas informe",
        description="Summarise outcomes: count per destination, approval rate per attempt, "
        "rejections per criterion, manual-review reasons, and whether the last attempt is "
        "worth it. Reads `fichas procesar` output or raw outcome events (one JSON per line), "
        "or the two output topics with --kafka.",
    )
    parser.add_argument(
        "entrada", nargs="?", metavar="ENTRADA.jsonl", help="outcomes file, or - for stdin"
    )
    parser.add_argument(
        "--kafka", metavar="BROKERS", help="read FICHAS_TOPIC_PUBLICADAS and _REVISION instead"
    )
    parser.add_argument(
        "--png",
        type=Path,
        metavar="FILE",
        help="also write the charts here (PNG; SVG when FILE ends in .svg); needs the report extra",
    )
    parser.add_argument(
        "--umbral",
        type=float,
        default=UMBRAL_DEFECTO,
        metavar="FRACCION",
        help="minimum approval rate for the last attempt to be worth it (default 0.10)",
    )
    parser.add_argument(
        "--max-intentos",
        type=int,
        default=None,
        metavar="N",
        help="attempt judged as the last one (default: the highest attempt reached)",
    )
    parser.add_argument(
        "--muestra-minima",
        type=int,
        default=MUESTRA_MINIMA,
        metavar="N",
        help="fichas that must reach the last attempt before the report recommends "
        f"anything about FICHAS_MAX_INTENTOS (default {MUESTRA_MINIMA})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="S",
        help="with --kafka, stop reading after this many seconds (default 120)",
    )
    parser.add_argument(
        "--revision",
        action="store_true",
        help="also (or only) the evaluator's precision against people, from the reviewer "
        "app's store (FICHAS_POSTGRES_DSN or FICHAS_DATA_DIR)",
    )
    return parser


def _matplotlib_missing() -> bool:
    """True when the ``report`` extra (matplotlib) cannot be imported."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return True
    return False


def _read_file(entrada: str, stdin: TextIO) -> tuple[list[Salida], int, int]:
    """Outcomes from a file path or ``-``."""
    if entrada == "-":
        return deduplicar(read_jsonl(stdin))
    with Path(entrada).open(encoding="utf-8") as handle:
        return deduplicar(read_jsonl(handle))


def main_informe(
    argv: list[str] | None = None, stdout: TextIO | None = None, stdin: TextIO | None = None
) -> int:
    """Run ``fichas informe``; 0 on success, 1 when the input cannot be read, 2 on bad usage."""
    out = stdout or sys.stdout
    parser = _parser()
    args = parser.parse_args(argv)
    if args.revision and args.entrada is None and args.kafka is None:
        return _informe_revision(out)
    if (args.entrada is None) == (args.kafka is None):
        parser.error("give either ENTRADA.jsonl (or -) or --kafka BROKERS")
    if not 0 <= args.umbral <= 1:
        parser.error("--umbral is a fraction between 0 and 1")
    if args.png is not None and _matplotlib_missing():
        print(f"fichas informe: --png needs the report extra: {PNG_EXTRA}", file=sys.stderr)
        return 2
    avisos: list[str] = []
    en_kafka = None
    from herramientas.arranque import leer_ajustes

    settings = leer_ajustes("informe") if args.kafka is not None else None
    if args.kafka is not None and settings is None:
        return 2  # one line per bad variable, said
    try:
        if settings is not None:
            topics = {
                settings.topic_publicadas: DESTINO_PUBLICADAS,
                settings.topic_revision: DESTINO_REVISION,
            }
            en_kafka = settings.model_copy(update={"kafka_brokers": args.kafka})
            salidas, duplicadas, ignoradas, avisos = asyncio.run(
                read_kafka(en_kafka, topics, args.timeout)
            )
        else:
            salidas, duplicadas, ignoradas = _read_file(args.entrada, stdin or sys.stdin)
    except Exception as exc:  # unreadable file, unreachable broker: say why, exit 1
        if en_kafka is not None and (rechazo := _rechazo(exc, en_kafka)) is not None:
            print(f"fichas informe: {rechazo}", file=sys.stderr)  # login, certificate, ACL
            return 2
        print(f"fichas informe: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    informe = calcular_informe(
        salidas, args.umbral, args.max_intentos, duplicadas, ignoradas, args.muestra_minima
    )
    informe.avisos += avisos
    out.write(render_text(informe))
    if args.png is not None:
        from herramientas.informe_grafico import render_png

        render_png(informe, args.png)
        out.write(f"Gráfico: {args.png}\n")
    return _informe_revision(out) if args.revision else 0


def _rechazo(exc: BaseException, settings: Any) -> Exception | None:
    """Kafka refusing the report's reader (``infra.kafka.access``), or None."""
    from infra.kafka.clients import explain_refusal

    return asyncio.run(explain_refusal(exc, settings))


def _informe_revision(out: TextIO) -> int:
    """The trust section, computed by ``revision.certificador.confianza`` from the reviewer app's
    store."""
    from herramientas.arranque import leer_ajustes
    from migraciones.conexion import rechazo_postgres
    from revision.certificador.confianza import informe_desde_almacen

    if (settings := leer_ajustes("informe")) is None:
        return 2  # one line per bad variable (FICHAS_POSTGRES_DSN_ARCHIVO...), said
    try:
        out.write(informe_desde_almacen(settings))
    except Exception as exc:  # no store yet, database unreachable: say why, exit 1
        if (rechazo := rechazo_postgres(exc, settings.postgres_dsn)) is not None:
            print(f"fichas informe: {rechazo}", file=sys.stderr)  # login, database, privilege
            return 2
        print(f"fichas informe: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0
