"""A ficha's claims, the origin's fragments, and whether a quoted fragment supports a claim.

The code side of the ``citas`` evaluator (``grafo.citas``): code splits the title and the
description into claims (``afirmaciones``), offers the model the fragments of the cleaned,
mapped origin it may quote (``fragmentos``), and accepts a quote only if it is written in that
origin (compared normalised) and shares with its claim a Spanish lemma or a value of the house
vocabulary (``acepta``): «mesh upper» supports «parte superior de malla» because the
vocabulary maps *mesh* to *malla*, so a foreign origin can support a Spanish claim.

Invariants: the origin quoted is ``criterios.limpieza``'s cleaned one, so a claim backed only
by a price, a promotion or an injected instruction has nothing to quote; a claim with no
content word is not a claim; a quote that shares only function words supports nothing.
Why these rules, and what they miss, is measured in docs/calidad.md («El evaluador citas»).
Pure functions; simplemma's Spanish data ship in its wheel.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from difflib import SequenceMatcher
from functools import cache, lru_cache
from typing import Any

from criterios import citable, lector
from criterios._comun import TEXTOS_EN_CACHE, attributes, nfc, supplier
from criterios.fidelidad import (
    STOPWORDS,
    comprobar_contradicciones,
    comprobar_numeros,
    palabras_de_contenido,
    sin_nombres,
)
from criterios.vocabulario import datos_vocabulario, normalizar

# At most this many claims per ficha: the answer carries one quote per claim, and a 600-char
# description rarely has more sentences; the tail is joined into the last claim.
MAX_AFIRMACIONES = 8
# At most this many fragments are offered to the model (the answer's grammar lists them).
MAX_FRAGMENTOS = 40
# Words shorter than this are never content (the signal's rule, ``palabras_sin_respaldo``).
MIN_LETRAS = 3
# The longest vocabulary spelling read as one unit, in words («fonte de fer»).
MAX_PALABRAS_TERMINO = 4
# A claim is supported when its accepted quote covers at least this share of its content
# words and figures; below it the quote backs a word of the claim, not what it says
# («Su piel es impermeable…» quoting «couro sintético»). Chosen in docs/calidad.md.
COBERTURA_MINIMA = 0.5
# Cognates across es/en/pt/fr: words this long whose spellings are this alike.
MIN_LETRAS_COGNADA = 5
MIN_PARECIDO = 0.8

# A sentence ends at . ! ? ; or : followed by a space; «5.3», «30 °C» and «www.x.es» do not.
_FIN_DE_FRASE_RE = re.compile(r"(?<=[.!?;:])\s+(?=\S)")
_PALABRA_RE = re.compile(r"[^\W\d_]+")
_NUMERO_RE = re.compile(r"\d+(?:[.,]\d+)?")
_PUNTUACION_FINAL = " \t\n.;:,!?"


def frases(texto: str) -> list[str]:
    """The sentences of a text, as written, without empty ones."""
    return [f.strip() for f in _FIN_DE_FRASE_RE.split(nfc(texto).strip()) if f.strip()]


def lemas(texto: str) -> frozenset[str]:
    """Content lemmas of a Spanish text (names and codes out), plus the words as written."""
    palabras = [w for w in palabras_de_contenido(sin_nombres(texto)) if len(w) >= MIN_LETRAS]
    return frozenset(palabras) | {lema(w) for w in palabras}


def afirmaciones(ficha: Mapping[str, Any]) -> list[str]:
    """The claims of a ficha: its title, then each sentence of its description that says
    something (has a content word); at most ``MAX_AFIRMACIONES``, the rest joined to the last."""
    textos = [str(ficha.get("titulo") or "").strip(), *frases(str(ficha.get("descripcion") or ""))]
    claims = [t for t in textos if t and lemas(t)]
    if len(claims) > MAX_AFIRMACIONES:
        claims = [*claims[: MAX_AFIRMACIONES - 1], " ".join(claims[MAX_AFIRMACIONES - 1 :])]
    return claims


def origen_citable(origen: Mapping[str, Any]) -> dict[str, Any]:
    """What the model may quote from: the mapped origin without prices, promotions, delivery
    times, URLs, emojis, shouting or injected instructions (``criterios.limpieza``), gifts
    and accessories, and the title's values its own data contradict (``criterios.citable``)."""
    return citable.origen_citable(origen)


