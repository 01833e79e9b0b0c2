"""The clause check of the model-free evaluator (``criterios.clausulas``, issue 48), measured
without overfitting: the labelled set split in two halves by event, the thresholds chosen on
one, every figure reported on each half, on the whole and per origin language.

    python docs/calidad/medir_clausulas.py docs/calidad/conjunto416-lector.json [otro.json]
    python docs/calidad/medir_clausulas.py --elegir

The first reads ``fichas evaluar --evaluador lector`` results (the real command's records)
and prints, for the candidates the code does not veto: good ones at s = 1, the system's
precision with its Wilson interval, the AUC with its bootstrap interval. The second reads
every clause of every candidate once with the product's code (``lecturas``, ``mejor_cita``,
``puntuacion_lectura``) and walks the grid of thresholds on the fit half, per origin group
(Spanish, foreign): of the pairs that keep at least ``CONSERVAR`` of the good candidates
today's judge (no clause check) keeps at s = 1, the most precise (then the one that keeps
more, then the most lenient). It prints the choice and both halves under it, and the CPU
seconds the clause readings cost. The halves: the events of each (family, origin language)
group shuffled with ``SEMILLA`` and dealt alternately.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import random
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from criterios import comprobar, fallos, mapear_origen  # noqa: E402
from criterios.clausulas import Lectura, lecturas  # noqa: E402
from criterios.fidelidad import leer_origen  # noqa: E402
from criterios.respaldo import (  # noqa: E402
    afirmaciones,
    atributos_sin_respaldo,
    descripcion_sin_nada_propio,
    fiel,
    mejor_cita,
)
from estadistica import wilson  # noqa: E402
from grafo.citas import Juicio, puntuacion_lectura  # noqa: E402
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos, origen_de_caso  # noqa: E402
from herramientas.evaluar.medidas import bloque_puntuacion  # noqa: E402

SEMILLA = 48
CONSERVAR = 0.9
REJILLA = [None, *(round(0.80 + i / 100, 2) for i in range(13))]  # None: not asked


def mitad_de_ajuste(casos: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """The events of the fit half: each (family, origin language) group's events shuffled
    with ``SEMILLA`` and dealt alternately, the deal carried from one group to the next."""
    grupos: dict[tuple[str, str], list[str]] = {}
    for caso in casos:
        evento = caso["evento"]
        clave = (evento["familia"], idioma(caso))
        grupos.setdefault(clave, []).append(caso["id"])
    azar = random.Random(SEMILLA)
    ajuste, turno = set(), 0
    for clave in sorted(grupos):
        ids = sorted(grupos[clave])
        azar.shuffle(ids)
        ajuste |= {c for i, c in enumerate(ids) if (i + turno) % 2 == 0}
        turno += len(ids)
    return frozenset(ajuste)


def idioma(caso: Mapping[str, Any]) -> str:
    """The origin's declared language (the labelled set declares every one)."""
    return str(caso["evento"]["ficha_proveedor"].get("idioma") or "es")


