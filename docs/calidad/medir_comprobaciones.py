"""The veto rule of issue 22, measured: each new code check on the 80 references and 188
candidates of the labelled set, with the origin mapped to the house vocabulary.

A check may veto only if it flags none of the references and at least 95 % of the candidates
it flags are rejected by people. Prints one row per check: flagged references, and as a veto
on the candidates flagged / of them rejected by people (precision of the veto), recall of
the people's rejections, and the people-approved fichas it would veto. Also code alone
(every veto together) as the system "code approves what it does not veto".

Usage: ``python docs/calidad/medir_comprobaciones.py [--detalle CHECK]``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from criterios import comprobar, fallos
from criterios import fidelidad as f
from criterios.vocabulario import mapear_origen
from herramientas.evaluar import origen_de_caso

CASOS = Path(__file__).resolve().parents[2] / "ejemplos" / "evaluacion" / "casos.jsonl"
CHECKS = {
    "C08 idioma": lambda ficha, o: f.comprobar_idioma(ficha, o),
    "C09 contradicción": lambda ficha, o: f.comprobar_contradicciones(ficha, o),
    "C10 descripción vacía": lambda ficha, o: f.comprobar_descripcion_vacia(ficha),
    "C11 números": lambda ficha, o: f.comprobar_numeros(ficha, o),
}


def main(detalle: str | None = None) -> None:
    casos = [json.loads(linea) for linea in CASOS.read_text(encoding="utf-8").splitlines()]
    for nombre, check in CHECKS.items():
        refs = []
        marcadas = rechazadas = aprobadas_vetadas = 0
        for caso in casos:
            origen = mapear_origen(origen_de_caso(caso)).origen
            r = check(caso["referencia"], origen)
            if not r["ok"]:
                refs.append(caso["id"])
                if detalle and detalle in nombre:
                    print("REF", caso["id"], r["detalle"])
            for c in caso["candidatas"]:
                r = check(c["ficha"], origen)
                if not r["ok"]:
                    marcadas += 1
                    rechazadas += not c["aprobada"]
                    aprobadas_vetadas += c["aprobada"]
                    if detalle and detalle in nombre:
                        print("CAND", c["id"], c["aprobada"], c["criterios"], r["detalle"])
        print(
            f"{nombre}: referencias marcadas {len(refs)} {refs[:5]}; candidatas marcadas "
            f"{marcadas}, rechazadas por personas {rechazadas} "
            f"(precisión {rechazadas / marcadas if marcadas else float('nan'):.2f}), "
            f"recall de los 121 rechazos {rechazadas / 121:.2f}, aprobadas vetadas {aprobadas_vetadas}"
        )
    vp = fp = fn = vn = 0
    for caso in casos:
        origen = origen_de_caso(caso)
        for c in caso["candidatas"]:
            aprueba = not fallos(comprobar(c["ficha"], origen))
            vp += aprueba and c["aprobada"]
            fp += aprueba and not c["aprobada"]
            fn += not aprueba and c["aprobada"]
            vn += not aprueba and not c["aprobada"]
    print(
        f"código solo (comprobar): vp {vp} fp {fp} fn {fn} vn {vn} "
        f"precisión {vp / (vp + fp):.3f} recall {vp / (vp + fn):.3f}"
    )


if __name__ == "__main__":
    main(sys.argv[2] if len(sys.argv) > 2 and sys.argv[1] == "--detalle" else None)
