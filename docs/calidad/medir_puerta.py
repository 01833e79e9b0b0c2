"""The publication gate measured on the labelled set: AUC, cross-validated certification, tokens.

A measurement tool of docs/calidad.md, not part of the product. It reads the evaluator's raw
answers captured by ``capturar_logprobs.py`` (one JSONL per model and prompt), scores them with
the product's own functions (``grafo.puntuacion``) and reports:

- the AUC of the score against people (Mann–Whitney), on all candidates and on those the code
  checks do not veto (the only ones the gate ever sees);
- cross-validation by event: ``--repeticiones`` random halves of the events; the threshold is
  certified (``puerta.certificacion.certificar``, objective 0.9, δ 0.05) on one half and
  precision and recall of "code passes and s ≥ λ" are measured on the other half;
- the same with the judge's own listed problems as a further veto;
- output tokens per answer, and how many come after the verdict token (what asking for the
  verdict alone, and for problems only on a rejection, would save on approvals).

    python docs/calidad/medir_puerta.py ev05-base.jsonl[.gz] [--rubrica] [--repeticiones 200]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grafo.puntuacion import puntuacion_rubrica, puntuacion_veredicto
from grafo.rubrica import PREGUNTAS
from puerta.certificacion import Candidata, certificar


def auc(pares: Sequence[tuple[float | None, bool]]) -> float | None:
    """P(score of a good ficha > score of a bad one), ties half; a missing score counts as 0."""
    buenas = [s or 0.0 for s, ok in pares if ok]
    malas = [s or 0.0 for s, ok in pares if not ok]
    if not buenas or not malas:
        return None
    gana = sum((b > m) + 0.5 * (b == m) for b in buenas for m in malas)
    return gana / (len(buenas) * len(malas))


def cargar(path: Path, rubrica: bool) -> list[dict[str, Any]]:
    """The captured answers with their score, the human label and whether code vetoes them."""
    filas = []
    datos = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    for linea in datos.decode("utf-8").splitlines():
        if not linea.strip():
            continue
        r = json.loads(linea)
        if rubrica:
            r["s"] = puntuacion_rubrica(r["logprobs"], tuple(PREGUNTAS))
        else:
            r["s"] = puntuacion_veredicto(r["logprobs"])
        try:
            contenido = json.loads(r["contenido"])
        except json.JSONDecodeError:
            contenido = {}
        r["problemas_juez"] = bool(contenido.get("problemas")) if not rubrica else False
        filas.append(r)
    return filas


def candidatas(filas: Sequence[dict[str, Any]], veto_juez: bool) -> list[Candidata]:
    """What the gate sees: a code-vetoed ficha (or, optionally, one the judge lists problems
    for) never approves, so its score is taken as absent."""
    return [
        Candidata(
            puntuacion=None if r["codigo"] or (veto_juez and r["problemas_juez"]) else r["s"],
            aprobada_por_personas=bool(r["humano"]),
            familia=r["familia"],
            event_id=r["id"],
        )
        for r in filas
    ]


def validar(filas: list[dict[str, Any]], repeticiones: int, veto_juez: bool) -> dict[str, Any]:
    """Certify on half of the events, measure on the other half, ``repeticiones`` times."""
    casos = sorted({r["caso"] for r in filas})
    azar = random.Random(20261201)
    umbrales, precisiones, recalls, bajo = [], [], [], 0
    certificadas = 0
    for _ in range(repeticiones):
        mitad = set(azar.sample(casos, len(casos) // 2))
        a = candidatas([r for r in filas if r["caso"] in mitad], veto_juez)
        b = candidatas([r for r in filas if r["caso"] not in mitad], veto_juez)
        cert = certificar(a)
        if cert.umbral is None:
            continue
        certificadas += 1
        umbrales.append(cert.umbral)
        aprobadas = [c for c in b if c.puntuacion is not None and c.puntuacion >= cert.umbral]
        buenas = sum(c.aprobada_por_personas for c in b)
        vp = sum(c.aprobada_por_personas for c in aprobadas)
        if aprobadas:
            precisiones.append(vp / len(aprobadas))
            bajo += vp / len(aprobadas) < 0.9
        recalls.append(vp / buenas if buenas else 0.0)
    return {
        "repeticiones": repeticiones,
        "certificadas": certificadas,
        "umbral_mediana": statistics.median(umbrales) if umbrales else None,
        "precision_media": statistics.fmean(precisiones) if precisiones else None,
        "recall_medio": statistics.fmean(recalls) if recalls else None,
        "precision_bajo_0_9": bajo,
    }


def tokens(filas: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Output tokens per answer, and the share after the verdict token."""
    totales = [len((r.get("logprobs") or {}).get("content") or []) for r in filas]
    hasta = []
    for r in filas:
        texto = ""
        for i, t in enumerate((r.get("logprobs") or {}).get("content") or []):
            texto += t["token"]
            if (
                "true" in texto.split('"aprobada"', 1)[-1]
                or "false" in texto.split('"aprobada"', 1)[-1]
            ):
                hasta.append(i + 1)
                break
    return {
        "salida_media": statistics.fmean(totales) if totales else None,
        "hasta_veredicto_media": statistics.fmean(hasta) if hasta else None,
        "entrada_media": statistics.fmean(
            (r.get("uso") or {}).get("prompt_tokens", 0) for r in filas
        )
        if filas
        else None,
    }


def main() -> int:
    """Print the measurements of one capture file as JSON."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("captura", type=Path)
    p.add_argument("--rubrica", action="store_true")
    p.add_argument("--repeticiones", type=int, default=200)
    p.add_argument(
        "--control",
        action="store_true",
        help="replace the scores by a synthetic judge with signal (good ~ U(0.5, 1), bad ~ "
        "U(0, 0.75), seed 7): a control that the certification and the split work when there "
        "is something to certify",
    )
    p.add_argument(
        "--control-malas-max",
        type=float,
        default=0.75,
        help="with --control: bad fichas score U(0, this) (default 0.75)",
    )
    args = p.parse_args()
    filas = cargar(args.captura, args.rubrica)
    if args.control:
        azar = random.Random(7)
        for r in filas:
            r["s"] = (
                azar.uniform(0.5, 1.0) if r["humano"] else azar.uniform(0.0, args.control_malas_max)
            )
    sin_veto = [r for r in filas if not r["codigo"]]
    todas = certificar(candidatas(filas, False))
    informe = {
        "n": len(filas),
        "aprobadas_por_personas": sum(bool(r["humano"]) for r in filas),
        "sin_puntuacion": sum(r["s"] is None for r in filas),
        "auc_todas": auc([(r["s"], bool(r["humano"])) for r in filas]),
        "n_sin_veto_codigo": len(sin_veto),
        "auc_sin_veto_codigo": auc([(r["s"], bool(r["humano"])) for r in sin_veto]),
        "certificacion_todo_el_conjunto": {
            "umbral": todas.umbral,
            "n": todas.n,
            "k": todas.k,
            "motivo": todas.motivo,
        },
        "validacion_cruzada": validar(filas, args.repeticiones, False),
        "validacion_cruzada_veto_juez": validar(filas, args.repeticiones, True),
        "tokens": tokens(filas),
        "puntuaciones": sorted(
            (round(r["s"], 4) if r["s"] is not None else None, bool(r["humano"]), bool(r["codigo"]))
            for r in filas
            if r["s"] is not None
        )[-15:],
    }
    print(json.dumps(informe, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
