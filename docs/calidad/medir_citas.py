"""The quoting evaluator (``FICHAS_EVALUADOR=citas``) from its records, and the other ways to
combine its pieces on the very same answers (docs/calidad.md, «El evaluador citas»).

Reads a ``fichas evaluar --evaluador citas`` result (``.json``) or its ``.parcial.jsonl``,
judges every quote again with today's code, and prints for the candidates the code does not
veto and for all: each score's AUC with its bootstrap interval, precision and recall at the λ
``fichas calibrar`` would certify (Learn then Test, 0.9 / 0.05), and the cost per candidate:

    python docs/calidad/medir_citas.py [--tabla] docs/calidad/conjunto-ev05-citas.json
    python docs/calidad/medir_citas.py --tabla --sin-modelo    # the code's scores alone, 188

Scores (products over a ficha's claims: every claim supported scores 1): ``citas`` the mode's
own (1 supported, 0.9 × P(respaldada) otherwise, 0.9 per unsupported attribute or empty
description); ``codigo`` the same without the model's P; ``modelo`` the model's P at every
claim, code aside; ``codigo_oraculo`` code judging the best fragment for each claim, no model;
``palabras`` the unsupported-words signal (1 − share); ``techo`` the design's ceiling, the best
quote and a P equal to the label (an upper bound, not a score).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from criterios import comprobar, fallos, mapear_origen, palabras_sin_respaldo  # noqa: E402
from criterios.respaldo import (  # noqa: E402
    afirmaciones,
    atributos_sin_respaldo,
    descripcion_sin_nada_propio,
    fragmentos,
    respaldada,
)
from grafo.citas import TECHO  # noqa: E402
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos, origen_de_caso  # noqa: E402
from herramientas.evaluar.medidas import bloque_puntuacion  # noqa: E402
from puerta.certificacion import Candidata, certificar  # noqa: E402

ESCORES = ("citas", "codigo", "modelo", "codigo_oraculo", "palabras", "techo")


def registros(path: Path) -> list[dict[str, Any]]:
    """The records of a result file, or of its partial file (the last line per id wins)."""
    if path.suffix == ".json":
        return list(json.loads(path.read_text(encoding="utf-8"))["registros"])
    por_id: dict[str, dict[str, Any]] = {}
    for linea in path.read_text(encoding="utf-8").splitlines():
        try:
            entrada = json.loads(linea)
        except json.JSONDecodeError:
            continue
        por_id[entrada["id"]] = entrada["registro"]
    return list(por_id.values())


def puntuaciones(registro: Mapping[str, Any], caso: Mapping[str, Any]) -> dict[str, float | None]:
    """Every score of one candidate, from its recorded answer and today's code."""
    origen = mapear_origen(origen_de_caso(caso)).origen
    ficha = next(c["ficha"] for c in caso["candidatas"] if c["id"] == registro["id"])
    citas = [c for c in registro["evaluador"].get("citas") or [] if "afirmacion" in c]
    claims = afirmaciones(ficha)
    atributos = atributos_sin_respaldo(ficha, origen) + (
        ["descripción"] if descripcion_sin_nada_propio(ficha) else []
    )
    ps = [c.get("p_respaldada") for c in citas]
    apoyos = [respaldada(c["cita"], c["afirmacion"], origen) for c in citas]
    if len(citas) < len(claims):  # an answer cut short: the missing claims are unsupported
        apoyos += [False] * (len(claims) - len(citas))
        ps += [None] * (len(claims) - len(citas))
    frs = fragmentos(origen)
    oraculo = [any(respaldada(f, a, origen) for f in frs) for a in claims]
    factores: list[float] | None = []
    for apoyo, p in zip(apoyos, ps, strict=True):
        if apoyo:
            continue
        if p is None or factores is None:
            factores = None
            continue
        factores.append(TECHO * p)
    sin_logprobs = all(p is None for p in ps)
    senal = palabras_sin_respaldo(ficha, origen)["proporcion"]
    return {
        "citas": None
        if factores is None or sin_logprobs
        else math.prod(factores) * TECHO ** len(atributos),
        "codigo": TECHO ** (apoyos.count(False) + len(atributos)),
        "modelo": None if any(p is None for p in ps) else math.prod(p for p in ps if p is not None),
        "codigo_oraculo": TECHO ** (oraculo.count(False) + len(atributos)),
        "palabras": None if senal is None else 1 - senal,
    }


def certificado(pares: Sequence[tuple[float | None, bool]]) -> dict[str, Any]:
    """Precision and recall at the λ the fixed-n Learn then Test certifies on these pairs."""
    resultado = certificar([Candidata(s, y) for s, y in pares])
    if resultado.umbral is None:
        return {"umbral": None, "motivo": resultado.motivo, "n": resultado.n, "k": resultado.k}
    aprobadas = [(s, y) for s, y in pares if s is not None and s >= resultado.umbral]
    buenas = sum(1 for _, y in pares if y)
    acertadas = sum(1 for _, y in aprobadas if y)
    return {
        "umbral": resultado.umbral,
        "precision": round(acertadas / len(aprobadas), 3) if aprobadas else None,
        "recall": round(acertadas / buenas, 3) if buenas else None,
        "n": resultado.n,
        "k": resultado.k,
    }


