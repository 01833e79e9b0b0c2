"""Countable evidence of the language of a text, for C08 where the identifier is unsure.

Words Spanish never writes, counted per language: function words of that language that are
not Spanish words, spellings Spanish never uses, words in simplemma's dictionary of the
language and not in Spanish's (asked only for the languages the first two point to). Invariants:
a text is read as language L only when L's count reaches ``MIN_EVIDENCIA`` and passes
Spanish's own (``idioma_por_evidencia``); a function word Spanish also writes is never
evidence; pure functions. The lists' reasons and the measurements: docs/calidad.md, "Issue 32:
C08 lee la evidencia de cualquier idioma".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import cache

# At least this many words of one language make a text that language (one is a loanword or a
# name: «Auriculares gaming», «Born to Run»).
MIN_EVIDENCIA = 2

# Function words that are not Spanish words, per language (lower case, accents kept).
FUNCION: dict[str, frozenset[str]] = {
    lang: frozenset(words.split())
    for lang, words in {
        "pt": "com em não uma umas um uns ao aos à às é são sem mais muito muita muitos "
        "muitas num numa nas seu sua seus suas ou até já também você isso isto lhe ele "
        "eles elas têm tem podem após",
        "fr": "du des et avec sans pour dans est sont une au aux ce cette ces qui il elle "
        "ils elles vous nous sa ses leur leurs très être peut ou à où chaque votre",
        "en": "the with and for of to is are in on an this that it its your you from by "
        "or not be can will have into without each all more also our which",
        "it": "il della delle dello degli dei gli per nel nella nei sono che non questo "
        "questa anche più molto alla alle allo ai agli dal dalla sul sulla ed senza tra "
        "fra è ogni",
        "de": "der die und mit für ist sind ein eine einen einem einer dem zu im "
        "auf aus bei nicht oder auch sehr von vom zum zur wird werden kann ohne nach über",
        "ca": "amb els per és això aquest aquesta molt també sense dels pel però uns unes fins",
        "gl": "co coa cos coas cunha cunhas unha unhas ao aos non ou nun nunha moi tamén sen",
    }.items()
}

# Spanish function words no other language of FUNCION writes the same way.
FUNCION_ESPANOL = frozenset(
    "el los las y muy sin hasta también están sus cuando lleva incluye permite".split()
)

# Spellings Spanish never uses, per language (searched in each lower-case word).
GRAFIAS: dict[str, re.Pattern[str]] = {
    "pt": re.compile(r"[ãõâêôç]|ção$|ções$|ões$|ão$"),
    "fr": re.compile(r"[àâêèëîïôûùçœ]|eaux?$"),
    "it": re.compile(r"[àèìòù]|zion[ei]$"),
    "de": re.compile(r"[äöß]|(?<!g)ü|sch"),
    "ca": re.compile(r"[àèòïç]|l·l"),
    # nothing of their own: Galician writes like Spanish and Portuguese, and English loanwords
    # (running, trail) share every English spelling; their function words say them
    "gl": re.compile(r"(?!)"),
    "en": re.compile(r"(?!)"),
}
GRAFIA_ESPANOL = re.compile(r"ñ|ci[oó]n(es)?$")

# An elided article or preposition: French (l'eau, d'aluminium), Italian (dell'acqua) or
# Catalan (l'oficina).
_ELISION_RE = re.compile(r"\b(?:[ldjnmcst]|qu|dell|dall|nell|sull|all|un)['’][^\W\d_]+", re.I)

IDIOMAS_EVIDENCIA = tuple(FUNCION)


def evidencia(palabras: Iterable[str], texto: str = "") -> dict[str, set[str]]:
    """The words of each language by function words and spellings (1 and 2 above); an elided
    article of ``texto`` counts for French and Italian."""
    hallado: dict[str, set[str]] = {lang: set() for lang in (*IDIOMAS_EVIDENCIA, "es")}
    for palabra in palabras:
        p = palabra.lower()
        if p in FUNCION_ESPANOL or GRAFIA_ESPANOL.search(p):
            hallado["es"].add(p)
            continue
        for lang in IDIOMAS_EVIDENCIA:
            if p in FUNCION[lang] or GRAFIAS[lang].search(p):
                hallado[lang].add(p)
    for elision in _ELISION_RE.findall(texto):
        for lang in ("fr", "it", "ca"):
            hallado[lang].add(elision.lower())
    return hallado


@cache
def _conocida(palabra: str, lang: str) -> bool:
    """simplemma knows the word in that language (its dictionaries ship in its wheel)."""
    from simplemma import is_known

    return bool(is_known(palabra, lang=lang))


def idioma_por_evidencia(
    palabras: list[str],
    texto: str,
    espanolas: Callable[[str], bool],
    pista: str | None = None,
) -> tuple[str, frozenset[str]] | None:
    """The language other than Spanish with the most evidence and its words, when it has at
    least ``MIN_EVIDENCIA`` words and more than Spanish has; else None.

    ``espanolas`` says which words are Spanish whatever the dictionaries say (the family's
    vocabulary, compared without accents): they are never dictionary evidence, but a function
    word or a spelling of 1 and 2 counts anyway («é» is not «e»). Dictionaries (3 above) are
    asked only for the languages with some evidence already and for ``pista``, the origin's
    language when it is not Spanish (the one a ficha is likeliest to leak: «True wireless
    earbuds con…» has no English function word).
    """
    minusculas = [p.lower() for p in palabras]
    hallado = evidencia(minusculas, texto)
    espanol = len(hallado.pop("es"))
    candidatos = [lang for lang, ws in hallado.items() if ws or lang == pista]
    if not candidatos:
        return None
    propias = [p for p in minusculas if not espanolas(p) and "-" not in p]
    mejor: tuple[str, frozenset[str]] | None = None
    for lang in candidatos:
        ws = hallado[lang] | {p for p in propias if _conocida(p, lang) and not _conocida(p, "es")}
        if (
            len(ws) >= MIN_EVIDENCIA
            and len(ws) > espanol
            and (mejor is None or len(ws) > len(mejor[1]))
        ):
            mejor = (lang, frozenset(ws))
    return mejor
