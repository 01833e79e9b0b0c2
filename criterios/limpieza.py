"""Pre-cleaning of the origin the generator reads: what may never be published is removed first.

Small models copy their input. A supplier text with a price, "¡¡OFERTA!!", a delivery promise,
a web address, emojis, words in capitals or a superlative or call to buy ("Best seller!",
"Compra ya") comes back in the ficha, fails C05 in code and costs an attempt. Removing those
fragments before the generator sees them is cheaper than asking it not to copy them. The
evaluator still compares the ficha against the full origin: cleaning changes what the
generator reads, never what the ficha is judged against.

Sentences of the description that carry a price, a promotion, a delivery time, a URL, a
superlative or call to buy, or a prompt injection are dropped whole (what is left of "Ahora
solo 59,99 €" is noise); in the title and attribute values only the offending fragment goes.
Shouted words become lower case. Pure functions, no I/O.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from typing import Any

from criterios import reglas_casa
from criterios.comprobaciones import _names_in_capitals

# Phrases that address the model instead of describing the product; a sentence with one is
# an injection attempt, never product data.
INYECCION_RE = re.compile(
    r"""
    \b(?:ignora|ignore|ignorez|olvida|oubliez|disregard|forget)\b[^.!?\n]{0,40}
      \b(?:instrucc|instruct|consignes|r[eè]gles|rules|reglas|prompt)
    | \bprompt\b | \bsystem\s*: | \bsistema\s*: | \bmodelo\s+de\s+lenguaje\b
    | \blanguage\s+model\b | \bnueva\s+instrucci[oó]n\b | \bapru[eé]ba(?:la|lo)?\b
    | \bapprove\b | \brépondez\b | \baprobada\s*=
    | </?\s*ficha\s*>
    """,
    re.IGNORECASE | re.VERBOSE,
)
_SENTENCE_END_RE = re.compile(r"(?<=[.!?])\s+|\n+")  # "5.3" and "www.x.es" are not ends
_CONJUNCIONES = frozenset("YAOEU")  # one-letter words of a shouted text; S, M, L are sizes
_LETTER_RE = re.compile(r"[^\W\d_]")
_SPACES_RE = re.compile(r"\s{2,}")
_LEFTOVER_RE = re.compile(r"(?:\s*[-–|·:,;]\s*)+$|^\s*[-–|·:,;]\s*|[¡!]{2,}|¡\s*!")


def _ofensivos(texto: str) -> list[str]:
    """Fragments that may never reach a ficha: prices, promotions, delivery times, URLs,
    superlatives and calls to buy."""
    return [
        *reglas_casa.precios(texto),
        *reglas_casa.promociones(texto),
        *reglas_casa.plazos_entrega(texto),
        *reglas_casa.urls(texto),
        *reglas_casa.superlativos(texto),
        *(m.group(0) for m in INYECCION_RE.finditer(texto)),
    ]


def _sin_emojis(texto: str) -> str:
    """Emojis out; the ° of 30 °C and the ñ stay (see ``reglas_casa.emojis``)."""
    for emoji in set(reglas_casa.emojis(texto)):
        texto = texto.replace(emoji, " ")
    return texto


def _sin_gritos(texto: str, permitidas: frozenset[str] = frozenset()) -> str:
    """Shouted words in lower case; acronyms, sizes and codes are left as written.

    A text written mostly in capitals is shouted as a whole, short words included ("DE",
    "CON", "CM"), so every word of it that is not an acronym or a code goes to lower case.
    """
    gritos = set(reglas_casa.mayusculas(texto, permitidas))
    if not gritos:
        return texto
    letras = _LETTER_RE.findall(texto)
    if sum(c.isupper() for c in letras) > 0.6 * len(letras):
        conservar = reglas_casa.ACRONIMOS | permitidas
        gritos = {
            w
            for w in re.findall(r"\w+", texto)
            if (len(w) > 1 or w in _CONJUNCIONES)
            and w.isalpha()
            and w.isupper()
            and w not in conservar
        }
    for palabra in gritos:
        texto = re.sub(rf"\b{re.escape(palabra)}\b", palabra.lower(), texto)
    return _capitalizar(texto)


def _capitalizar(texto: str) -> str:
    """Upper-case the first letter of each sentence, after shouting became lower case."""
    return re.sub(r"(^|[.!?]\s+)([a-záéíóúñü])", lambda m: m.group(1) + m.group(2).upper(), texto)


def _tidy(texto: str) -> str:
    """Collapse the spaces and dangling separators a removal leaves behind."""
    texto = _SPACES_RE.sub(" ", texto).strip()
    previo = None
    while previo != texto:
        previo = texto
        texto = _LEFTOVER_RE.sub("", texto).strip()
    return texto


def limpiar_descripcion(texto: str, permitidas: frozenset[str] = frozenset()) -> str:
    """Drop the sentences with a forbidden fragment; strip emojis and shouting from the rest."""
    texto = _sin_emojis(texto)
    frases = [f for f in _SENTENCE_END_RE.split(texto) if f.strip()]
    quedan = [f.strip() for f in frases if not _ofensivos(f)]
    return _tidy(_sin_gritos(" ".join(quedan), permitidas))


def limpiar_fragmento(texto: str, permitidas: frozenset[str] = frozenset()) -> str:
    """Cut the forbidden fragments out of a short text (a title, an attribute value)."""
    texto = _sin_emojis(texto)
    for fragmento in sorted(set(_ofensivos(texto)), key=len, reverse=True):
        texto = texto.replace(fragmento, " ")
    return _tidy(_sin_gritos(texto, permitidas))


def limpiar_origen(origen: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of the origin with the supplier's title, description and attributes cleaned.

    ``cifras`` and the required-attribute list are untouched: figures are facts, and C07
    compares the ficha with the full origin anyway.
    """
    permitidas = _names_in_capitals(origen)  # "marca": "ASICS" is a name, not shouting
    limpio: dict[str, Any] = copy.deepcopy(dict(origen))
    proveedor = limpio.get("ficha_proveedor")
    if not isinstance(proveedor, dict):
        return limpio
    if isinstance(proveedor.get("titulo"), str):
        proveedor["titulo"] = limpiar_fragmento(proveedor["titulo"], permitidas)
    if isinstance(proveedor.get("descripcion"), str):
        proveedor["descripcion"] = limpiar_descripcion(proveedor["descripcion"], permitidas)
    atributos = proveedor.get("atributos")
    if isinstance(atributos, dict):
        proveedor["atributos"] = {
            k: limpiar_fragmento(v, permitidas) if isinstance(v, str) else v
            for k, v in atributos.items()
        }
    return limpio
