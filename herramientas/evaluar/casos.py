"""The labelled set of ``fichas evaluar``: reading it, the origin the agents see of a case,
and how a ficha the loop wrote is held against the case's reference (the set's stand-in for a
person)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from criterios import (
    atributos_obligatorios,
    comprobar,
    fallos,
)
from criterios.vocabulario import normalizar

REPO = Path(__file__).resolve().parents[2]
CASOS_POR_DEFECTO = REPO / "ejemplos" / "evaluacion" / "casos.jsonl"


# -- the labelled set -----------------------------------------------------------------------


def cargar_casos(path: Path, solo: Sequence[str] = (), limite: int | None = None) -> list[dict]:
    """The cases of a casos.jsonl, optionally only some ids or the first ``limite``."""
    casos = [
        json.loads(linea)
        for linea in path.read_text(encoding="utf-8").splitlines()
        if linea.strip()
    ]
    if solo:
        casos = [c for c in casos if c["id"] in set(solo)]
    return casos[:limite] if limite is not None else casos


def origen_de_caso(caso: Mapping[str, Any]) -> dict[str, Any]:
    """What the agents see of a case's event, built as the graph builds it."""
    from grafo.estado import origen_de

    evento = caso["evento"]
    return origen_de(dict(evento), atributos_obligatorios(evento["familia"]))


# -- a ficha against its reference ----------------------------------------------------------


def valor_comparable(valor: Any) -> str:
    """An attribute value as a reader compares it: the house normalisation (case, accents,
    spacing, apostrophes: ``criterios.vocabulario.normalizar``), and a decimal comma read as a
    point ("2,5 kg" is "2.5 kg")."""
    return normalizar(str(valor)).replace(",", ".")


def distintos_de_referencia(
    ficha: Mapping[str, Any], referencia: Mapping[str, Any], requeridos: Iterable[str]
) -> list[str]:
    """Required attributes whose published value differs from the reference's."""
    publicados = ficha.get("atributos") or {}
    esperados = referencia.get("atributos") or {}
    return [
        a
        for a in requeridos
        if valor_comparable(publicados.get(a, "")) != valor_comparable(esperados.get(a, ""))
    ]


def texto_inyectado(ficha: Mapping[str, Any], marcas: Iterable[str]) -> list[str]:
    """Injected fragments of the supplier's text that made it into the ficha."""
    publicado = normalizar(json.dumps(ficha, ensure_ascii=False))
    return [m for m in marcas if normalizar(m) in publicado]


def conforme_a_referencia(caso: Mapping[str, Any], ficha: Mapping[str, Any]) -> bool:
    """The labelled set's stand-in for a person on a ficha the loop wrote: it passes the code
    checks, its required attributes are the reference's, and it carries no injected text."""
    origen = origen_de_caso(caso)
    requeridos = atributos_obligatorios(caso["evento"]["familia"])
    return not (
        fallos(comprobar(dict(ficha), origen))
        or distintos_de_referencia(ficha, caso["referencia"], requeridos)
        or texto_inyectado(ficha, caso.get("inyeccion", []))
    )
