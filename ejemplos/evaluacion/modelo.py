"""Helpers to write a labelled case compactly; ``construir.py`` turns them into casos.jsonl.

A candidate helper returns a function of the reference ficha, so most candidates are written as
the one sentence that makes them differ from the reference: an invented fact (C04), an
unverifiable superlative (C05), a description that says nothing (C06), a wrong attribute, or a
mechanical defect the code checks catch. Every verdict is the human one, written here by hand.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

Ficha = dict[str, Any]
Candidata = Callable[[Ficha], dict[str, Any]]

NAMESPACE = uuid.UUID("6f1d1c1e-4c55-4f57-9a55-6576616c7561")


def _candidata(
    tipo: str, ficha: Ficha, aprobada: bool, criterios: list[str], nota: str
) -> dict[str, Any]:
    """One candidate with its verdict: approved, or rejected with the criteria it fails."""
    return {
        "tipo": tipo,
        "ficha": ficha,
        "aprobada": aprobada,
        "criterios": [] if aprobada else criterios,
        "nota": nota,
    }


def _con(ref: Ficha, **cambios: Any) -> Ficha:
    """A copy of the reference with some fields replaced."""
    ficha = {
        "titulo": ref["titulo"],
        "descripcion": ref["descripcion"],
        "atributos": dict(ref["atributos"]),
    }
    ficha.update(cambios)
    return ficha


def alt(
    descripcion: str,
    *,
    aprobada: bool = True,
    criterios: list[str] | None = None,
    nota: str = "",
    titulo: str | None = None,
) -> Candidata:
    """Another wording of the reference's description; approved unless said otherwise."""

    def build(ref: Ficha) -> dict[str, Any]:
        ficha = _con(ref, descripcion=descripcion, titulo=titulo or ref["titulo"])
        tipo = "buena" if aprobada else "sutil"
        return _candidata(tipo, ficha, aprobada, criterios or [], nota or "otra redacción")

    return build


def inventa(frase: str, criterios: list[str] | None = None) -> Candidata:
    """The reference plus a fact the origin does not give: C04."""

    def build(ref: Ficha) -> dict[str, Any]:
        ficha = _con(ref, descripcion=f"{ref['descripcion']} {frase}")
        nota = f"inventa: «{frase}»"
        return _candidata("inventa", ficha, False, criterios or ["C04"], nota)

    return build


def superlativo(frase: str) -> Candidata:
    """The reference plus an unverifiable superlative or a call to buy: C05 (evaluator's part)."""

    def build(ref: Ficha) -> dict[str, Any]:
        ficha = _con(ref, descripcion=f"{ref['descripcion']} {frase}")
        return _candidata("superlativo", ficha, False, ["C05"], f"tono: «{frase}»")

    return build


def vacia(descripcion: str) -> Candidata:
    """A description that only repeats the title or says nothing a buyer can use: C06."""

    def build(ref: Ficha) -> dict[str, Any]:
        ficha = _con(ref, descripcion=descripcion)
        return _candidata("vacia", ficha, False, ["C06"], "no dice qué es ni para qué sirve")

    return build


def atributo_falso(
    clave: str, valor: str, *, nota: str, criterios: list[str] | None = None
) -> Candidata:
    """The reference with one attribute the origin contradicts: C04 (and C07 if a figure)."""

    def build(ref: Ficha) -> dict[str, Any]:
        atributos = dict(ref["atributos"]) | {clave: valor}
        ficha = _con(ref, atributos=atributos)
        return _candidata("atributo", ficha, False, criterios or ["C04"], nota)

    return build


def codigo(
    descripcion: str,
    *,
    criterios: list[str],
    aprobada: bool = False,
    nota: str = "",
    atributos: dict[str, str] | None = None,
) -> Candidata:
    """A description with a defect, usually one the code checks catch (price, unit slip...)."""

    def build(ref: Ficha) -> dict[str, Any]:
        ficha = _con(ref, descripcion=descripcion)
        if atributos is not None:
            ficha["atributos"] = atributos
        return _candidata("defecto", ficha, aprobada, criterios, nota or "defecto mecánico")

    return build


def caso(
    id_: str,
    familia: str,
    idioma: str,
    titulo: str,
    descripcion: str,
    atributos: dict[str, str],
    cifras: dict[str, Any],
    *,
    ref: tuple[str, str] | tuple[str, str, dict[str, str]],
    rasgos: list[str],
    candidatas: list[Candidata] | None = None,
    inyeccion: list[str] | None = None,
) -> dict[str, Any]:
    """One labelled case: the event, the reference ficha, its traits and its candidates.

    The reference's attributes default to the supplier's when these already use the
    family's keys; otherwise they are given as the third item of ``ref``.
    """
    ref_atributos = ref[2] if len(ref) == 3 else dict(atributos)  # type: ignore[misc]
    referencia = {"titulo": ref[0], "descripcion": ref[1], "atributos": ref_atributos}
    evento = {
        "event_id": str(uuid.uuid5(NAMESPACE, id_)),
        "sku": id_,
        "version": 1,
        "proveedor": "Proveedor de evaluación",
        "familia": familia,
        "ocurrido_en": "2026-11-30T10:00:00Z",
        "ficha_proveedor": {
            "titulo": titulo,
            "descripcion": descripcion,
            "atributos": atributos,
            "idioma": idioma,
        },
        "cifras": cifras,
    }
    return {
        "id": id_,
        "evento": evento,
        "referencia": referencia,
        "rasgos": rasgos,
        "inyeccion": inyeccion or [],
        "candidatas": [
            {"id": f"{id_}/{n}", **build(referencia)}
            for n, build in enumerate(candidatas or [], start=1)
        ],
    }
