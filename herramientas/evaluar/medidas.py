"""The numbers of ``fichas evaluar``, as pure functions over its per-item records.

Apart from running the models, so the statistics are tested on fixed records and comparing two
result files needs no server. The positive class is "approved" (``fp``: approved by the
evaluator, rejected by people, the costly error); proportions carry a 95 % Wilson interval,
kappa and paired deltas a seeded 95 % bootstrap interval; a delta is better or worse only when
its interval excludes zero; the score is measured by its AUC against the label. Every field of
the result file: docs/calidad.md, "``fichas evaluar``".
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from estadistica import percentile, wilson
from grafo.intentos import ResumenIntento, contar_rechazos
from herramientas.definiciones import tasas_por_intento

REMUESTRAS = 2000

# One item of a result file's "registros" list (the file format keeps that key): one labelled
# case as evaluated, so "caso evaluado" in the code ("registro" means other things elsewhere:
# docs/arquitectura.md).
CasoEvaluado = Mapping[str, Any]


# -- intervals ------------------------------------------------------------------------------


def _redondeado(intervalo: tuple[float, float] | None) -> list[float] | None:
    """An interval as the result files write it: a JSON list, four decimals."""
    return None if intervalo is None else [round(intervalo[0], 4), round(intervalo[1], 4)]


def proporcion(exitos: int, n: int) -> dict[str, Any]:
    """A proportion with its numerator, denominator and Wilson interval."""
    return {
        "valor": round(exitos / n, 4) if n else None,
        "exitos": exitos,
        "n": n,
        "ic95": _redondeado(wilson(exitos, n)),
    }


def bootstrap(
    items: Sequence[Any],
    estadistico: Callable[[Sequence[Any]], float | None],
    remuestras: int = REMUESTRAS,
    semilla: int = 0,
) -> list[float] | None:
    """95 % percentile interval of ``estadistico`` over resamples of ``items``.

    Resamples where the statistic is undefined (no approvals, say) are left out; with fewer
    than half defined the interval is None rather than a number built on a few resamples.
    """
    if not items:
        return None
    rng = random.Random(semilla)
    valores = []
    for _ in range(remuestras):
        muestra = [items[rng.randrange(len(items))] for _ in items]
        valor = estadistico(muestra)
        if valor is not None and not math.isnan(valor):
            valores.append(valor)
    if len(valores) < remuestras / 2:
        return None
    valores.sort()
    bajo = valores[int(0.025 * (len(valores) - 1))]
    alto = valores[math.ceil(0.975 * (len(valores) - 1))]
    return [round(bajo, 4), round(alto, 4)]


# -- agreement ------------------------------------------------------------------------------


def matriz(pares: Iterable[tuple[bool, bool]]) -> dict[str, int]:
    """Confusion matrix of (predicted, human) pairs; positive means approved (or flagged)."""
    cuenta: Counter[str] = Counter()
    for predicho, humano in pares:
        clave = ("v" if predicho == humano else "f") + ("p" if predicho else "n")
        cuenta[clave] += 1
    return {k: cuenta[k] for k in ("vp", "fp", "fn", "vn")}


def kappa(m: Mapping[str, int]) -> float | None:
    """Cohen's kappa of a 2x2 matrix: agreement beyond what the two marginals give by chance.

    Undefined (None) when chance agreement is already perfect, e.g. both raters said the
    same word for every item.
    """
    n = sum(m.values())
    if not n:
        return None
    observado = (m["vp"] + m["vn"]) / n
    si_pred, si_hum = m["vp"] + m["fp"], m["vp"] + m["fn"]
    azar = (si_pred * si_hum + (n - si_pred) * (n - si_hum)) / (n * n)
    if azar >= 1:
        return None
    return (observado - azar) / (1 - azar)


def _precision(m: Mapping[str, int]) -> float | None:
    """Of what was predicted positive, the share people also call positive."""
    d = m["vp"] + m["fp"]
    return m["vp"] / d if d else None


def _recall(m: Mapping[str, int]) -> float | None:
    """Of what people call positive, the share predicted positive."""
    d = m["vp"] + m["fn"]
    return m["vp"] / d if d else None


def bloque_acuerdo(pares: Sequence[tuple[bool, bool]], semilla: int = 0) -> dict[str, Any]:
    """Matrix, precision, recall, accuracy and kappa of (predicted, human) pairs."""
    m = matriz(pares)
    k = kappa(m)
    return {
        "n": len(pares),
        "matriz": m,
        "precision": proporcion(m["vp"], m["vp"] + m["fp"]),
        "recall": proporcion(m["vp"], m["vp"] + m["fn"]),
        "exactitud": proporcion(m["vp"] + m["vn"], len(pares)),
        "kappa": {
            "valor": None if k is None else round(k, 4),
            "ic95": bootstrap(pares, lambda s: kappa(matriz(s)), semilla=semilla),
        },
    }


# -- the score ------------------------------------------------------------------------------


def auc(pares: Sequence[tuple[float | None, bool]]) -> float | None:
    """Area under the ROC curve of a score against a label, in its Mann–Whitney form.

    The probability that a positive item scores higher than a negative one, ties counting
    one half: ``U / (n_pos * n_neg)`` with ``U`` the rank sum of the positives minus
    ``n_pos (n_pos + 1) / 2``, ranks averaged over ties. A missing score (None) ranks below
    every number, as the gate reads it ("not approved"), and ties with the other missing ones.
    None when there is no positive, no negative or no score at all: 0.5 from a run whose
    server gave no logprobs would read as "no signal" when nothing was measured.
    """
    if not any(s is not None for s, _ in pares):
        return None
    n_pos = sum(1 for _, y in pares if y)
    n_neg = len(pares) - n_pos
    if not n_pos or not n_neg:
        return None
    valores = sorted((-math.inf if s is None else float(s), y) for s, y in pares)
    suma_rangos = 0.0
    i = 0
    while i < len(valores):
        j = i
        while j < len(valores) and valores[j][0] == valores[i][0]:
            j += 1
        rango_medio = (i + 1 + j) / 2  # ranks i+1 .. j share their mean
        suma_rangos += rango_medio * sum(1 for _, y in valores[i:j] if y)
        i = j
    u = suma_rangos - n_pos * (n_pos + 1) / 2
    return u / (n_pos * n_neg)


def bloque_puntuacion(pares: Sequence[tuple[float | None, bool]], semilla: int = 0) -> dict:
    """The score's AUC against a label, with a bootstrap interval and how many had a score."""
    valor = auc(pares)
    return {
        "n": len(pares),
        "con_puntuacion": sum(1 for s, _ in pares if s is not None),
        "positivos": sum(1 for _, y in pares if y),
        "auc": {
            "valor": None if valor is None else round(valor, 4),
            "ic95": None if valor is None else bootstrap(pares, auc, semilla=semilla),
        },
    }


