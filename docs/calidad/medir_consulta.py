"""A model asked about each doubtful clause (issue 48): does it lift `lector`'s precision?

`lector` (model-free) approves 158 of the 312 code-passing candidates of the labelled set, 11
of them bad: each adds a fact inside a clause that reads like the origin (docs/calidad.md,
«El dato inventado dentro de una frase»). Here the loop's own model is asked, for every
clause of an approved candidate that has a content word the origin does not write
(``criterios.clausulas.lecturas``), whether the supplier's text says it: one question per
clause, the origin and the whole claim as context, the answer one token («sí» / «no») read
through its log-probabilities, P(sí) = p(sí) / (p(sí) + p(no)) over the top 10. A candidate's
signal is its lowest P (1 when it has no such clause).

    python docs/calidad/medir_consulta.py --url http://127.0.0.1:8532/v1 --salida consulta-15.json
    python docs/calidad/medir_consulta.py --cifras consulta-15.json [otro.json]

The second chooses, per origin group (Spanish, foreign), the threshold on P with the rule of
``medir_clausulas.py`` on its fit half (of the thresholds that keep at least ``CONSERVAR`` of
the good candidates `lector` keeps at s = 1, the most precise), and prints both halves, the
whole set and each group under it. Not the product's code path: a free one-token answer, not
the structured output a mode of the loop would use (docs/calidad.md says what that means).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import medir_clausulas as mc  # noqa: E402

from criterios import mapear_origen  # noqa: E402
from criterios._comun import attributes, supplier  # noqa: E402
from criterios.clausulas import _CONECTOR_RE, UMBRALES  # noqa: E402
from criterios.respaldo import origen_citable  # noqa: E402
from estadistica import wilson  # noqa: E402
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos, origen_de_caso  # noqa: E402

SISTEMA = "Eres un verificador de fichas de producto. Respondes solo «sí» o «no»."
PREGUNTA = (
    "Texto del proveedor:\n{origen}\n\nFrase de la ficha: «{afirmacion}»\n"
    "Parte a comprobar: «{parte}»\n\n¿El texto del proveedor dice eso de la parte a comprobar "
    "(en cualquier idioma)? Responde sí o no."
)
SI, NO = {"sí", "si", "s", "yes"}, {"no", "n"}
REJILLA = [None, *(round(0.40 + i / 100, 2) for i in range(55))]


def texto_origen(caso: Mapping[str, Any]) -> str:
    """The citable origin as the question shows it: title, description, attributes."""
    proveedor = supplier(origen_citable(mapear_origen(origen_de_caso(caso)).origen))
    atributos = "; ".join(f"{k}: {v}" for k, v in attributes(proveedor).items())
    return (
        f"Título: {proveedor.get('titulo') or ''}\n"
        f"Descripción: {proveedor.get('descripcion') or ''}\nAtributos: {atributos}"
    )


def aprobadas(candidatas: Sequence[mc.Candidata]) -> list[mc.Candidata]:
    """The candidates `lector` approves (s = 1) with today's clause thresholds."""
    return [c for c in candidatas if mc.puntuar(c, UMBRALES[c.espanol]) == 1.0]


def preguntas(candidatas: Sequence[mc.Candidata]) -> list[tuple[str, str, str]]:
    """(case, claim, clause) for every clause with a word the origin lacks, distinct, sorted
    (the same event's questions one after the other: the server reuses the origin's prefix)."""
    pares = {
        (c.caso, juicio.afirmacion, x.clausula): None
        for c in aprobadas(candidatas)
        for juicio, clausulas in zip(c.juicios, c.clausulas, strict=True)
        for x in clausulas
    }
    return sorted(pares)


def preguntar(
    cliente: Any, modelo: str, caso: Mapping[str, Any], afirmacion: str, clausula: str
) -> dict:
    """One question; P(sí) from the first token's top log-probabilities, with its cost."""
    texto = PREGUNTA.format(
        origen=texto_origen(caso), afirmacion=afirmacion, parte=_CONECTOR_RE.sub("", clausula)
    )
    inicio = time.perf_counter()
    respuesta = cliente.chat.completions.create(
        model=modelo,
        messages=[{"role": "system", "content": SISTEMA}, {"role": "user", "content": texto}],
        max_tokens=1,
        temperature=0,
        logprobs=True,
        top_logprobs=10,
    )
    segundos = time.perf_counter() - inicio
    tops = respuesta.choices[0].logprobs.content[0].top_logprobs
    si = sum(math.exp(t.logprob) for t in tops if t.token.strip().lower() in SI)
    no = sum(math.exp(t.logprob) for t in tops if t.token.strip().lower() in NO)
    return {
        "caso": caso["id"],
        "afirmacion": afirmacion,
        "clausula": clausula,
        "p": round(si / (si + no), 4) if si + no > 0 else 0.5,
        "tokens_entrada": respuesta.usage.prompt_tokens if respuesta.usage else None,
        "segundos": round(segundos, 2),
    }