def fragmentos(origen: Mapping[str, Any]) -> list[str]:
    """The fragments of the cleaned origin a quote may be: its title, each sentence of its
    description and, when a sentence has commas, each of its parts, then each attribute value.
    Without final punctuation, distinct, at most ``MAX_FRAGMENTOS``."""
    proveedor = supplier(origen_citable(origen))
    textos = [str(proveedor.get("titulo") or ""), *frases(str(proveedor.get("descripcion") or ""))]
    vistos: dict[str, None] = {}
    for texto in textos:
        entero = texto.strip(_PUNTUACION_FINAL)
        vistos[entero] = None
        partes = [p.strip(_PUNTUACION_FINAL) for p in entero.split(",")]
        if len(partes) > 1:
            vistos.update(dict.fromkeys(partes))
    vistos.update(dict.fromkeys(v.strip() for v in attributes(proveedor).values()))
    return [f for f in vistos if f][:MAX_FRAGMENTOS]


def en_origen(cita: str, origen: Mapping[str, Any]) -> bool:
    """The quote is written in the cleaned origin (case, accents, spacing and final
    punctuation aside): in its title, description or an attribute value."""
    buscada = normalizar(cita).strip(_PUNTUACION_FINAL)
    if not buscada:
        return False
    return any(buscada in texto for texto in _textos_citables(origen))


def acepta(cita: str, afirmacion: str, origen: Mapping[str, Any]) -> bool:
    """Code's judgement of a quote: written in the cleaned origin, and sharing with the claim
    a content lemma or a house-vocabulary value (the vocabulary maps es/en/pt/fr)."""
    return en_origen(cita, origen) and bool(respaldo_comun(cita, afirmacion))


def respaldo_comun(cita: str, afirmacion: str) -> list[str]:
    """What the quote and the claim share: content lemmas, house values, figures."""
    comunes = (lemas(afirmacion) & lemas(cita)) | (
        valores_de_casa(afirmacion) & valores_de_casa(cita)
    )
    return sorted(comunes | (_numeros(afirmacion) & _numeros(cita)))


def cobertura(cita: str, afirmacion: str, familia: str = "") -> float:
    """Share of the claim's content words and figures the quote backs: the same word or
    lemma, a house value both name, a cognate (``cognadas``: *acolchada*, *acolchoada*), the
    same figure; the family's own noun (*zapatilla* for ``zapatillas``) is backed by the
    origin's family. 1.0 for a claim with nothing to back."""
    palabras = [w for w in palabras_de_contenido(sin_nombres(afirmacion)) if len(w) >= MIN_LETRAS]
    numeros = _numeros(afirmacion)
    if not palabras and not numeros:
        return 1.0
    respaldo = lemas(cita) | valores_de_casa(cita)
    if familia:
        respaldo |= {lema(normalizar(familia))}
    escritas = [normalizar(w) for w in _PALABRA_RE.findall(nfc(cita))]
    cubiertas = sum(
        1
        for w in palabras
        if w in respaldo or lema(w) in respaldo or any(cognadas(w, x) for x in escritas)
    )
    return (cubiertas + len(numeros & _numeros(cita))) / (len(palabras) + len(numeros))


def cognadas(a: str, b: str) -> bool:
    """Two normalised words of at least ``MIN_LETRAS_COGNADA`` letters spelt alike: the same
    first five letters, or ``SequenceMatcher`` ratio ``MIN_PARECIDO`` (*estudio*, *studio*)."""
    if len(a) < MIN_LETRAS_COGNADA or len(b) < MIN_LETRAS_COGNADA:
        return False
    return a[:5] == b[:5] or SequenceMatcher(None, a, b).ratio() >= MIN_PARECIDO


def respaldada(cita: str, afirmacion: str, origen: Mapping[str, Any]) -> bool:
    """The claim is supported by the quote: the quote is in the citable origin; the sentence
    it was taken from (``contexto``) says what the claim says, read by words (a shared lemma,
    value or figure, covering at least ``COBERTURA_MINIMA`` of the claim: ``acepta``,
    ``cobertura``) or by meaning, in any language (``criterios.lector``); and the claim
    states nothing the citable origin contradicts or lacks (``fiel``)."""
    if not en_origen(cita, origen):
        return False
    frase = contexto(cita, origen)
    familia = str(origen.get("familia") or "")
    por_palabras = bool(respaldo_comun(cita, afirmacion)) and (
        cobertura(frase, afirmacion, familia) >= COBERTURA_MINIMA
    )
    return (por_palabras or lector.dice_lo_mismo(afirmacion, frase)) and fiel(afirmacion, origen)