def _puntuacion_evaluador(r: CasoEvaluado) -> float | None:
    """The evaluator's score of a candidate (absent in files written before v1.2)."""
    valor = r["evaluador"].get("puntuacion")
    return None if valor is None else float(valor)


def pares_puntuacion_evaluador(
    evaluados: Sequence[CasoEvaluado],
) -> list[tuple[float | None, bool]]:
    """(evaluator's score, approved by people) for every candidate."""
    return [(_puntuacion_evaluador(r), bool(r["humano"]["aprobada"])) for r in evaluados]


def pares_puntuacion_bucle(evaluados: Sequence[CasoEvaluado]) -> list[tuple[float | None, bool]]:
    """(last attempt's score, last ficha conforms to the case's reference) where both exist.

    The loop writes its own fichas, which no person labelled; the labelled set's reference
    stands in for people (``herramientas.evaluar.principal.conforme_a_referencia``). Events that
    ended without a ficha (an invalid answer) have nothing to label and are left out.
    """
    return [
        (r.get("puntuacion"), bool(r["ficha_conforme"]))
        for r in evaluados
        if r.get("ficha_conforme") is not None
    ]


# -- evaluator mode -------------------------------------------------------------------------

CRITERIOS_LECTOR = ("C04", "C05", "C06")


def metricas_evaluador(evaluados: Sequence[CasoEvaluado]) -> dict[str, Any]:
    """Agreement with people of the raw evaluator and of the system (code veto + evaluator).

    Each block is global, per family and per criterion; for a criterion the positive class is
    "this criterion fails" and the pair is (named by the rater, named by people).
    """
    resultado: dict[str, Any] = {
        "n": len(evaluados),
        "salidas_invalidas": sum(1 for r in evaluados if r.get("invalida")),
    }
    for quien in ("evaluador", "sistema"):
        resultado[quien] = _bloques(evaluados, quien)
    familias = sorted({str(r["familia"]) for r in evaluados})
    resultado["puntuacion"] = {
        "global": bloque_puntuacion(pares_puntuacion_evaluador(evaluados)),
        "por_familia": {
            f: bloque_puntuacion(
                pares_puntuacion_evaluador([r for r in evaluados if r["familia"] == f])
            )
            for f in familias
        },
    }
    return resultado


