"""``python -m bench.capas --prueba``: every table of the layer-by-layer CPU, and its check.

``--prueba`` runs each row once after one warm-up call (a smoke size, not a measurement), so
this keeps every layer the tool stacks up callable as the shipped code changes: the agents'
interface, the evaluator's chat model, the savers. Its check: the evaluator in one call and
in two give the same verdict and score (it exits 1 otherwise). CPU figures are only required
to be there and positive; docs/rendimiento.md has the measured ones.
"""

from __future__ import annotations

import json

import pytest

from tests.bench.conftest import ejecutar, salida

# table title (start) -> its rows
TABLAS = {
    "parent graph of a 3-attempt ficha": 3,
    "layer (one generator call at a time": 8,
    "evaluator call (approval and rejection in turn": 6,
    "evaluator design": 4,
    "code checks, every ficha of the labelled set": 4,
}


def _tablas(texto: str) -> dict[str, list[tuple[str, float]]]:
    """Each Markdown table of the output: its title and its (label, figure) rows."""
    tablas: dict[str, list[tuple[str, float]]] = {}
    filas: list[tuple[str, float]] = []
    for linea in texto.splitlines():
        if not linea.startswith("| ") or linea.startswith("| ---"):
            continue
        etiqueta, cifra = (c.strip() for c in linea.strip("|").split("|"))
        if cifra.startswith("CPU ms"):
            filas = tablas.setdefault(etiqueta, [])
        else:
            filas.append((etiqueta, float(cifra)))
    return tablas


def _json_tras(texto: str, prefijo: str) -> dict:
    """The JSON printed after ``prefijo`` on its line."""
    (linea,) = [x for x in texto.splitlines() if x.startswith(prefijo)]
    return json.loads(linea.removeprefix(prefijo))


@pytest.mark.lento
def test_capas_rellena_cada_tabla_y_los_dos_evaluadores_coinciden() -> None:
    texto = salida(ejecutar("bench.capas", "--prueba", "--n", "2"))
    tablas = _tablas(texto)
    assert len(tablas) == len(TABLAS)
    for inicio, cuantas in TABLAS.items():
        (titulo,) = [t for t in tablas if t.startswith(inicio)]
        assert len(tablas[titulo]) == cuantas, tablas[titulo]
        assert all(cifra > 0 for _, cifra in tablas[titulo]), tablas[titulo]
    dos = _json_tras(texto, "two calls against one: ")
    assert dos["mismo_resultado"] is True
    aprobada, rechazada = dos["puntuacion_approval"], dos["puntuacion_rejection"]
    assert aprobada[0] == aprobada[1] > 0.5 > rechazada[0] == rechazada[1]
    tokens = _json_tras(texto, "evaluator answers (fake LLM tokenization): ")
    for respuesta in (tokens["aprobacion"], tokens["rechazo"]):
        assert 0 < respuesta["token_del_veredicto"] < respuesta["tokens"]
        cortados, enteros = respuesta["bytes_logprobs_cortados"], respuesta["bytes_logprobs"]
        assert 0 < cortados < enteros < respuesta["bytes_respuesta"]
    for diseno in ("una_llamada", "dos_llamadas"):
        assert all(v > 0 for v in tokens[diseno].values()), tokens[diseno]
