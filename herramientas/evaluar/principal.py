"""``fichas evaluar``: measure the fichas against the labelled set, on any OpenAI-compatible server.

The parser and entry point of ``--modo evaluador`` (the evaluator alone on every labelled
candidate), ``--modo bucle`` (the whole loop on every event) and ``--comparar A.json B.json``
(paired deltas, a PNG); ``casos`` reads the set, ``ejecucion`` runs, ``resumen`` prints and
draws, ``medidas`` computes. The models are driven through ``grafo`` with the worker's
settings, and a run is resumable. Options, the result file and the reasons: docs/calidad.md,
"``fichas evaluar``".
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from herramientas.evaluar import medidas as metricas
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos
from herramientas.evaluar.ejecucion import (
    Cache,
    clave_cache,
    configuracion,
    correr_bucle,
    correr_evaluador,
)
from herramientas.evaluar.resumen import grafico_comparacion, resumen, resumen_comparacion

FORMATO = "fichas-evaluar/1"
MODOS = ("evaluador", "bucle")


# -- command line ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    """Arguments of ``fichas evaluar``."""
    p = argparse.ArgumentParser(
        prog="fichas evaluar",
        description="Measure the evaluator or the whole loop against the labelled set "
        "(ejemplos/evaluacion), or compare two result files. The LLM is the one of the "
        "FICHAS_* settings (FICHAS_LLM_URL, FICHAS_LLM_MODELO...). See docs/calidad.md.",
    )
    p.add_argument(
        "--modo",
        choices=MODOS,
        help="evaluador: the evaluator on every candidate; bucle: the whole loop on every event",
    )
    p.add_argument(
        "--comparar",
        nargs=2,
        type=Path,
        metavar=("A.json", "B.json"),
        help="paired deltas B - A with bootstrap intervals, and a PNG",
    )
    p.add_argument("--casos", type=Path, default=CASOS_POR_DEFECTO, help="casos.jsonl")
    p.add_argument(
        "--salida",
        type=Path,
        help="result JSON (default evaluacion-<modo>.json, or comparacion.json)",
    )
    p.add_argument("--png", type=Path, help="with --comparar: the chart (default next to salida)")
    p.add_argument("--solo", nargs="+", default=[], metavar="ID", help="only these case ids")
    p.add_argument("--limite", type=int, help="only the first N cases")
    p.add_argument(
        "--omitir-vetadas",
        action="store_true",
        help="evaluador: skip candidates a code check vetoes (their verdict never matters)",
    )
    p.add_argument("--concurrencia", type=int, default=1, help="items in flight (default 1)")
    p.add_argument(
        "--rubrica",
        action="store_true",
        default=None,
        help="evaluator as a rubric of yes/no questions (FICHAS_EVALUADOR_RUBRICA)",
    )
    p.add_argument(
        "--evaluador",
        choices=("veredicto", "rubrica", "citas", "lector"),
        help="the evaluator's mode (FICHAS_EVALUADOR); citas: the model quotes the origin "
        "for each claim and code judges the quotes; lector: code alone, with the reader of "
        "translations (no model call)",
    )
    p.add_argument(
        "--senal",
        action="store_true",
        default=None,
        help="show the evaluator the unsupported words of fichas with a Spanish origin "
        "(FICHAS_EVALUADOR_SENAL)",
    )
    p.add_argument(
        "--limpiar-origen",
        action="store_true",
        default=None,
        help="clean the origin before the generator reads it (FICHAS_LIMPIAR_ORIGEN)",
    )
    p.add_argument(
        "--ejemplos",
        action="store_true",
        default=None,
        help="the generator's prompt frames the origin as data and shows one example per "
        "family (FICHAS_GENERADOR_EJEMPLOS)",
    )
    p.add_argument(
        "--espera-llm",
        type=float,
        default=600.0,
        metavar="S",
        help="give up (exit 3) if the LLM stays unreachable this long",
    )
    p.add_argument("--remuestras", type=int, default=metricas.REMUESTRAS)
    return p


def main(argv: list[str]) -> int:
    """Entry point of ``fichas evaluar``; exit 0 on success, 2 on bad usage, 3 LLM down."""
    args = _parser().parse_args(argv)
    if args.comparar:
        return _main_comparar(args)
    if not args.modo:
        print("fichas evaluar: falta --modo evaluador|bucle o --comparar A B", file=sys.stderr)
        return 2
    if not args.casos.is_file():
        print(f"fichas evaluar: no existe {args.casos}", file=sys.stderr)
        return 2
    if args.rubrica and args.evaluador not in (None, "rubrica"):
        print(
            f"fichas evaluar: --rubrica y --evaluador {args.evaluador} no coinciden",
            file=sys.stderr,
        )
        return 2
    return _main_medir(args)


def _settings(base: Any, args: argparse.Namespace, salida: Path, clave: str | None = None) -> Any:
    """FICHAS_* settings (``base``) with the command's overrides and a checkpointer of its own."""
    cambios: dict[str, Any] = {"postgres_dsn": None}
    if args.rubrica is not None:
        cambios["evaluador_rubrica"] = args.rubrica
        cambios["evaluador"] = "rubrica" if args.rubrica else "veredicto"
    if args.evaluador is not None:
        cambios["evaluador"] = args.evaluador
        cambios["evaluador_rubrica"] = args.evaluador == "rubrica"
    if args.senal is not None:
        cambios["evaluador_senal"] = args.senal
    if args.limpiar_origen is not None:
        cambios["limpiar_origen"] = args.limpiar_origen
    if args.ejemplos is not None:
        cambios["generador_ejemplos"] = args.ejemplos
    if clave:
        cambios["data_dir"] = salida.with_name(salida.name + ".estado") / clave
    return base.model_copy(update=cambios)