def mejor_cita(afirmacion: str, origen: Mapping[str, Any]) -> tuple[str, bool, float]:
    """Code's own quote for a claim, no model (``FICHAS_EVALUADOR=lector``): the first
    fragment of the citable origin that supports it, else the one whose sentence reads
    closest to it; with whether it supports the claim and the reader's cosine (0.0 for an
    origin with nothing to quote)."""
    mejor, parecido = "", 0.0
    for fragmento in fragmentos(origen):
        similitud = lector.parecido(afirmacion, contexto(fragmento, origen))
        if respaldada(fragmento, afirmacion, origen):
            return fragmento, True, similitud
        if similitud > parecido:
            mejor, parecido = fragmento, similitud
    return mejor, False, parecido


def fiel(afirmacion: str, origen: Mapping[str, Any]) -> bool:
    """Checks a reading of words or of meaning cannot make: every number of the claim is one
    the citable origin gives (C11's rule, so «1 l» is not backed by a title its figures
    contradict); no colour, material, gender… it names contradicts the origin's attribute
    (C09's rule on the citable origin); and a claim for every case («cualquier cocina»,
    «todo tipo de fuegos») needs an origin that says so («all hobs», «tous feux»)."""
    como_ficha = {"titulo": afirmacion, "descripcion": "", "atributos": {}}
    citable_ = origen_citable(origen)
    if not comprobar_numeros(como_ficha, citable_)["ok"]:
        return False
    if not comprobar_contradicciones(como_ficha, citable_)["ok"]:
        return False
    return not _UNIVERSAL_RE.search(normalizar(afirmacion)) or bool(
        _UNIVERSAL_ORIGEN_RE.search(" ".join(_textos_citables(origen)))
    )


# A claim for every case, and the words with which an origin says one (es, en, pt, fr).
_UNIVERSAL_RE = re.compile(r"\b(?:cualquier\w*|todo tipo|toda clase|todas las|todos los)\b")
_UNIVERSAL_ORIGEN_RE = re.compile(
    r"\b(?:all|any|every\w*|tous|toutes|tout|todos|todas|todo|toda|qualquer|cualquier\w*"
    r"|universal\w*)\b"
)


def contexto(cita: str, origen: Mapping[str, Any]) -> str:
    """The sentence of the cleaned origin a quote was taken from (its title, a sentence of its
    description, an attribute value; the longest that holds it), or the quote itself. The
    quote points at the evidence; code reads the whole sentence: a model that quotes «malla y
    goma» for «malla transpirable y suela de goma» pointed at the right place."""
    buscada = normalizar(cita).strip(_PUNTUACION_FINAL)
    if not buscada:
        return cita
    proveedor = supplier(origen_citable(origen))
    textos = [str(proveedor.get("titulo") or ""), *frases(str(proveedor.get("descripcion") or ""))]
    textos += list(attributes(proveedor).values())
    contienen = [t for t in textos if buscada in normalizar(t)]
    return max(contienen, key=len) if contienen else cita


def atributos_sin_respaldo(ficha: Mapping[str, Any], origen: Mapping[str, Any]) -> list[str]:
    """The ficha's attributes («clave: valor») the cleaned origin does not give: the value is
    neither written in it nor backed word by word (``cobertura`` against all its text). Code
    alone judges them: a value is short, and C09 already compares values of the same key;
    this catches a value the origin never gives («color: transparente», «talla: 43»)."""
    textos = _textos_citables(origen)
    todo = " ".join(textos)
    return [
        f"{clave}: {valor}"
        for clave, valor in attributes(ficha).items()
        if normalizar(valor) not in todo
        and not normalizar(valor).startswith(_NO_APLICA)
        and cobertura(todo, valor.replace("_", " ")) < COBERTURA_MINIMA
    ]