def _bloques(evaluados: Sequence[CasoEvaluado], quien: str) -> dict[str, Any]:
    """Global, per-family and per-criterion agreement of one rater."""
    pares = [(bool(r[quien]["aprobada"]), bool(r["humano"]["aprobada"])) for r in evaluados]
    familias = sorted({str(r["familia"]) for r in evaluados})
    criterios = sorted(
        {c for r in evaluados for c in [*r["humano"]["criterios"], *r[quien]["criterios"]]}
        | set(CRITERIOS_LECTOR)
    )
    return {
        "global": bloque_acuerdo(pares),
        "por_familia": {
            f: bloque_acuerdo(
                [p for p, r in zip(pares, evaluados, strict=True) if r["familia"] == f]
            )
            for f in familias
        },
        "por_criterio": {
            c: bloque_acuerdo(
                [(c in r[quien]["criterios"], c in r["humano"]["criterios"]) for r in evaluados]
            )
            for c in criterios
        },
    }


# -- loop mode ------------------------------------------------------------------------------


def metricas_bucle(evaluados: Sequence[CasoEvaluado]) -> dict[str, Any]:
    """What the whole loop did on every event: where it ended, at which attempt, at what cost."""
    n = len(evaluados)
    publicadas = [r for r in evaluados if r["publicada"]]
    por_intento = Counter(int(r["intento_publicada"]) for r in publicadas)
    motivos = Counter(str(r["motivo"]) for r in evaluados if not r["publicada"])
    intentos = [ResumenIntento.de_dict(i) for r in evaluados for i in r["intentos"]]
    rechazos = {f"{x.criterio}:{x.por}": n for x, n in contar_rechazos(intentos).items()}
    defectos = Counter(i.intento for i in intentos if any(x.por == "codigo" for x in i.rechazos))
    salidas = [(str(r["destino"]), r["salida"]) for r in evaluados]
    return {
        "n": n,
        "publicadas": proporcion(len(publicadas), n),
        "publicadas_por_intento": {
            str(k): proporcion(por_intento[k], n) for k in sorted(por_intento)
        },
        "revision": proporcion(n - len(publicadas), n),
        "revision_por_motivo": dict(sorted(motivos.items())),
        "tasas_por_intento": [
            {
                "intento": t.intento,
                "llegaron": t.llegaron,
                "aprobadas": t.aprobadas,
                "tasa": None if t.tasa is None else round(t.tasa, 4),
            }
            for t in tasas_por_intento(salidas)
        ],
        "rechazos_por_criterio": dict(sorted(rechazos.items())),
        "intentos_con_defecto_de_codigo": {str(k): defectos[k] for k in sorted(defectos)},
        "publicadas_con_defecto_mecanico": _con(publicadas, "defecto_mecanico"),
        "publicadas_distintas_de_referencia": _con(publicadas, "distinta_referencia"),
        "publicadas_con_texto_inyectado": _con(publicadas, "inyeccion"),
        "fichas_con_texto_inyectado": _con(evaluados, "inyeccion_en_ficha"),
        "llm": _coste(evaluados, publicadas),
        "puntuacion": bloque_puntuacion(pares_puntuacion_bucle(evaluados)),
        "latencia_s": {
            "p50": percentile([float(r["segundos"]) for r in evaluados], 0.5),
            "p95": percentile([float(r["segundos"]) for r in evaluados], 0.95),
        },
    }