def medir(url: str, modelo: str, salida: Path, hilos: int) -> None:
    """Ask every question (``preguntas``) on ``hilos`` connections; write the answers."""
    from openai import OpenAI

    casos = cargar_casos(CASOS_POR_DEFECTO)
    por_id = {c["id"]: c for c in casos}
    lista = preguntas(mc.leidas(casos))
    cliente = OpenAI(base_url=url, api_key="x", timeout=600)
    inicio = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(hilos) as pool:
        respuestas = list(
            pool.map(lambda q: preguntar(cliente, modelo, por_id[q[0]], q[1], q[2]), lista)
        )
    resultado = {
        "modelo": modelo,
        "preguntas": len(respuestas),
        "segundos_reloj": round(time.perf_counter() - inicio, 1),
        "hilos": hilos,
        "respuestas": respuestas,
    }
    salida.write_text(json.dumps(resultado, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def filas(respuestas: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Every code-passing candidate: people's verdict, whether `lector` approves it, its
    lowest P over the clauses asked about, its half and origin group."""
    p = {(r["caso"], r["afirmacion"], r["clausula"]): r["p"] for r in respuestas}
    casos = cargar_casos(CASOS_POR_DEFECTO)
    ajuste = mc.mitad_de_ajuste(casos)
    salida = []
    for c in mc.leidas(casos):
        arriba = mc.puntuar(c, UMBRALES[c.espanol]) == 1.0
        ps = (
            [
                p[(c.caso, j.afirmacion, x.clausula)]
                for j, clausulas in zip(c.juicios, c.clausulas, strict=True)
                for x in clausulas
            ]
            if arriba
            else []
        )
        salida.append(
            {
                "caso": c.caso,
                "espanol": c.espanol,
                "aprobada": c.aprobada,
                "lector": arriba,
                "p": min(ps, default=1.0),
                "ajuste": c.caso in ajuste,
            }
        )
    return salida


def pasa(fila: Mapping[str, Any], umbral: float | None) -> bool:
    """Approved by `lector` and, with a threshold, by the model's answer."""
    return bool(fila["lector"]) and (umbral is None or fila["p"] >= umbral)


def elegir(todas: Sequence[Mapping[str, Any]], espanol: bool) -> float | None:
    """The threshold of one origin group, chosen on its fit half (module docstring)."""
    grupo = [f for f in todas if f["espanol"] == espanol and f["ajuste"]]
    hoy = sum(1 for f in grupo if f["aprobada"] and f["lector"])
    mejor: tuple = ()
    for umbral in REJILLA:
        arriba = [f for f in grupo if pasa(f, umbral)]
        buenas = sum(1 for f in arriba if f["aprobada"])
        if not arriba or buenas < mc.CONSERVAR * hoy:
            continue
        clave = (buenas / len(arriba), buenas, -(umbral or 0.0))
        if not mejor or clave > mejor[0]:
            mejor = (clave, umbral)
    return mejor[1]


def cifras(sub: Sequence[Mapping[str, Any]], umbrales: Mapping[bool, float | None]) -> dict:
    """Good ones approved, the share of the good ones, precision [Wilson], before and after."""
    buenas = sum(1 for f in sub if f["aprobada"])

    def bloque(arriba: list[Mapping[str, Any]]) -> dict[str, Any]:
        acertadas = sum(1 for f in arriba if f["aprobada"])
        intervalo = wilson(acertadas, len(arriba)) if arriba else None
        return {
            "buenas_aprobadas": acertadas,
            "parte_de_las_buenas": round(acertadas / buenas, 3) if buenas else None,
            "aprobadas": len(arriba),
            "precision": round(acertadas / len(arriba), 3) if arriba else None,
            "wilson": [round(x, 3) for x in intervalo] if intervalo else None,
        }

    return {
        "buenas": buenas,
        "lector": bloque([f for f in sub if f["lector"]]),
        "con_consulta": bloque([f for f in sub if pasa(f, umbrales[f["espanol"]])]),
    }


def auc(sub: Sequence[Mapping[str, Any]]) -> float | None:
    """AUC of the lowest P among `lector`'s approvals: the signal's own ranking of them."""
    arriba = [f for f in sub if f["lector"]]
    buenas = [f["p"] for f in arriba if f["aprobada"]]
    malas = [f["p"] for f in arriba if not f["aprobada"]]
    if not buenas or not malas:
        return None
    pares = sum((b > m) + 0.5 * (b == m) for b in buenas for m in malas)
    return round(pares / (len(buenas) * len(malas)), 3)


def informe(path: Path) -> dict[str, Any]:
    """The thresholds chosen on the fit half and every subset's figures under them."""
    datos = json.loads(path.read_text(encoding="utf-8"))
    todas = filas(datos["respuestas"])
    umbrales = {espanol: elegir(todas, espanol) for espanol in (True, False)}
    subconjuntos = {
        "ajuste": [f for f in todas if f["ajuste"]],
        "prueba": [f for f in todas if not f["ajuste"]],
        "todas": todas,
        "origen es": [f for f in todas if f["espanol"]],
        "origen en/pt/fr": [f for f in todas if not f["espanol"]],
    }
    respuestas = datos["respuestas"]
    return {
        "modelo": datos["modelo"],
        "umbrales": {"es": umbrales[True], "otros": umbrales[False]},
        "preguntas": len(respuestas),
        "tokens_entrada_por_pregunta": round(
            sum(r["tokens_entrada"] or 0 for r in respuestas) / len(respuestas)
        ),
        "segundos_reloj_por_pregunta": round(datos["segundos_reloj"] / len(respuestas), 2),
        "auc_entre_las_de_lector": {n: auc(s) for n, s in subconjuntos.items()},
        "cifras": {n: cifras(s, umbrales) for n, s in subconjuntos.items()},
    }


def main(argv: list[str]) -> int:
    """Ask the questions, or print the figures of answer files (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url")
    parser.add_argument("--modelo", default="local")
    parser.add_argument("--hilos", type=int, default=2)
    parser.add_argument("--salida", type=Path)
    parser.add_argument("--cifras", nargs="*", type=Path, default=[])
    args = parser.parse_args(argv)
    if args.url:
        medir(args.url, args.modelo, args.salida, args.hilos)
    salida = {str(p): informe(p) for p in args.cifras}
    if salida:
        print(json.dumps(salida, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
