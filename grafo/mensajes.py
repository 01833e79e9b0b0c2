"""The text each agent is shown: pure functions, so tests can prove what each one never sees.

The generator gets the origin and, from the second attempt on, the problems found so far —
never its previous ficha (given that, models rewrite sentences that were fine and bring back
problems already fixed). The evaluator gets the ficha, the code-check results, the origin and
the criteria — never the generator's prompt, earlier attempts or the attempt number (told it
was the last attempt, it approves more).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import orjson

from criterios import cargar_criterios, clausulas, lector, palabras_sin_respaldo
from esquemas.constantes import (
    MAX_DESCRIPCION,
    MAX_TITULO,
    MODO_CITAS,
    MODO_LECTOR,
    MODO_RUBRICA,
    MODO_VEREDICTO,
    MODOS_EVALUADOR,
    PLANTILLA_GENERADOR,
)


def _json_block(value: Any) -> str:
    """A fenced JSON block: unambiguous for the model and easy to find in recorded requests."""
    return "```json\n" + indented_json(value) + "\n```"


def indented_json(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, indent=2)``, written by orjson.

    With ``indent`` the standard library falls back to its pure-Python encoder; in the CPU
    profile of the worker that was 2 % of all CPU, for two messages per attempt. orjson gives
    the same text (``tests/grafo/test_mensajes.py``) except the exponent of very small or
    large floats (``1e-7`` for ``1e-07``), the same number either way. Values orjson refuses
    (integers beyond 64 bits, non-string keys) take the standard library's path.
    """
    try:
        return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(value, ensure_ascii=False, indent=2)


@dataclass(frozen=True)
class Plantillas:
    """Texts that replace the package's templates (``FICHAS_PROMPT_*_ARCHIVO``); None keeps
    the package's. ``generador`` replaces ``generador.md``, ``evaluador`` the template of the
    evaluator's mode (``PLANTILLA_EVALUADOR``); each is formatted with that template's
    placeholders, so the same text gives the same prompt, and the same gate key, whether it
    comes from a file or from the package (``esquemas.constantes.MARCADORES_PLANTILLA``). The
    two never mix: the evaluator is built from ``evaluador`` alone."""

    generador: str | None = None
    evaluador: str | None = None


SIN_PLANTILLAS = Plantillas()


@cache
def _template(name: str) -> str:
    """Prompt templates live next to the code as Markdown, reviewed like code."""
    return resources.files("grafo.prompts").joinpath(name).read_text(encoding="utf-8")


def plantilla(name: str, texto: str | None = None) -> str:
    """The package's template ``name``, or ``texto`` in its place when given."""
    return _template(name) if texto is None else texto


@cache
def prompt_generador(ejemplos: bool = False, texto: str | None = None) -> str:
    """System prompt of the generator: house rules as the generator-facing criteria texts.

    ``ejemplos`` appends a paragraph that frames the origin as data, never as instructions,
    and one short example ficha per family; the prompt stays one static text, so a server
    with prefix caching reuses it across events. ``texto`` replaces ``generador.md`` (the
    examples are still appended after it).
    """
    lineas = [f"- {c.id}: {c.texto_generador}" for c in cargar_criterios()]
    cuerpo = plantilla(PLANTILLA_GENERADOR, texto)
    if ejemplos:
        cuerpo += _template("generador_ejemplos.md")
    return cuerpo.format(
        criterios="\n".join(lineas), max_titulo=MAX_TITULO, max_descripcion=MAX_DESCRIPCION
    )


@cache
def prompt_evaluador(senal: bool = False, texto: str | None = None) -> str:
    """System prompt of the evaluator: the evaluator-facing text of every criterion.

    ``senal`` appends how to read the unsupported-words signal (``senal_evaluador``). It is
    part of the prompt, so of the gate key: a gate certified without it does not apply.
    ``texto`` replaces ``evaluador.md`` (the signal's paragraph is still appended).
    """
    lineas = [f"- {c.id}: {c.texto_evaluador}" for c in cargar_criterios()]
    cuerpo = plantilla("evaluador.md", texto)
    if senal:
        cuerpo += _template("evaluador_senal.md")
    return cuerpo.format(criterios="\n".join(lineas))


def modo_evaluador(rubrica: bool | str) -> str:
    """The evaluator's mode from the old flag (True: ``rubrica``) or from its name."""
    if isinstance(rubrica, bool):
        return MODO_RUBRICA if rubrica else MODO_VEREDICTO
    if rubrica not in MODOS_EVALUADOR:
        raise ValueError(f"evaluator mode {rubrica!r}: one of {', '.join(MODOS_EVALUADOR)}")
    return rubrica


def prompt_del_evaluador(
    rubrica: bool | str = False, senal: bool = False, texto: str | None = None
) -> str:
    """The system prompt of the evaluator the loop runs with these options: the one text the
    agent is built with, the gate key hashes and ``fichas evaluar`` records.

    ``rubrica`` is the mode (``veredicto``, ``rubrica``, ``citas``), or True for the rubric.
    The signal goes with the single-verdict evaluator only: the rubric and the quoter judge
    invented facts their own way, and the signal's paragraph was written for the verdict's.
    ``texto`` replaces the mode's template (``esquemas.constantes.PLANTILLA_EVALUADOR``).
    """
    modo = modo_evaluador(rubrica)
    if modo != MODO_VEREDICTO and senal:
        raise ValueError("the unsupported-words signal goes with the single-verdict evaluator")
    if modo == MODO_RUBRICA:
        return prompt_evaluador_rubrica(texto)
    if modo == MODO_CITAS:
        return prompt_evaluador_citas(texto)
    if modo == MODO_LECTOR:
        return prompt_evaluador_lector(texto)
    return prompt_evaluador(senal, texto)


