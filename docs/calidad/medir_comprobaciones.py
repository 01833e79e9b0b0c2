"""The veto rule of issue 22, measured: each new code check on the 80 references and the 188
labelled candidates, against the origin mapped to the house vocabulary.

A check may veto only if it flags none of the references and, as a veto on the candidates, at
least 95 % of what it flags is rejected by people. Prints a Markdown table: flagged references;
flagged candidates; of them rejected by people (the veto's precision, Wilson interval); recall
of the 121 people's rejections; people-approved fichas it vetoes. Then the unsupported-words
share (a signal): its AUC against people and, for each threshold, the same columns as a veto.
Then code alone (``criterios.comprobar``, every veto together) as a system that approves what
it does not veto, against people.

Usage: ``python docs/calidad/medir_comprobaciones.py [--detalle TEXT]`` (``--detalle`` prints
every flagged reference and candidate of the checks whose name contains TEXT).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from criterios import comprobar, fallos, reglas_casa
from criterios import fidelidad as f
from criterios.vocabulario import mapear_origen
from herramientas.evaluar import medidas as metricas
from herramientas.evaluar.casos import origen_de_caso

CASOS = Path(__file__).resolve().parents[2] / "ejemplos" / "evaluacion" / "casos.jsonl"
Check = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]


def superlativos(ficha: dict[str, Any], _origen: dict[str, Any]) -> dict[str, Any]:
    """C05's superlatives and calls to buy alone (``reglas_casa.superlativos``), on every
    published text of the ficha, so the row measures this sub-rule and not the rest of C05."""
    textos = [
        ficha.get("titulo"),
        ficha.get("descripcion"),
        *(ficha.get("atributos") or {}).values(),
    ]
    hallazgos = [h for t in textos for h in reglas_casa.superlativos(str(t or ""))]
    return {"ok": not hallazgos, "detalle": "; ".join(hallazgos)}


CHECKS: dict[str, Check] = {
    "C05 superlativo o llamada a comprar": superlativos,
    "C08 idioma": f.comprobar_idioma,
    "C09 atributo contradicho": f.comprobar_contradicciones,
    "C10 descripción vacía": lambda ficha, _origen: f.comprobar_descripcion_vacia(ficha),
    "C11 número sin respaldo": f.comprobar_numeros,
}
UMBRALES = (0.2, 0.3, 0.4, 0.5)


def wilson(k: int, n: int) -> str:
    """k/n with its 95 % Wilson interval (``herramientas.evaluar.medidas.wilson``), as text."""
    intervalo = metricas.wilson(k, n)
    if intervalo is None:
        return "indefinida"
    return f"{k / n:.2f} [{intervalo[0]:.2f}, {intervalo[1]:.2f}]"


def fila(nombre: str, refs: list[str], marcadas: list[bool], rechazos: int) -> str:
    """One Markdown row; ``marcadas`` holds the people's 'rejected' of each flagged one."""
    k = sum(marcadas)
    veto = "sí" if not refs and marcadas and k / len(marcadas) >= 0.95 else "no (señal)"
    return (
        f"| {nombre} | {len(refs)} | {len(marcadas)} | {k} | {wilson(k, len(marcadas))} "
        f"| {k / rechazos:.2f} ({k}/{rechazos}) | {len(marcadas) - k} | {veto} |"
    )


def main(detalle: str | None = None) -> None:
    casos = [json.loads(linea) for linea in CASOS.read_text(encoding="utf-8").splitlines()]
    mapeados = {c["id"]: mapear_origen(origen_de_caso(c)).origen for c in casos}
    rechazos = sum(not k["aprobada"] for c in casos for k in c["candidatas"])
    print(
        "| comprobación | referencias marcadas (de 80) | candidatas marcadas | rechazadas por "
        "personas | precisión del veto (IC 95 %) | recall de los rechazos | aprobadas "
        "vetadas | veta |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for nombre, check in CHECKS.items():
        refs, marcadas = [], []
        for caso in casos:
            origen = mapeados[caso["id"]]
            if not check(caso["referencia"], origen)["ok"]:
                refs.append(caso["id"])
            for c in caso["candidatas"]:
                r = check(c["ficha"], origen)
                if not r["ok"]:
                    marcadas.append(not c["aprobada"])
                    if detalle and detalle in nombre:
                        print("  ", c["id"], c["aprobada"], c["criterios"], r["detalle"])
        print(fila(nombre, refs, marcadas, rechazos))
    _senal(casos, mapeados, rechazos)
    _codigo_solo(casos)


def _senal(casos: list[dict[str, Any]], mapeados: dict[str, Any], rechazos: int) -> None:
    """The unsupported-words share: AUC against people, and each threshold as a veto."""
    refs = [
        f.palabras_sin_respaldo(c["referencia"], mapeados[c["id"]])["proporcion"] or 0.0
        for c in casos
    ]
    cands = [
        (
            f.palabras_sin_respaldo(k["ficha"], mapeados[c["id"]])["proporcion"] or 0.0,
            not k["aprobada"],
        )
        for c in casos
        for k in c["candidatas"]
    ]
    malas = [s for s, mala in cands if mala]
    buenas = [s for s, mala in cands if not mala]
    auc = sum((m > b) + 0.5 * (m == b) for m in malas for b in buenas) / (len(malas) * len(buenas))
    print(
        f"\npalabras sin respaldo: AUC (mala > buena) {auc:.2f}; media en referencias "
        f"{sum(refs) / len(refs):.2f}, buenas {sum(buenas) / len(buenas):.2f}, "
        f"malas {sum(malas) / len(malas):.2f}"
    )
    for umbral in UMBRALES:
        refs_marcadas = [str(i) for i, s in enumerate(refs) if s >= umbral]
        marcadas = [mala for s, mala in cands if s >= umbral]
        print(fila(f"palabras sin respaldo ≥ {umbral}", refs_marcadas, marcadas, rechazos))


def _codigo_solo(casos: list[dict[str, Any]]) -> None:
    """Code alone as a system: approves every candidate no code check vetoes."""
    vp = fp = fn = 0
    for caso in casos:
        origen = origen_de_caso(caso)
        for c in caso["candidatas"]:
            aprueba = not fallos(comprobar(c["ficha"], origen))
            vp += aprueba and c["aprobada"]
            fp += aprueba and not c["aprobada"]
            fn += not aprueba and c["aprobada"]
    print(
        f"\ncódigo solo: aprueba {vp + fp}, vp {vp} fp {fp} fn {fn}; precisión "
        f"{wilson(vp, vp + fp)}, recall {wilson(vp, vp + fn)}"
    )


if __name__ == "__main__":
    main(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--detalle" else None)
