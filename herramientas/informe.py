"""``fichas informe``: what the outcomes say about the loop, read after the fact.

Prometheus answers "how is it going now"; this answers "was the extra attempt worth it" from
the outcomes themselves, so it works on a ``fichas procesar`` run, on a copy of the output
topics, or on the live topics (``--kafka``) without any metrics history. Everything except
reading the input is a pure function over ``(destino, evento)`` pairs, which is what the tests
exercise.

What each outcome tells: a ``FichaEnRevision`` carries its whole ``historial`` (every attempt
and its verdict), while a ``FichaPublicada`` carries only ``intentos`` = k, which still means
it reached attempts 1..k, was approved at k and rejected before. Why those earlier attempts
were rejected is not in the published event, so the report counts them apart as rejections
without detail instead of guessing a criterion.

Reading it safely: every bar says how many fichas it stands on (``aprobadas/llegaron``), the
threshold's value is in the legend, criteria carry their name from the criteria table next to
the code, and every manual-review reason is charted. No recommendation about
``FICHAS_MAX_INTENTOS`` is made unless at least ``MUESTRA_MINIMA`` fichas reached the attempt
being judged (``--muestra-minima``): below that, one ficha more or less flips the verdict.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from esquemas.constantes import (
    DESTINO_DLQ,
    DESTINO_PUBLICADAS,
    DESTINO_REVISION,
)
from grafo.intentos import contar_rechazos, resumen_intentos
from herramientas import graficos
from herramientas.definiciones import (
    Salida,
    TasaIntento,
    historial_de,
    intentos_de,
    leer_salida,
    tasas_por_intento,
)

if TYPE_CHECKING:
    from infra.config import Settings

UMBRAL_DEFECTO = 0.10
MUESTRA_MINIMA = 20  # fichas that reached the last attempt, before recommending anything
PNG_EXTRA = "pip install 'fichas[report]'  (matplotlib)"

__all__ = ["Informe", "Salida", "TasaIntento", "calcular_informe"]


@dataclass
class Informe:
    """Everything ``render_text`` and ``render_png`` show; built by ``calcular_informe``."""

    destinos: dict[str, int]
    por_intento: list[TasaIntento]
    rechazos: dict[str, int]
    rechazos_sin_detalle: int
    salidas_invalidas: int
    motivos: dict[str, int]
    umbral: float
    ultimo: TasaIntento | None
    compensa: bool | None
    conclusion: str
    duplicadas: int = 0
    ignoradas: int = 0
    avisos: list[str] = field(default_factory=list)


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


def nombres_criterios() -> dict[str, str]:
    """Criterion id -> its rule, from the criteria table (never repeated here)."""
    from criterios.tablas import cargar_criterios

    return {c.id: c.regla for c in cargar_criterios()}


def nombre_corto(regla: str, ancho: int = 26) -> str:
    """The rule's name: the part before a colon, else its first words up to ``ancho``."""
    nombre = regla.split(":", 1)[0].rstrip(".")
    if len(nombre) <= ancho:
        return nombre
    corto = nombre[:ancho].rsplit(" ", 1)[0]
    return corto + "…"


def etiqueta_criterio(criterio: str, nombres: Mapping[str, str]) -> str:
    """``C04 Fiel al origen`` when the table knows the id, else the id alone."""
    regla = nombres.get(criterio)
    return f"{criterio} {nombre_corto(regla)}" if regla else criterio


def _pct(valor: float | None) -> str:
    """A rate as a percentage with one decimal, or a dash when undefined."""
    return "-" if valor is None else f"{valor:.1%}"


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
            f"  {fila.intento:>7}{fila.llegaron:>10}{fila.aprobadas:>11}{_pct(fila.tasa):>9}"
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

    lineas += ["", f"Umbral del último intento: {_pct(informe.umbral)}", informe.conclusion]
    lineas += [f"Aviso: {aviso}" for aviso in informe.avisos]
    return "\n".join(lineas) + "\n"