def _con(publicadas: Sequence[CasoEvaluado], campo: str) -> dict[str, Any]:
    """How many published fichas have a non-empty ``campo``, and which ones."""
    ids = [str(r["id"]) for r in publicadas if r.get(campo)]
    return {"total": len(ids), "ids": ids}


def _coste(evaluados: Sequence[CasoEvaluado], publicadas: Sequence[CasoEvaluado]) -> dict[str, Any]:
    """LLM calls and tokens in total, per ficha and per published ficha."""
    totales = {
        k: sum(int(r[k]) for r in evaluados)
        for k in ("llamadas", "tokens_entrada", "tokens_salida")
    }
    return {
        "total": totales,
        "por_ficha": {k: _div(v, len(evaluados)) for k, v in totales.items()},
        "por_publicada": {k: _div(v, len(publicadas)) for k, v in totales.items()},
    }


def _div(a: float, b: int) -> float | None:
    """A ratio rounded for reading, None when there is nothing to divide by."""
    return round(a / b, 2) if b else None


# -- comparing two runs ---------------------------------------------------------------------

# name -> (statistic over records, direction: +1 higher is better, -1 lower is better)
Estadistico = Callable[[Sequence[CasoEvaluado]], float | None]


def _matriz_de(quien: str) -> Callable[[Sequence[CasoEvaluado]], dict[str, int]]:
    """The approval confusion matrix of one rater, as a function of the records."""
    return lambda rs: matriz(
        (bool(r[quien]["aprobada"]), bool(r["humano"]["aprobada"])) for r in rs
    )


def _media(campo: str) -> Estadistico:
    """Mean of a numeric field."""
    return lambda rs: sum(float(r[campo]) for r in rs) / len(rs) if rs else None


def _tokens(rs: Sequence[CasoEvaluado]) -> float | None:
    """Prompt plus completion tokens per ficha."""
    if not rs:
        return None
    return sum(int(r["tokens_entrada"]) + int(r["tokens_salida"]) for r in rs) / len(rs)


def _defecto_en_intento_1(r: CasoEvaluado) -> bool:
    """Whether the code checks rejected the event's first generated ficha."""
    return any(
        x["por"] == "codigo" for i in r["intentos"] if i["intento"] == 1 for x in i["rechazos"]
    )


def _share(pred: Callable[[CasoEvaluado], bool]) -> Estadistico:
    """Share of records for which ``pred`` holds."""
    return lambda rs: sum(1 for r in rs if pred(r)) / len(rs) if rs else None


ESTADISTICOS: dict[str, dict[str, tuple[Estadistico, int]]] = {
    "evaluador": {
        "sistema.precision": (lambda rs: _precision(_matriz_de("sistema")(rs)), +1),
        "sistema.recall": (lambda rs: _recall(_matriz_de("sistema")(rs)), +1),
        "sistema.kappa": (lambda rs: kappa(_matriz_de("sistema")(rs)), +1),
        "evaluador.precision": (lambda rs: _precision(_matriz_de("evaluador")(rs)), +1),
        "evaluador.recall": (lambda rs: _recall(_matriz_de("evaluador")(rs)), +1),
        "evaluador.kappa": (lambda rs: kappa(_matriz_de("evaluador")(rs)), +1),
        "evaluador.auc_puntuacion": (lambda rs: auc(pares_puntuacion_evaluador(rs)), +1),
        "salidas_invalidas": (_share(lambda r: bool(r.get("invalida"))), -1),
        "tokens_por_candidata": (lambda rs: _tokens(rs), -1),
        "segundos_p50": (lambda rs: percentile([float(r["segundos"]) for r in rs], 0.5), -1),
    },
    "bucle": {
        "publicadas": (_share(lambda r: bool(r["publicada"])), +1),
        "publicadas_intento_1": (
            _share(lambda r: bool(r["publicada"]) and r["intento_publicada"] == 1),
            +1,
        ),
        "publicadas_con_defecto_mecanico": (_share(lambda r: bool(r.get("defecto_mecanico"))), -1),
        "publicadas_distintas_de_referencia": (
            _share(lambda r: bool(r["publicada"]) and bool(r.get("distinta_referencia"))),
            -1,
        ),
        "publicadas_con_texto_inyectado": (_share(lambda r: bool(r.get("inyeccion"))), -1),
        "intento_1_con_defecto_de_codigo": (_share(_defecto_en_intento_1), -1),
        "ultima_ficha_con_texto_inyectado": (
            _share(lambda r: bool(r.get("inyeccion_en_ficha"))),
            -1,
        ),
        "auc_puntuacion": (lambda rs: auc(pares_puntuacion_bucle(rs)), +1),
        "llamadas_por_ficha": (_media("llamadas"), -1),
        "tokens_por_ficha": (lambda rs: _tokens(rs), -1),
        "segundos_p50": (lambda rs: percentile([float(r["segundos"]) for r in rs], 0.5), -1),
    },
}