@cache
def prompt_evaluador_rubrica(texto: str | None = None) -> str:
    """System prompt of the rubric evaluator: three yes/no questions (``grafo.rubrica``);
    ``texto`` replaces ``evaluador_rubrica.md``."""
    return plantilla("evaluador_rubrica.md", texto).format()


@cache
def prompt_evaluador_citas(texto: str | None = None) -> str:
    """System prompt of the quoting evaluator: one origin fragment per claim (``grafo.citas``);
    ``texto`` replaces ``evaluador_citas.md``."""
    return plantilla("evaluador_citas.md", texto).format()


@cache
def prompt_evaluador_lector(texto: str | None = None) -> str:
    """What the gate key hashes of the model-free evaluator (``grafo.citas.leer``): no model
    reads it; it says what the judge does and names the reader's model and threshold and the
    clause check's thresholds (``criterios.clausulas``), so another reader is another key.
    ``texto`` replaces ``evaluador_lector.md``."""
    identidad = (
        f"\nLector: {lector.MODELO}, umbral {lector.UMBRAL}, suelo {lector.SUELO}."
        f"\nCláusulas: {clausulas.IDENTIDAD}.\n"
    )
    return plantilla("evaluador_lector.md", texto).format() + identidad


def mensaje_generador(origen: dict[str, Any], problemas: list[dict[str, Any]]) -> str:
    """User message of the generator: the origin, plus the problems to fix if there are any."""
    partes = ["Escribe la ficha de este producto a partir de su origen:", _json_block(origen)]
    if problemas:
        partes += [
            "Una versión anterior se rechazó. Escríbela de nuevo desde el origen y corrige "
            "estos problemas:",
            _json_block(problemas),
        ]
    partes.append('Responde solo con el objeto JSON {"titulo", "descripcion", "atributos"}.')
    return "\n\n".join(partes)


def senal_evaluador(ficha: dict[str, Any], origen: dict[str, Any]) -> dict[str, Any] | None:
    """The unsupported-words signal as the evaluator is shown it, or None: not shown.

    Only for an origin in Spanish: there it separates the fichas that invent from the good
    ones (AUC 0.84 on the labelled set), while for an origin in another language a faithful
    translation is full of words the origin does not spell (AUC 0.55), and showing them
    would only push the evaluator to reject translations (docs/calidad.md). None as well
    when the ficha has no content word to judge.
    """
    proveedor = origen.get("ficha_proveedor") or {}
    if str(proveedor.get("idioma") or "es") != "es":
        return None
    senal = palabras_sin_respaldo(ficha, origen)
    if senal["proporcion"] is None:
        return None
    return {"palabras_sin_respaldo": senal["palabras"], "proporcion": senal["proporcion"]}


def mensaje_evaluador(
    ficha: dict[str, Any],
    comprobaciones: dict[str, dict[str, Any]],
    origen: dict[str, Any],
    senal: dict[str, Any] | None = None,
) -> str:
    """User message of the evaluator: exactly ficha, code checks and origin, nothing else;
    plus the code's unsupported-words ``senal`` when the loop runs with it."""
    cuerpo = {"ficha": ficha, "comprobaciones": comprobaciones, "origen": origen}
    if senal is not None:
        cuerpo["senal"] = senal
    return "\n\n".join(
        [
            "Evalúa esta ficha contra los criterios:",
            _json_block(cuerpo),
            'Responde solo con el objeto JSON {"aprobada", "problemas"}.',
        ]
    )


def mensaje_evaluador_rubrica(ficha: dict[str, Any], origen: dict[str, Any]) -> str:
    """User message of the rubric evaluator: the ficha and its origin, nothing else.

    The code checks are left out: the rubric asks only what code cannot check, and a failed
    check vetoes the ficha whatever the answers.
    """
    cuerpo = {"ficha": ficha, "origen": origen}
    return "\n\n".join(
        [
            "Contesta las tres preguntas sobre esta ficha:",
            _json_block(cuerpo),
            'Responde solo con el objeto JSON {"inventa", "publicidad", "vacia"}.',
        ]
    )


def mensaje_evaluador_citas(origen: dict[str, Any], afirmaciones: list[str]) -> str:
    """User message of the quoting evaluator: the cleaned origin and the ficha's claims.

    ``origen`` is what may be quoted (``criterios.respaldo.origen_citable``), so a price, a
    promotion or an injected instruction never reaches it; the claims are the ficha's own text,
    split by code. Nothing else: no code checks, no attempt, nothing of the generator.
    """
    return "\n\n".join(
        [
            "Busca en este origen lo que dice cada afirmación:",
            _json_block(origen),
            "Afirmaciones de la ficha, en orden:",
            _json_block({"afirmaciones": afirmaciones}),
            'Responde solo con el objeto JSON {"citas": [...]}, una cita por afirmación.',
        ]
    )


def problemas_acumulados(historial: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every distinct problem of earlier attempts, so a fix never undoes an earlier fix."""
    vistos: set[tuple[str, str]] = set()
    problemas: list[dict[str, Any]] = []
    for registro in historial:
        for problema in registro["veredicto"]["problemas"]:
            clave = (problema["criterio"], problema["detalle"])
            if clave not in vistos:
                vistos.add(clave)
                problemas.append({"criterio": clave[0], "detalle": clave[1]})
    return problemas
