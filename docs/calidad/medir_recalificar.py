"""``fichas calibrar --recalificar`` measured on the labelled set, from recorded evaluator answers.

A measurement tool of docs/calidad.md, not part of the product. A CPU model takes ~60 s per
answer (the 1.5B) on this machine, so instead of running it again this replays the evaluator
answers recorded by ``capturar_logprobs.py`` (``docs/calidad/puerta/*.jsonl.gz``: the verdict
and its log-probabilities, per candidate) through the project's fake LLM server, and runs the
real command as a user would:

    fichas calibrar --recalificar --casos <the recorded candidates> --salida <audit>

with ``FICHAS_LLM_URL`` at the replaying server and ``FICHAS_LLM_MODELO`` naming the model whose
answers are replayed, ``FICHAS_MAX_INTENTOS=1`` (since issue 47 the hand-written labelled set
counts only for a loop that never retries: docs/puerta.md, "Re-scoring") and an empty reviewer
store in its data folder (where the command counts the variants tried). The command builds the
loop's evaluator agent, asks it about every candidate, reads the score from the
log-probabilities (``grafo.puntuacion``), applies the code checks of the running criteria, and
certifies the running key with Learn then Test. The script then checks that the scores the
command computed are those of the recording (replay fidelity) and prints the audit's
certification.

    python docs/calidad/medir_recalificar.py docs/calidad/puerta/ev15-base.jsonl.gz \\
        --modelo qwen2.5-coder-1.5b-instruct-q4_k_m [--control] [--mismas-que OTRA.jsonl.gz]

``--control`` replaces every score by a synthetic judge that separates the labels (good ~ U(0.5,
1), bad ~ U(0, 0.5), seed 7): the control that the command certifies when the labels allow.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from medir_puerta import auc, cargar

from harness.fake_llm.client import FakeLLM
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos

REPO = Path(__file__).resolve().parents[2]


def subconjunto(ids: set[str], destino: Path) -> list[dict[str, Any]]:
    """The labelled set's cases with only the recorded candidates, in the set's order."""
    casos = []
    for caso in cargar_casos(CASOS_POR_DEFECTO):
        candidatas = [c for c in caso["candidatas"] if c["id"] in ids]
        if candidatas:
            casos.append({**caso, "candidatas": candidatas})
    destino.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in casos), "utf-8")
    return casos


def guion(casos: list[dict[str, Any]], filas: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The fake LLM's script: per SKU, the recorded verdict and score of each candidate in the
    order the command asks (one at a time, in the set's order)."""
    reglas = []
    for caso in casos:
        pasos = []
        for c in caso["candidatas"]:
            fila = filas[c["id"]]
            try:
                aprueba = bool(json.loads(fila["contenido"]).get("aprobada"))
            except (json.JSONDecodeError, AttributeError):
                aprueba = False
            pasos.append({"accion": "aprobar" if aprueba else "rechazar", "puntuacion": fila["s"]})
        reglas.append({"sku": caso["evento"]["sku"], "evaluador": pasos})
    return {"rules": reglas}


def crear_almacen(data_dir: Path) -> None:
    """An empty reviewer store (SQLite) in ``data_dir``, as ``fichas migrar`` would create it."""
    import asyncio

    from revision.almacen.database import open_database

    async def crear() -> None:
        await (await open_database(None, data_dir)).close()

    data_dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(crear())


def main() -> int:
    """Replay one recording through ``fichas calibrar --recalificar``; print what it said."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("captura", type=Path)
    p.add_argument("--modelo", required=True, help="FICHAS_LLM_MODELO: the replayed model")
    p.add_argument("--control", action="store_true")
    p.add_argument(
        "--mismas-que", type=Path, help="only the candidates another recording has (paired)"
    )
    args = p.parse_args()
    filas = {r["id"]: r for r in cargar(args.captura, rubrica=False)}
    if args.mismas_que:
        otras = {r["id"] for r in cargar(args.mismas_que, rubrica=False)}
        filas = {i: r for i, r in filas.items() if i in otras}
    if args.control:
        azar = random.Random(7)
        for r in filas.values():
            r["s"] = azar.uniform(0.5, 1.0) if r["humano"] else azar.uniform(0.0, 0.5)
    with tempfile.TemporaryDirectory(prefix="recalificar_") as tmp:
        trabajo = Path(tmp)
        casos = subconjunto(set(filas), trabajo / "casos.jsonl")
        salida = trabajo / "puerta.json"
        with FakeLLM(guion(casos, filas)) as llm:
            env = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
            env |= {
                "FICHAS_LLM_URL": llm.url,
                "FICHAS_LLM_MODELO": args.modelo,
                "FICHAS_DATA_DIR": str(trabajo / "datos"),
                "FICHAS_MAX_INTENTOS": "1",
                "PYTHONPATH": str(REPO),
            }
            crear_almacen(trabajo / "datos")
            comando = ["--recalificar", "--casos", str(trabajo / "casos.jsonl")]
            proc = subprocess.run(
                [sys.executable, "-m", "herramientas.cli", "calibrar", *comando,
                 "--salida", str(salida)],
                env=env, capture_output=True, text=True, timeout=1800, cwd=trabajo,
            )  # fmt: skip
        print(proc.stdout)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            return proc.returncode
        cache = salida.with_name(salida.name + ".recalificar.parcial.jsonl")
        registros = [json.loads(linea)["registro"] for linea in cache.read_text().splitlines()]
        distintas = [
            r["id"]
            for r in registros
            if (r["evaluador"]["puntuacion"] is None) != (filas[r["id"]]["s"] is None)
            or abs((r["evaluador"]["puntuacion"] or 0) - (filas[r["id"]]["s"] or 0)) > 1e-6
        ]
        doc = json.loads(salida.read_text())
        resumen = {
            "candidatas": len(registros),
            "aprobadas_por_personas": sum(r["humano"]["aprobada"] for r in registros),
            "vetadas_por_codigo": sum(bool(r["codigo"]) for r in registros),
            "puntuaciones_distintas_de_la_grabacion": len(distintas),
            "auc_sin_veto_codigo": auc(
                [
                    (r["evaluador"]["puntuacion"], r["humano"]["aprobada"])
                    for r in registros
                    if not r["codigo"]
                ]
            ),
            "puertas": [
                {
                    k: p["estado"][k]
                    for k in ("familia", "abierta", "umbral", "n", "k", "motivo", "origen_datos")
                }
                | {"p": p["certificacion"]["p"]}
                for p in doc["puertas"]
            ],
            "clave": doc["origen"]["clave"],
        }
        print(json.dumps(resumen, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