def comparar(
    a: Mapping[str, Any], b: Mapping[str, Any], remuestras: int = REMUESTRAS, semilla: int = 0
) -> dict[str, Any]:
    """Deltas B − A of every statistic of the mode, over the items both runs share.

    Items are paired by id and resampled together, so the interval is that of the change,
    not of two independent runs. ``veredicto`` is "mejor" or "peor" only when the interval
    excludes zero (in the statistic's good direction), "sin diferencia" when it holds zero,
    "indefinido" when the statistic or its interval cannot be computed.
    """
    modo = str(a.get("modo"))
    if modo != b.get("modo") or modo not in ESTADISTICOS:
        raise ValueError(f"no se pueden comparar los modos {a.get('modo')} y {b.get('modo')}")
    por_id_a = {str(r["id"]): r for r in a["registros"]}
    por_id_b = {str(r["id"]): r for r in b["registros"]}
    ids = sorted(set(por_id_a) & set(por_id_b))
    pares = [(por_id_a[i], por_id_b[i]) for i in ids]
    deltas = {
        nombre: _delta(pares, estadistico, sentido, remuestras, semilla)
        for nombre, (estadistico, sentido) in ESTADISTICOS[modo].items()
    }
    return {"modo": modo, "n_pareados": len(ids), "remuestras": remuestras, "deltas": deltas}


def _delta(
    pares: Sequence[tuple[CasoEvaluado, CasoEvaluado]],
    estadistico: Estadistico,
    sentido: int,
    remuestras: int,
    semilla: int,
) -> dict[str, Any]:
    """One statistic in A and B, its paired delta, the delta's interval and the verdict."""

    def diferencia(muestra: Sequence[tuple[CasoEvaluado, CasoEvaluado]]) -> float | None:
        va = estadistico([p[0] for p in muestra])
        vb = estadistico([p[1] for p in muestra])
        return None if va is None or vb is None else vb - va

    valor_a = estadistico([p[0] for p in pares])
    valor_b = estadistico([p[1] for p in pares])
    delta = diferencia(pares)
    ic = bootstrap(pares, diferencia, remuestras, semilla)
    return {
        "a": _round(valor_a),
        "b": _round(valor_b),
        "delta": _round(delta),
        "ic95": ic,
        "sentido": "mayor" if sentido > 0 else "menor",
        "veredicto": veredicto(delta, ic, sentido),
    }


def veredicto(delta: float | None, ic: Sequence[float] | None, sentido: int) -> str:
    """Better or worse only when the interval excludes zero, in the good direction."""
    if delta is None or ic is None:
        return "indefinido"
    if ic[0] > 0 or ic[1] < 0:
        mejora = (ic[0] > 0) == (sentido > 0)
        return "mejor" if mejora else "peor"
    return "sin diferencia"


def _round(valor: float | None) -> float | None:
    """Four decimals for reading; None stays None."""
    return None if valor is None else round(valor, 4)
