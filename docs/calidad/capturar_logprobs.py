"""Capture the evaluator's raw answers with token log-probabilities on the labelled set.

A measurement tool of docs/calidad.md, not part of the product: it sends each labelled
candidate to an OpenAI-compatible server exactly as the evaluator agent does (the same system
prompt and user message from ``grafo.mensajes``, the same ``response_format`` json_schema that
langchain's ``ProviderStrategy`` builds, temperature 0, no repeat penalty) and stores the raw
answer with its ``logprobs`` per candidate in a JSONL file. The score is then computed from the
stored log-probabilities by the product's own function, so the measurement and the worker read
the same tokens the same way, and a change of the score function needs no new model run.

    python docs/calidad/capturar_logprobs.py --url http://127.0.0.1:8311/v1 \
        --salida ev05-logprobs.jsonl [--rubrica] [--omitir-vetadas] [--limite N] [--muestra N]

Resumable: candidates already in the output file are skipped.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import httpx

from criterios import comprobar, fallos
from esquemas import Veredicto
from grafo.mensajes import (
    mensaje_evaluador,
    mensaje_evaluador_rubrica,
    prompt_evaluador,
    prompt_evaluador_rubrica,
)
from grafo.rubrica import Rubrica
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos, origen_de_caso


def cuerpo(ficha: dict, origen: dict, rubrica: bool, modelo: str, top: int) -> dict:
    """The chat request the evaluator agent sends, with log-probabilities asked for."""
    if rubrica:
        sistema, usuario = prompt_evaluador_rubrica(), mensaje_evaluador_rubrica(ficha, origen)
        nombre, esquema = "Rubrica", Rubrica.model_json_schema()
    else:
        comprobaciones = comprobar(ficha, origen)
        sistema = prompt_evaluador()
        usuario = mensaje_evaluador(ficha, comprobaciones, origen)
        nombre, esquema = "Veredicto", Veredicto.model_json_schema()
    return {
        "model": modelo,
        "messages": [
            {"role": "system", "content": sistema},
            {"role": "user", "content": usuario},
        ],
        "temperature": 0,
        "max_tokens": 1024,
        "logprobs": True,
        "top_logprobs": top,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": nombre, "schema": esquema},
        },
    }


def main() -> int:
    """Capture every candidate not yet in the output file."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", required=True)
    p.add_argument("--modelo", default="local")
    p.add_argument("--salida", type=Path, required=True)
    p.add_argument("--rubrica", action="store_true")
    p.add_argument("--omitir-vetadas", action="store_true")
    p.add_argument("--limite", type=int)
    p.add_argument("--muestra", type=int, help="a random sample of N candidates (seed 1)")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--casos", type=Path, default=CASOS_POR_DEFECTO)
    args = p.parse_args()
    hechos = set()
    if args.salida.exists():
        hechos = {json.loads(linea)["id"] for linea in args.salida.open() if linea.strip()}
    items = [(caso, c) for caso in cargar_casos(args.casos) for c in caso["candidatas"]]
    if args.omitir_vetadas:
        items = [
            (caso, c)
            for caso, c in items
            if not fallos(comprobar(c["ficha"], origen_de_caso(caso)))
        ]
    if args.muestra:
        items = random.Random(1).sample(items, min(args.muestra, len(items)))
    items = items[: args.limite] if args.limite else items
    with httpx.Client(timeout=1800) as cliente, args.salida.open("a") as out:
        for n, (caso, c) in enumerate(items, 1):
            if c["id"] in hechos:
                continue
            origen = origen_de_caso(caso)
            inicio = time.perf_counter()
            r = cliente.post(
                f"{args.url}/chat/completions",
                json=cuerpo(dict(c["ficha"]), origen, args.rubrica, args.modelo, args.top),
            )
            r.raise_for_status()
            datos = r.json()
            eleccion = datos["choices"][0]
            registro = {
                "id": c["id"],
                "caso": caso["id"],
                "familia": caso["evento"]["familia"],
                "humano": c["aprobada"],
                "codigo": [f["criterio"] for f in fallos(comprobar(c["ficha"], origen))],
                "contenido": eleccion["message"]["content"],
                "logprobs": eleccion.get("logprobs"),
                "uso": datos.get("usage"),
                "segundos": round(time.perf_counter() - inicio, 2),
            }
            out.write(json.dumps(registro, ensure_ascii=False) + "\n")
            out.flush()
            print(f"{n}/{len(items)} {c['id']} {registro['segundos']} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