def _main_medir(args: argparse.Namespace) -> int:
    """Run one mode over the set, resumably, and write the result file."""
    from grafo import LLMUnavailable
    from herramientas.arranque import leer_ajustes
    from infra import eventloop

    if (base := leer_ajustes("evaluar")) is None:
        return 2  # one line per bad variable, said
    salida: Path = args.salida or Path(f"evaluacion-{args.modo}.json")
    config = configuracion(_settings(base, args, salida), args.modo, args.casos)
    config["omitir_vetadas"] = bool(args.omitir_vetadas) if args.modo == "evaluador" else None
    clave = clave_cache(config)
    settings = _settings(base, args, salida, clave)
    casos = cargar_casos(args.casos, args.solo, args.limite)
    cache = Cache(salida.with_name(salida.name + ".parcial.jsonl"), clave)
    concurrencia = max(1, args.concurrencia)
    registros: list[dict[str, Any]] | None = None
    try:
        if args.modo == "evaluador":
            corrida = correr_evaluador(
                settings, casos, cache, concurrencia, args.espera_llm, args.omitir_vetadas
            )
        else:
            corrida = correr_bucle(settings, casos, cache, concurrencia, args.espera_llm)
        registros = eventloop.run(corrida)
    except* LLMUnavailable as grupo:
        print(
            f"fichas evaluar: {grupo.exceptions[0]} (lo hecho queda en {cache.path}; "
            "vuelve a lanzar el mismo comando para seguir)",
            file=sys.stderr,
        )
    if registros is None:
        return 3
    calcular = metricas.metricas_evaluador if args.modo == "evaluador" else metricas.metricas_bucle
    resultado = {
        "formato": FORMATO,
        "modo": args.modo,
        "configuracion": config,
        "metricas": calcular(registros),
        "registros": registros,
    }
    salida.write_text(json.dumps(resultado, ensure_ascii=False, indent=2) + "\n", "utf-8")
    print(resumen(resultado))
    print(f"resultado: {salida}")
    return 0


def _main_comparar(args: argparse.Namespace) -> int:
    """Compare two result files; write the deltas as JSON and a PNG."""
    a = json.loads(args.comparar[0].read_text(encoding="utf-8"))
    b = json.loads(args.comparar[1].read_text(encoding="utf-8"))
    try:
        comparacion = metricas.comparar(a, b, args.remuestras)
    except ValueError as exc:
        print(f"fichas evaluar: {exc}", file=sys.stderr)
        return 2
    comparacion["a"] = str(args.comparar[0])
    comparacion["b"] = str(args.comparar[1])
    salida: Path = args.salida or Path("comparacion.json")
    salida.write_text(json.dumps(comparacion, ensure_ascii=False, indent=2) + "\n", "utf-8")
    png: Path = args.png or salida.with_suffix(".png")
    grafico_comparacion(comparacion, png)
    print(resumen_comparacion(comparacion))
    print(f"resultado: {salida}\ngráfico: {png}")
    return 0