def cifras(filas: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Good ones at s = 1, the system's precision [Wilson] and the AUC [bootstrap] of rows
    with ``aprobada`` (people), ``vetada`` (code) and ``s`` (the evaluator's score)."""
    sin_veto = [f for f in filas if not f["vetada"]]
    buenas = [f for f in sin_veto if f["aprobada"]]
    arriba = [f for f in sin_veto if f["s"] is not None and f["s"] >= 1.0]
    acertadas = sum(1 for f in arriba if f["aprobada"])
    arriba_buenas = sum(1 for f in buenas if f["s"] is not None and f["s"] >= 1.0)
    intervalo = wilson(acertadas, len(arriba)) if arriba else None
    auc = bloque_puntuacion([(f["s"], f["aprobada"]) for f in sin_veto])["auc"]
    return {
        "n_sin_veto": len(sin_veto),
        "buenas": len(buenas),
        "buenas_en_s1": arriba_buenas,
        "aprobadas": len(arriba),
        "precision": round(acertadas / len(arriba), 3) if arriba else None,
        "wilson": [round(x, 3) for x in intervalo] if intervalo else None,
        "auc": auc["valor"],
        "auc_ic95": auc["ic95"],
    }


def por_subconjunto(filas: Sequence[Mapping[str, Any]], ajuste: frozenset[str]) -> dict:
    """``cifras`` on each half, on all, and per origin language."""
    subconjuntos: dict[str, Callable[[Mapping[str, Any]], bool]] = {
        "ajuste": lambda f: f["caso"] in ajuste,
        "prueba": lambda f: f["caso"] not in ajuste,
        "todas": lambda f: True,
        "origen es": lambda f: f["idioma"] == "es",
        "origen en/pt/fr": lambda f: f["idioma"] != "es",
    }
    return {n: cifras([f for f in filas if incluye(f)]) for n, incluye in subconjuntos.items()}


def de_resultado(path: Path, casos: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Rows of a ``fichas evaluar`` result: its score and veto, people's verdict."""
    return [
        {
            "caso": r["caso"],
            "idioma": idioma(casos[r["caso"]]),
            "aprobada": bool(r["humano"]["aprobada"]),
            "vetada": bool(r["codigo"]),
            "s": r["evaluador"].get("puntuacion"),
        }
        for r in json.loads(path.read_text(encoding="utf-8"))["registros"]
    ]


# -- choosing the thresholds ----------------------------------------------------------------


@dataclasses.dataclass
class Candidata:
    """One candidate the code does not veto, read once: each claim's quote and reading, and
    every clause with words the origin lacks (read whatever the threshold)."""

    caso: str
    idioma: str
    aprobada: bool
    juicios: list[Juicio]
    clausulas: list[list[Lectura]]
    atributos: list[str]
    vacia: bool
    espanol: bool


def leidas(casos: Iterable[Mapping[str, Any]]) -> list[Candidata]:
    """Every candidate the code does not veto, its claims read as ``leer`` reads them."""
    salida = []
    for caso in casos:
        origen = mapear_origen(origen_de_caso(caso)).origen
        espanol = leer_origen(origen).idioma is None
        for c in caso["candidatas"]:
            ficha = c["ficha"]
            if fallos(comprobar(ficha, origen_de_caso(caso))):
                continue
            juicios, clausulas = [], []
            for afirmacion in afirmaciones(ficha):
                cita, apoyada, parecido = mejor_cita(afirmacion, origen)
                lectura = parecido if fiel(afirmacion, origen) else 0.0
                juicios.append(Juicio(afirmacion, cita, False, 0.0, None, apoyada, lectura))
                clausulas.append(lecturas(afirmacion, origen, (0.0, 0.0)))
            salida.append(
                Candidata(
                    caso["id"],
                    idioma(caso),
                    bool(c["aprobada"]),
                    juicios,
                    clausulas,
                    atributos_sin_respaldo(ficha, origen),
                    descripcion_sin_nada_propio(ficha),
                    espanol,
                )
            )
    return salida


def puntuar(c: Candidata, umbrales: tuple[float | None, float | None]) -> float | None:
    """The candidate's ``lector`` score with these clause thresholds (one word, more)."""
    juicios = []
    for juicio, clausulas in zip(c.juicios, c.clausulas, strict=True):
        debajo = [
            dataclasses.replace(x, umbral=u)
            for x in clausulas
            if (u := umbrales[0] if x.ajenas == 1 else umbrales[1]) is not None and x.parecido < u
        ]
        peor = min(debajo, key=Lectura.grado, default=None)
        juicios.append(
            dataclasses.replace(juicio, respaldada=juicio.respaldada and not peor, anadido=peor)
        )
    return puntuacion_lectura(juicios, c.atributos, c.vacia)


def elegir(candidatas: Sequence[Candidata], ajuste: frozenset[str], espanol: bool) -> tuple:
    """The thresholds for one origin group, chosen on the fit half (module docstring)."""
    grupo = [c for c in candidatas if c.espanol == espanol and c.caso in ajuste]
    hoy = sum(1 for c in grupo if c.aprobada and puntuar(c, (None, None)) == 1.0)
    mejor: tuple = ()
    for una, varias in itertools.product(REJILLA, REJILLA[1:]):
        arriba = [c for c in grupo if puntuar(c, (una, varias)) == 1.0]
        buenas = sum(1 for c in arriba if c.aprobada)
        if buenas < CONSERVAR * hoy:
            continue
        clave = (buenas / len(arriba), buenas, -(una or 0.0) - (varias or 0.0))
        if not mejor or clave > mejor[0]:
            mejor = (clave, una, varias)
    return mejor[1], mejor[2]


def main(argv: list[str]) -> int:
    """Print the figures of result files, or choose the thresholds (module docstring)."""
    casos = cargar_casos(CASOS_POR_DEFECTO)
    ajuste = mitad_de_ajuste(casos)
    if "--elegir" not in argv:
        por_id = {c["id"]: c for c in casos}
        salida = {a: por_subconjunto(de_resultado(Path(a), por_id), ajuste) for a in argv}
        print(json.dumps(salida, ensure_ascii=False, indent=2))
        return 0
    inicio = time.process_time()
    candidatas = leidas(casos)
    cpu = time.process_time() - inicio
    elegidos = {espanol: elegir(candidatas, ajuste, espanol) for espanol in (True, False)}

    def filas(umbrales: Mapping[bool, tuple]) -> list[dict[str, Any]]:
        """Rows of every candidate under per-group thresholds."""
        return [
            {
                "caso": c.caso,
                "idioma": c.idioma,
                "aprobada": c.aprobada,
                "vetada": False,
                "s": puntuar(c, umbrales[c.espanol]),
            }
            for c in candidatas
        ]

    salida = {
        "elegidos": {"es": elegidos[True], "otros": elegidos[False]},
        "eventos_de_ajuste": len(ajuste),
        "cpu_lecturas_s": round(cpu, 1),
        "sin_clausulas": por_subconjunto(filas({True: (None, None), False: (None, None)}), ajuste),
        "con_clausulas": por_subconjunto(filas(elegidos), ajuste),
    }
    print(json.dumps(salida, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
