"""A fact added inside a sentence: every clause of a claim must be in the origin (issue 48).

The translation reader (``criterios.lector``) reads a whole claim against a sentence of the
origin, so a claim that says what the sentence says plus one clause the origin never says
(«…con suela de goma antideslizante y forro transpirable» from «con suela de goma») still
reads above its threshold. Here a claim is split into clauses (``partir``: commas,
semicolons, colons and «y», «e», «con», «para», «que», «sin», «o», «ni»); a clause with a
content word the citable origin does not write (``sin_respaldo``: no lemma, house value,
cognate or family noun) must read, to the same reader, as some piece of the origin (its
sentences and their clauses in es/en/pt/fr, ``trozos``) at ``UMBRALES``: stricter for a
Spanish origin, where the lexical test is sharp, than for a foreign one, where a translation
misses words by nature. ``anadido`` gives the clause that falls shortest, or None.

Thresholds chosen on one half of the labelled set (split by event) and reported on the other
(docs/calidad.md, «El juez que lee traducciones», and its script ``medir_clausulas.py``).
Pure but for the reader's embeddings (cached per text).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from criterios import lector
from criterios._comun import attributes, nfc, supplier
from criterios.fidelidad import palabras_de_contenido, sin_nombres
from criterios.respaldo import (
    MIN_LETRAS,
    cognadas,
    fragmentos,
    frases,
    lema,
    lemas,
    origen_citable,
    valores_de_casa,
)
from criterios.vocabulario import normalizar

# Cosine a clause with content words the origin does not write must reach against its best
# piece of the origin, by the origin's language (Spanish or not) and by how many such words it
# has (one, two or more). None: not asked (a foreign origin's one-word clause: «con doble
# pared» for «Double-wall» is a translation more often than not). Chosen in docs/calidad.md.
UMBRALES: dict[bool, tuple[float | None, float]] = {True: (0.84, 0.86), False: (None, 0.84)}
# Written in the gate key's evaluator settings (``grafo.mensajes.prompt_evaluador_lector``):
# another split or other thresholds are another judge.
IDENTIDAD = f"cláusulas v1, umbrales es {UMBRALES[True]}, otros {UMBRALES[False]}"

# A claim's clauses end at a comma (not a decimal one: a digit on both sides), a semicolon or
# a colon, and start at a Spanish connector, which stays with its clause.
_CORTE_AFIRMACION_RE = re.compile(
    r"\s*(?:(?<!\d),|,(?!\d)|[;:])\s*|\s+(?=(?:y|e|con|para|que|sin|o|ni)\s)"
)
# An origin's pieces: the same cuts, a full stop that is not a decimal one, and the
# connectors of the origin's languages (es, en, pt, fr).
_CORTE_ORIGEN_RE = re.compile(
    r"\s*(?:(?<!\d)[,.]|[,.](?!\d)|[;:])\s*|\s+(?=(?:y|e|con|para|que|sin|and|with|for|without"
    r"|com|sem|et|avec|pour|sans)\s)",
    re.IGNORECASE,
)
# A connector at the start of a clause is not what the clause says.
_CONECTOR_RE = re.compile(r"^(?:y|e|con|para|que|sin|de)\s+", re.IGNORECASE)
_PALABRA_RE = re.compile(r"[^\W\d_]+")
_PUNTUACION = " \t\n.;:,!?"


@dataclass(frozen=True)
class Lectura:
    """One clause with content words the origin does not write: the clause, the reader's
    cosine with its best piece of the origin, the threshold it must reach, how many words."""

    clausula: str
    parecido: float
    umbral: float
    ajenas: int

    def basta(self) -> bool:
        """The origin says the clause: the cosine reaches the threshold."""
        return self.parecido >= self.umbral

    def grado(self) -> float:
        """On [0, 1] for the score: 0 at ``lector.SUELO`` or below, 1 at the threshold."""
        return min(1.0, max(0.0, (self.parecido - lector.SUELO) / (self.umbral - lector.SUELO)))


def partir(afirmacion: str) -> list[str]:
    """The clauses of a claim, as written, without final punctuation or empty ones."""
    texto = nfc(afirmacion).strip().strip(_PUNTUACION)
    return [c.strip(_PUNTUACION) for c in _CORTE_AFIRMACION_RE.split(texto) if c.strip(_PUNTUACION)]


def trozos(origen: Mapping[str, Any]) -> list[str]:
    """The pieces of the citable origin a clause is read against: the fragments a quote may
    be (``criterios.respaldo.fragmentos``), the title and each sentence whole, and each of
    their clauses with and without its leading connector. Distinct, in order."""
    proveedor = supplier(origen_citable(origen))
    enteros = [str(proveedor.get("titulo") or ""), *frases(str(proveedor.get("descripcion") or ""))]
    textos = [*fragmentos(origen), *(t.strip(_PUNTUACION) for t in enteros)]
    vistos: dict[str, None] = {}
    for texto in textos:
        vistos[texto] = None
        for parte in _CORTE_ORIGEN_RE.split(texto):
            parte = parte.strip(_PUNTUACION)
            vistos.update(dict.fromkeys([parte, _CONECTOR_RE.sub("", parte)]))
    return [t for t in vistos if t]


def sin_respaldo(texto: str, origen: Mapping[str, Any]) -> list[str]:
    """The content words of ``texto`` (names and codes out) that the citable origin does not
    write in any form code can see: the word or its lemma, a house value both name, a cognate
    (``criterios.respaldo.cognadas``), or the family's own noun."""
    return _ajenas(texto, _soporte(origen))