def descripcion_sin_nada_propio(ficha: Mapping[str, Any]) -> bool:
    """The description says nothing the title does not: no content lemma, house value or
    figure beyond the title's, attribute names («talla», «color») aside. «Una zapatilla de
    trail gris para mujer.» under «Zapatilla de trail para mujer en malla gris» (C06, which
    C10 checks only word for word). A size that only restates the attribute («talla 35») is
    not something of its own (issue 48); other figures are («20 h de autonomía»). A word whose
    lemma the title has is the title's («negra» under «… de ante negro»: ``lemas`` keeps the
    written word too). Of the 80 references it flags one, the shortest («Botella isotérmica
    de acero inoxidable.»); docs/calidad.md."""
    titulo = str(ficha.get("titulo") or "")
    descripcion = str(ficha.get("descripcion") or "")
    if not descripcion.strip():
        return False  # C02 fails an empty description already
    del_titulo = lemas(titulo) | valores_de_casa(titulo) | _nombres_de_claves()
    propias = {w for w in lemas(descripcion) if w not in del_titulo and lema(w) not in del_titulo}
    tallas = frozenset().union(
        *(_numeros(v) for k, v in attributes(ficha).items() if k in _CLAVES_DE_TALLA)
    )
    return not propias and _numeros(descripcion) <= _numeros(titulo) | tallas


@cache
def _nombres_de_claves() -> frozenset[str]:
    """The words of the house's attribute names and their spellings: «talla 35» names a key."""
    claves = datos_vocabulario()["claves"]
    return frozenset(
        normalizar(palabra)
        for clave, variantes in claves.items()
        for nombre in [clave, *variantes]
        for palabra in nombre.replace("_", " ").split()
    )


# Attributes whose figure a description may repeat without saying anything: sizes are a
# catalogue filter, not a description (``descripcion_sin_nada_propio``).
_CLAVES_DE_TALLA = frozenset({"talla"})

# The house's value for a required attribute that does not apply («no aplica (con cable)» for
# a wired headset's battery life): it states an absence, not a fact to back.
_NO_APLICA = "no aplica"


def _numeros(texto: str) -> frozenset[str]:
    """The figures of a text, with a decimal comma read as a point."""
    return frozenset(n.replace(",", ".") for n in _NUMERO_RE.findall(texto))


@lru_cache(maxsize=TEXTOS_EN_CACHE)
def valores_de_casa(texto: str) -> frozenset[str]:
    """House values a text names in any of the vocabulary's languages (``valores`` of every
    key and ``palabras``), as their normalised words: «rubber sole» names *goma*, «couro
    sintético» *piel* and *sintética*. Function words (*con*, *y*, *de*) and spellings shorter
    than ``MIN_LETRAS`` («la» for *lana*) never name anything."""
    tokens = [normalizar(t) for t in _PALABRA_RE.findall(nfc(texto))]
    alias = _alias_de_casa()
    nombrados: set[str] = set()
    for n in range(MAX_PALABRAS_TERMINO, 0, -1):
        for i in range(len(tokens) - n + 1):
            nombrados |= alias.get(" ".join(tokens[i : i + n]), frozenset())
    return frozenset(nombrados)


@cache
def _alias_de_casa() -> dict[str, frozenset[str]]:
    """Normalised spelling -> the content words of the house values it names."""
    datos = datos_vocabulario()
    grupos: list[tuple[str, Iterable[str]]] = [
        (casa, variantes)
        for valores in datos["valores"].values()
        for casa, variantes in valores.items()
    ]
    grupos += list(datos["palabras"].items())
    vacias = {normalizar(w) for w in STOPWORDS}
    alias: dict[str, set[str]] = {}
    for casa, variantes in grupos:
        palabras = {w for w in normalizar(casa).split() if len(w) >= MIN_LETRAS and w not in vacias}
        if not palabras:
            continue
        for variante in [casa, *variantes]:
            clave = normalizar(variante)
            if len(clave) >= MIN_LETRAS and clave not in vacias:
                alias.setdefault(clave, set()).update(palabras)
    return {k: frozenset(v) for k, v in alias.items()}


def _textos_citables(origen: Mapping[str, Any]) -> list[str]:
    """The cleaned origin's title, description and attribute values, normalised."""
    proveedor = supplier(origen_citable(origen))
    textos = [str(proveedor.get("titulo") or ""), str(proveedor.get("descripcion") or "")]
    textos += list(attributes(proveedor).values())
    return [normalizar(t) for t in textos if t]


@cache
def lema(palabra: str) -> str:
    """Spanish lemma of a normalised word (simplemma), normalised."""
    import simplemma

    return normalizar(simplemma.lemmatize(palabra, lang="es"))