def sin_modelo(casos: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Records with no answer, for every labelled candidate: only the code's scores count."""
    return [
        {
            "id": c["id"],
            "caso": caso["id"],
            "humano": {"aprobada": c["aprobada"]},
            "evaluador": {"citas": []},
        }
        for caso in casos.values()
        for c in caso["candidatas"]
    ]


def tabla(salida: Mapping[str, Any]) -> str:
    """The result as the Markdown rows of docs/calidad.md: AUC [interval], λ, precision, recall."""
    cabecera = "| subconjunto | n (buenas) | puntuación | AUC [IC 95 %] | λ certificado | precisión"
    lineas = [cabecera + " | recall |"]
    lineas.append("| --- | --- | --- | --- | --- | --- | --- |")
    for nombre, bloque in salida["subconjuntos"].items():
        for score in ESCORES:
            auc = bloque[score]["auc"]
            cert = bloque[score]["lambda"]
            ic = auc["ic95"]
            valor = (
                "—" if auc["valor"] is None else f"{auc['valor']:.2f} [{ic[0]:.2f}, {ic[1]:.2f}]"
            )
            umbral = cert["umbral"]
            lineas.append(
                f"| {nombre} | {bloque['n']} ({bloque['buenas']}) | {score} | {valor} | "
                f"{'no: ' + cert['motivo'] if umbral is None else round(umbral, 3)} | "
                f"{cert.get('precision', '—')} | {cert.get('recall', '—')} |"
            )
    return "\n".join(lineas)


def main(argv: list[str]) -> int:
    """Print the table of docs/calidad.md for one result file (``--sin-modelo``: the code's
    scores alone on the whole labelled set; ``--tabla``: Markdown instead of JSON)."""
    casos = {c["id"]: c for c in cargar_casos(CASOS_POR_DEFECTO)}
    argumentos = [a for a in argv if not a.startswith("--")]
    if "--sin-modelo" in argv:
        path, crudos = Path("(sin modelo)"), sin_modelo(casos)
    else:
        path = Path(argumentos[0])
        crudos = registros(path)
    filas = []
    for registro in crudos:
        caso = casos[registro["caso"]]
        origen = origen_de_caso(caso)
        ficha = next(c["ficha"] for c in caso["candidatas"] if c["id"] == registro["id"])
        filas.append(
            {
                "id": registro["id"],
                "aprobada": bool(registro["humano"]["aprobada"]),
                "vetada": bool(fallos(comprobar(ficha, origen))),
                "extranjero": caso["evento"]["ficha_proveedor"].get("idioma", "es") != "es",
                "segundos": registro.get("segundos"),
                "tokens": registro.get("tokens_entrada", 0) + registro.get("tokens_salida", 0),
                "tokens_salida": registro.get("tokens_salida", 0),
                **puntuaciones(registro, caso),
            }
        )
        # the design's ceiling (reads the label: an upper bound, never a score): the best quote
        # for each claim, and a model whose P(respaldada) is 1 on a good ficha, 0 on a bad one
        fila = filas[-1]
        oraculo = fila["codigo_oraculo"]
        fila["techo"] = oraculo if oraculo == 1.0 or fila["aprobada"] else 0.0
    subconjuntos: dict[str, Callable[[dict[str, Any]], bool]] = {
        "sin veto": lambda f: not f["vetada"],
        "sin veto, origen es": lambda f: not f["vetada"] and not f["extranjero"],
        "sin veto, origen en/pt/fr": lambda f: not f["vetada"] and f["extranjero"],
        "todas": lambda f: True,
    }
    salida: dict[str, Any] = {"fichero": str(path), "n": len(filas), "subconjuntos": {}}
    for nombre, incluye in subconjuntos.items():
        sub = [f for f in filas if incluye(f)]
        bloque: dict[str, Any] = {"n": len(sub), "buenas": sum(f["aprobada"] for f in sub)}
        for score in ESCORES:
            pares = [(f[score], f["aprobada"]) for f in sub]
            bloque[score] = {"auc": bloque_puntuacion(pares)["auc"], "lambda": certificado(pares)}
        salida["subconjuntos"][nombre] = bloque
    n = len(filas) or 1
    salida["coste"] = {
        "segundos_p50": sorted(f["segundos"] or 0 for f in filas)[len(filas) // 2]
        if filas
        else None,
        "tokens_por_candidata": round(sum(f["tokens"] for f in filas) / n, 1),
        "tokens_salida_por_candidata": round(sum(f["tokens_salida"] for f in filas) / n, 1),
        "buenas_en_1": sum(1 for f in filas if f["aprobada"] and f["citas"] == 1.0),
        "malas_en_1": sum(1 for f in filas if not f["aprobada"] and f["citas"] == 1.0),
    }
    print(tabla(salida) if "--tabla" in argv else json.dumps(salida, ensure_ascii=False, indent=2))
    if "--tabla" in argv:
        print(json.dumps(salida["coste"], ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