def _soporte(origen: Mapping[str, Any]) -> tuple[frozenset[str], list[str]]:
    """What the citable origin writes, once per claim rather than once per clause: its lemmas,
    house values and family noun, and its words as written (for cognates)."""
    proveedor = supplier(origen_citable(origen))
    todo = " ".join(
        [
            str(proveedor.get("titulo") or ""),
            str(proveedor.get("descripcion") or ""),
            *attributes(proveedor).values(),
        ]
    )
    respaldo = lemas(todo) | valores_de_casa(todo) | {lema(normalizar(str(origen.get("familia"))))}
    return respaldo, [normalizar(w) for w in _PALABRA_RE.findall(nfc(todo))]


def _ajenas(texto: str, soporte: tuple[frozenset[str], list[str]]) -> list[str]:
    """``sin_respaldo`` against an origin's ``_soporte``."""
    respaldo, escritas = soporte
    palabras = [w for w in palabras_de_contenido(sin_nombres(texto)) if len(w) >= MIN_LETRAS]
    return [
        w
        for w in palabras
        if w not in respaldo
        and lema(w) not in respaldo
        and not any(cognadas(w, x) for x in escritas)
    ]


def lecturas(
    afirmacion: str, origen: Mapping[str, Any], umbrales: tuple[float | None, float]
) -> list[Lectura]:
    """Every clause of the claim with content words the origin does not write, read against
    the origin's pieces when ``umbrales`` (one word, more) asks for it: the reader's best
    cosine, and the threshold it must reach."""
    leidas: list[Lectura] = []
    piezas: list[str] | None = None
    soporte = _soporte(origen)
    for clausula in partir(afirmacion):
        ajenas = _ajenas(clausula, soporte)
        umbral = umbrales[0] if len(ajenas) == 1 else umbrales[1]
        if not ajenas or umbral is None:
            continue
        piezas = trozos(origen) if piezas is None else piezas
        leida = _CONECTOR_RE.sub("", clausula)
        parecido = max((lector.parecido(leida, p) for p in piezas), default=0.0)
        leidas.append(Lectura(clausula, parecido, umbral, len(ajenas)))
    return leidas


def anadido(afirmacion: str, origen: Mapping[str, Any], espanol: bool) -> Lectura | None:
    """The clause of the claim the origin says least, among those below their threshold
    (``UMBRALES``); None when every clause is in it. ``espanol``: the origin is in Spanish
    (``criterios.fidelidad.leer_origen``)."""
    debajo = [x for x in lecturas(afirmacion, origen, UMBRALES[espanol]) if not x.basta()]
    return min(debajo, key=Lectura.grado, default=None)
