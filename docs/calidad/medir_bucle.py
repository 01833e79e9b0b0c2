"""Loop figures of issue 22 from ``fichas evaluar --modo bucle`` results (whole files or their
``.parcial.jsonl``), paired on the events every file has, with today's code checks.

For each file: first fichas with a code-visible defect (``criterios.comprobar`` of the current
criteria, whatever version the run had) and by criterion; first fichas with a foreign
attribute key (a key that is not a house key of ``criterios/datos/vocabulario_v1.json``);
origins in English, Portuguese or French whose last ficha is not in Spanish (the
identifier's reading of the description, the stop-word count of ``copias_e_idioma.py``, and
the whole of today's C08 on title and description); titles and descriptions copied verbatim;
code approval and evaluator approval per attempt (Wilson 95 %); tokens per ficha.

Usage: ``python docs/calidad/medir_bucle.py A.json B.parcial.jsonl C1.json+C2.json ...``
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from criterios import comprobar, fallos
from criterios.fidelidad import probabilidad_espanol
from criterios.vocabulario import datos_vocabulario
from herramientas.evaluar import medidas as metricas
from herramientas.evaluar.casos import cargar_casos, origen_de_caso

sys.path.insert(0, str(Path(__file__).parent))
from copias_e_idioma import idioma

CASOS = {
    c["id"]: c for c in cargar_casos(Path(__file__).parents[2] / "ejemplos/evaluacion/casos.jsonl")
}
CLAVES_CASA = frozenset(datos_vocabulario()["claves"])


def registros(path: str) -> dict[str, dict[str, Any]]:
    """Records by event id, from a result file or its partial JSON lines; ``A.json+B.json``
    joins the records of two runs over different events (one measurement in two parts)."""
    if "+" in path:
        unidos: dict[str, dict[str, Any]] = {}
        for parte in path.split("+"):
            unidos |= registros(parte)
        return unidos
    texto = Path(path).read_text(encoding="utf-8")
    if path.endswith(".jsonl"):
        filas = [json.loads(linea)["registro"] for linea in texto.splitlines() if linea.strip()]
    else:
        filas = json.loads(texto)["registros"]
    return {r["id"]: r for r in filas}


def wilson(k: int, n: int) -> str:
    """k/n with its 95 % Wilson interval (``herramientas.evaluar.medidas.wilson``)."""
    intervalo = metricas.wilson(k, n)
    if intervalo is None:
        return "–"
    return f"{k}/{n} = {k / n:.2f} [{intervalo[0]:.2f}, {intervalo[1]:.2f}]"


def resumen(nombre: str, regs: dict[str, dict[str, Any]], ids: list[str]) -> None:
    """Print the figures of one run over ``ids``."""
    defecto, por_criterio, ajenas, sin_traducir, sin_traducir_c08 = 0, Counter(), 0, 0, 0
    c08_entero = c08_titulo = c08_descripcion = 0
    extranjeros = titulo = descripcion = 0
    codigo_ok: Counter[int] = Counter()
    juez_ok: Counter[int] = Counter()
    llegaron: Counter[int] = Counter()
    tokens = 0
    for i in ids:
        r, caso = regs[i], CASOS[i]
        origen = origen_de_caso(caso)
        proveedor = caso["evento"]["ficha_proveedor"]
        historial = r["salida"].get("historial") or []
        fichas = [h["ficha"] for h in historial if h.get("ficha")]
        if fichas:
            criterios = {f["criterio"] for f in fallos(comprobar(fichas[0], origen))}
            defecto += bool(criterios)
            por_criterio.update(criterios)
            ajenas += bool(set(fichas[0].get("atributos", {})) - CLAVES_CASA)
        for h in historial:
            n = h["intento"]
            llegaron[n] += 1
            codigo_ok[n] += bool(h.get("ficha")) and not fallos(comprobar(h["ficha"], origen))
            juez_ok[n] += bool(h["veredicto"].get("aprobada"))
        ultima = r.get("ficha") or {}
        titulo += ultima.get("titulo", "").strip() == proveedor["titulo"].strip()
        descripcion += ultima.get("descripcion", "").strip() == proveedor["descripcion"].strip()
        if proveedor.get("idioma") not in (None, "es"):
            extranjeros += 1
            sin_traducir += idioma(ultima.get("descripcion", "")) != "es"
            prob = probabilidad_espanol(ultima.get("descripcion", ""))
            sin_traducir_c08 += prob is not None and prob < 0.5
            c08_entero += not comprobar(ultima, origen)["C08"]["ok"]
            solo_titulo = {"titulo": ultima.get("titulo", ""), "descripcion": ""}
            solo_descripcion = {"titulo": "", "descripcion": ultima.get("descripcion", "")}
            c08_titulo += not comprobar(solo_titulo, origen)["C08"]["ok"]
            c08_descripcion += not comprobar(solo_descripcion, origen)["C08"]["ok"]
        tokens += r["tokens_entrada"] + r["tokens_salida"]
    n = len(ids)
    print(f"## {nombre} ({n} eventos)")
    print(
        f"- primera ficha con defecto que ve el código: {wilson(defecto, n)}; "
        f"por criterio {dict(sorted(por_criterio.items()))}"
    )
    print(f"- primera ficha con alguna clave de atributo ajena a la casa: {ajenas}")
    print(
        f"- orígenes en otro idioma: {extranjeros}; última descripción no española: "
        f"{sin_traducir} (palabras vacías), {sin_traducir_c08} (identificador < 0,5); "
        f"última ficha que falla C08 entero (título o descripción): {c08_entero} "
        f"(título {c08_titulo}, descripción {c08_descripcion})"
    )
    print(f"- título copiado tal cual: {titulo}; descripción copiada tal cual: {descripcion}")
    for intento in sorted(llegaron):
        print(
            f"- intento {intento}: pasa el código {wilson(codigo_ok[intento], llegaron[intento])}"
            f"; aprobada por el juez {wilson(juez_ok[intento], llegaron[intento])}"
        )
    print(f"- tokens por ficha (evento): {tokens / n:.0f}" if n else "- sin eventos")


def main(paths: list[str]) -> None:
    todos = {p: registros(p) for p in paths}
    comunes = [i for i in CASOS if all(i in regs for regs in todos.values())]
    for path, regs in todos.items():
        resumen(path, regs, comunes)


if __name__ == "__main__":
    main(sys.argv[1:])