def render_png(informe: Informe, path: Path | str) -> None:
    """Three bar charts: approval per attempt (with n and the threshold), rejections by
    criterion (named), and manual-review reasons.

    In the command line's one chart style (``herramientas.graficos``).
    """
    from matplotlib.ticker import MaxNLocator

    fig = graficos.figura(15, 4.8)
    tasas, rechazos, motivos = fig.subplots(1, 3)

    intentos = [str(f.intento) for f in informe.por_intento]
    valores = [100 * (f.tasa or 0.0) for f in informe.por_intento]
    barras = tasas.bar(intentos, valores, color=graficos.AZUL)
    tasas.bar_label(
        barras,
        labels=[f"{_pct(f.tasa)}\n{f.aprobadas}/{f.llegaron}" for f in informe.por_intento],
    )
    tasas.axhline(
        100 * informe.umbral,
        color=graficos.ROJO,
        linestyle="--",
        label=f"umbral {_pct(informe.umbral)}",
    )
    tasas.set_ylim(0, 115)
    tasas.set_xlabel("intento (etiqueta: aprobadas/llegaron)")
    tasas.set_ylabel("% aprobadas de las que llegan")
    tasas.set_title("Aprobación por intento")
    tasas.legend(loc="upper right")

    nombres = nombres_criterios()
    criterios = [etiqueta_criterio(c, nombres).replace(" ", "\n", 1) for c in informe.rechazos]
    cuentas = list(informe.rechazos.values())
    colores = [graficos.NARANJA] * len(criterios)
    if informe.salidas_invalidas:
        criterios.append("salida\ninválida")
        cuentas.append(informe.salidas_invalidas)
        colores.append(graficos.MORADO)
    if informe.rechazos_sin_detalle:  # grey: counted, but no criterion is known for them
        criterios.append("sin detalle\n(publicadas)")
        cuentas.append(informe.rechazos_sin_detalle)
        colores.append(graficos.GRIS)
    _barras(rechazos, criterios, cuentas, colores, "sin rechazos", MaxNLocator)
    rechazos.set_xlabel("criterio")
    rechazos.set_ylabel("rechazos")
    rechazos.set_title("Rechazos por criterio")

    _barras(
        motivos,
        list(informe.motivos),
        list(informe.motivos.values()),
        [graficos.VERDE] * len(informe.motivos),
        "ninguna ficha en revisión",
        MaxNLocator,
    )
    motivos.set_xlabel("motivo")
    motivos.set_ylabel("fichas")
    motivos.set_title("Motivos de revisión manual")

    graficos.guardar(fig, path)


def _barras(
    ejes: Any,
    etiquetas: list[str],
    cuentas: list[int],
    colores: list[str],
    vacio: str,
    locator: Any,
) -> None:
    """Bars with their counts on top, or a centred note when there is nothing to draw."""
    if etiquetas:
        barras = ejes.bar(etiquetas, cuentas, color=colores)
        ejes.bar_label(barras)
        ejes.yaxis.set_major_locator(locator(integer=True))
        ejes.tick_params(axis="x", labelsize=8)
    else:
        ejes.text(0.5, 0.5, vacio, ha="center", va="center")


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
    try:
        if args.kafka is not None:
            from infra.config import load_settings

            settings = load_settings()
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
    from infra.config import Settings
    from migraciones.conexion import rechazo_postgres
    from revision.certificador.confianza import informe_desde_almacen

    settings = Settings()
    try:
        out.write(informe_desde_almacen(settings))
    except Exception as exc:  # no store yet, database unreachable: say why, exit 1
        if (rechazo := rechazo_postgres(exc, settings.postgres_dsn)) is not None:
            print(f"fichas informe: {rechazo}", file=sys.stderr)  # login, database, privilege
            return 2
        print(f"fichas informe: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0
