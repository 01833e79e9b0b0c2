"""Code checks of what a ficha says against its mapped origin: language, contradicted
attributes, an empty description, unsupported numbers, and the unsupported-words signal.

The origin these checks read is mapped to the house vocabulary (``criterios.vocabulario``), so
``cor: preto`` in the origin and ``color: negro`` in the ficha are the same fact. Each check
returns ``{"ok", "detalle"}`` like the others in ``criterios.comprobaciones``; the detail is a
Spanish instruction the generator can act on at the next attempt.

Which of them veto and which are only signals is decided by the measurement of
docs/calidad.md («Lo que ve el código»): a check vetoes only if it flags none of the 80
reference fichas and at least 95 % of the labelled candidates it flags are rejected by people.
Pure functions; the language model and the lemma data ship inside the py3langid and simplemma
wheels, nothing is downloaded at run time. Over 500 lines on purpose: the checks are tuned
together on one measurement and share the origin's words (``textos_de_origen``, ``STOPWORDS``,
``sin_nombres``); C08 (``comprobar_idioma``) is the part to move out when it next changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import groupby
from typing import Any

from criterios._comun import (
    TEXTOS_EN_CACHE,
    attributes,
    result,
    short,
    supplier,
    title_and_description,
)
from criterios.cifras import (
    NUMBER_RE,
    cifras_en_texto,
    respaldada,
    respaldo_de_origen,
    valores_numero,
)
from criterios.idiomas import idioma_por_evidencia
from criterios.vocabulario import (
    claves_en_texto,
    compatibles,
    mixtos,
    normalizar,
    terminos,
    vocabulario_de_familia,
)

# Languages the identifier chooses among: Spanish and the suppliers' languages. Restricting
# the set keeps a short Spanish title from being read as Galician or Italian.
IDIOMAS = ("es", "en", "pt", "fr")
# A text is not Spanish when the identifier gives Spanish less than this probability (after
# names and codes are taken out). Measured on the labelled set (docs/calidad.md).
MIN_PROB_ESPANOL = 0.5
# Fewer letters than this (after names and codes are out) say nothing about the language.
MIN_LETRAS_IDIOMA = 12
# The identifier alone misreads short Spanish titles ("Termo de café de acero inoxidable negro
# mate" as Portuguese): a text is foreign only if, besides, at least this share of its words
# is not in simplemma's Spanish dictionary.
MIN_PALABRAS_AJENAS = 0.4
# Whatever the identifier says, a text with at least this many words copied untranslated from
# a foreign origin (and MIN_PALABRAS_AJENAS of its words) is foreign. One alone is a loanword
# ("Auriculares gaming"); the identifier reads "Zapatillas Kids Velcro Sneaker Red" as
# Spanish (0.96), and short texts are where it errs.
MIN_SIN_TRADUCIR = 2
# ... and a text of at least this many words, all of them the foreign origin's, one of them
# not Spanish, is a copy of the origin: «Mini egg pan 12 cm red» (egg) for an origin that
# says just that. A Spanish text translated from it has words the origin does not.
MIN_PALABRAS_COPIA = 3
# An empty description: the title again, or fewer content words than this. The shortest
# reference description has 4 ("Botella isotérmica de acero inoxidable."), the candidates
# people call empty 2 or 3 (docs/calidad.md).
MIN_PALABRAS_DESCRIPCION = 4

_WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)
_TOKEN_RE = re.compile(r"\S+")
# A word with its hyphens and apostrophes: «slip-on» is one word, not «slip» and «on».
_COMPOUND_WORD_RE = re.compile(r"[^\W\d_]+(?:[-'’][^\W\d_]+)*")
_SENTENCE_START_RE = re.compile(r"(?:^|[.!?:;]\s+|\n)(\S+)")
# Spanish function words: not content, whatever the topic.
STOPWORDS = frozenset(
    """
    a al algo ante antes aquí así bajo cada casi como con contra cual cuando de del desde donde
    dos durante e el ella ellas ellos en entre era es esa ese eso esta este esto estos estas está
    están fue ha hace hacia han hasta hay la las le les lo los más me mi muy mismo misma nada ni
    no o os otra otro otros otras para pero poco por porque que quien se ser si sí sin sobre su
    sus tal también tan tanto te tiene tienen todo toda todos todas tras tu tus u un una uno unos
    unas y ya son lleva llevan incluye permite puede pueden sirve
    """.split()
)
# Spanish number words a text may use for a count the origin gives as a digit.
_PALABRAS_NUMERO = {
    "uno": 1,
    "una": 1,
    "dos": 2,
    "tres": 3,
    "cuatro": 4,
    "cinco": 5,
    "seis": 6,
    "siete": 7,
    "ocho": 8,
    "nueve": 9,
    "diez": 10,
}


# -- the mapped origin as text ----------------------------------------------------------------


def textos_de_origen(origen: Mapping[str, Any]) -> list[str]:
    """Every text of the origin: sku, supplier title, description, attribute values, cifras."""
    proveedor = supplier(origen)
    textos = [str(origen.get("sku") or ""), str(proveedor.get("titulo") or "")]
    textos += [str(proveedor.get("descripcion") or "")]
    textos += [f"{k} {v}" for k, v in attributes(proveedor).items()]
    cifras = origen.get("cifras")
    if isinstance(cifras, Mapping):
        textos += [f"{k} {v}" for k, v in cifras.items()]
    return textos


# -- C08: Spanish -------------------------------------------------------------------------------


@cache
def _identificador() -> Any:
    """py3langid's model restricted to ``IDIOMAS``; loaded once (about 0.1 s)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_pickled_model(MODEL_FILE, norm_probs=True)
    ident.set_languages(list(IDIOMAS))
    return ident


@lru_cache(maxsize=TEXTOS_EN_CACHE)
def _clases(texto: str) -> tuple[tuple[str, str, str], ...]:
    """Each token of a text, its letters, and what it is. Cached: C08 reads each text several
    times (with and without its names, for the identifier, the dictionaries and the evidence),
    and the origin's text on every attempt.

    "codigo": a digit or no letter (X2, 5.3, «–»), or a single capital inside a sentence (talla
    M, 30 °C); "mayusculas": two or more letters, all capitals (USB, RUNNER); "modelo": a
    capitalized word next to a model code (``_con_modelos``); "capitalizada": any other capital
    inside a sentence (Runner, Bluetooth, Kids); "palabra": anything else, the first word of a
    sentence included.
    """
    iniciales = {m.start(1) for m in _SENTENCE_START_RE.finditer(texto)}
    clases = []
    for match in _TOKEN_RE.finditer(texto):
        token = match.group(0)
        palabra = "".join(_WORD_RE.findall(token))
        if any(c.isdigit() for c in token) or not palabra:
            clase = "codigo"
        elif palabra.isupper() and len(palabra) > 1:
            clase = "mayusculas"
        elif palabra[0].isupper() and match.start() not in iniciales:
            clase = "codigo" if len(palabra) == 1 else "capitalizada"
        else:
            clase = "palabra"
        clases.append((token, palabra, clase))
    return tuple(_con_modelos(clases))


# A model code: a letter first, a digit somewhere, only letters, digits and hyphens (X2, G733,
# WH-1000XM5); not a quantity (350ml) nor a unit (g/m2).
_MODELO_RE = re.compile(r"^\W*[^\W\d_][\w-]*\d[\w-]*\W*$")


def _con_modelos(clases: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """A run of capitalized words, capitals and codes that holds a model code is a product
    name: "Runner X2 Speed Mesh" is a name even if the origin never writes it, while "Kids
    Velcro Sneaker Red" (no code) stays words."""
    resultado = []
    for en_racha, grupo in groupby(clases, key=lambda c: c[2] != "palabra"):
        racha = list(grupo)
        if en_racha and any(_MODELO_RE.match(token) for token, _, _ in racha):
            racha = [(t, p, "modelo" if c == "capitalizada" else c) for t, p, c in racha]
        resultado += racha
    return resultado


def _siempre(_palabra: str) -> bool:
    """Every capitalized word inside a sentence is a name: the reading of the signal below."""
    return True


def sin_nombres(
    texto: str, nombres: Iterable[str] = (), es_nombre: Callable[[str], bool] = _siempre
) -> str:
    """The text without what is not language: codes, numbers, names and shouted words.

    A token with a digit (X2, 5.3), a word in capitals (USB), any word of ``nombres`` (the
    origin's brand and model, in any case) and a capitalized word inside a sentence that
    ``es_nombre`` takes for a name are taken out. By default every capitalized word is a name,
    so "Zapatilla Runner X2" is judged on "Zapatilla"; C08 passes a stricter ``es_nombre``
    (``comprobar_idioma``).
    """
    excluidas = {normalizar(n) for nombre in nombres for n in _WORD_RE.findall(nombre)}
    return " ".join(
        token
        for token, palabra, clase in _clases(texto)
        if clase == "palabra" or (clase == "capitalizada" and not es_nombre(palabra))
        if normalizar(palabra) not in excluidas
    )


def probabilidad_espanol(
    texto: str, nombres: Iterable[str] = (), es_nombre: Callable[[str], bool] = _siempre
) -> float | None:
    """P(Spanish) among ``IDIOMAS`` of the text without names; None if too little is left."""
    limpio = sin_nombres(texto, nombres, es_nombre)
    if sum(c.isalpha() for c in limpio) < MIN_LETRAS_IDIOMA:
        return None
    return float(dict(_identificador().rank(limpio)).get("es", 0.0))


def palabras_ajenas(
    texto: str, nombres: Iterable[str] = (), es_nombre: Callable[[str], bool] = _siempre
) -> float:
    """Share of the words (names and codes out) that simplemma's Spanish dictionary lacks."""
    from simplemma import is_known

    palabras = [w.lower() for w in _WORD_RE.findall(sin_nombres(texto, nombres, es_nombre))]
    if not palabras:
        return 0.0
    return sum(not is_known(w, lang="es") for w in palabras) / len(palabras)


def _nombres_de_origen(origen: Mapping[str, Any]) -> list[str]:
    """Brand and model values of the mapped origin: names that are in no language."""
    atributos = attributes(supplier(origen))
    return [atributos[k] for k in ("marca", "modelo") if k in atributos]


def nombres_escritos(origen: Mapping[str, Any]) -> frozenset[str]:
    """Words the origin writes as names, normalized, in its title, description and attribute
    values: capitalized inside a sentence («Trail shoe with Vibram outsole») or in
    capitals amid lower case («RUNNER X2 black mesh sneaker»). A text with no lower case
    («BOTELLA DEPORTIVA TRITAN AZUL») shouts: its capitals name nothing.
    """
    proveedor = supplier(origen)
    textos = [str(proveedor.get("titulo") or ""), str(proveedor.get("descripcion") or "")]
    escritos: set[str] = set()
    for texto in textos + list(attributes(proveedor).values()):
        clases = _clases(texto)
        grita = not any(c.islower() for _, palabra, _ in clases for c in palabra)
        escritos |= {
            normalizar(palabra)
            for _, palabra, clase in clases
            if clase in ("capitalizada", "modelo") or (clase == "mayusculas" and not grita)
        }
    return frozenset(escritos)


@cache
def palabra_comun(palabra: str) -> bool:
    """A word some dictionary of ``IDIOMAS`` knows (simplemma's, inside its wheel): "Kids",
    "Sneaker" and "Red" are; "Bluetooth", "Tritan" and "SoundPro" are not. Each dictionary
    loads the first time it is asked (English, French and Portuguese add about 180 MB to
    Spanish's), which is why C08 asks only about a text that already reads as foreign."""
    from simplemma import is_known

    return any(is_known(palabra.lower(), lang=idioma) for idioma in IDIOMAS)


@dataclass(frozen=True)
class LecturaDeOrigen:
    """What C08 reads of the origin (``leer_origen``)."""

    # brand and model values: their words never count, in any case
    nombres: tuple[str, ...]
    # words it writes as names (``nombres_escritos``)
    escritos: frozenset[str]
    # the normalized words of its title and description when they are not in Spanish
    extranjeras: frozenset[str]
    # Spanish whatever the dictionaries say: function words and the family's house vocabulary
    # (running and trail are zapatillas words)
    de_la_casa: frozenset[str]
    # its language when it is not Spanish: the one a ficha is likeliest to leak
    idioma: str | None = None


def leer_origen(origen: Mapping[str, Any]) -> LecturaDeOrigen:
    """The origin as C08 reads it. Its text is foreign when its ``idioma`` says so or, when it
    does not say, when the identifier reads its title and description as not Spanish."""
    proveedor = supplier(origen)
    texto = f"{proveedor.get('titulo') or ''}. {proveedor.get('descripcion') or ''}"
    idioma = proveedor.get("idioma")
    if not idioma:
        prob = probabilidad_espanol(texto)
        foreign = prob is not None and prob < MIN_PROB_ESPANOL
        idioma = str(_identificador().classify(sin_nombres(texto))[0]) if foreign else "es"
    extranjero = str(idioma) != "es"
    return LecturaDeOrigen(
        nombres=tuple(_nombres_de_origen(origen)),
        escritos=nombres_escritos(origen),
        extranjeras=frozenset(_WORD_RE.findall(normalizar(texto))) if extranjero else frozenset(),
        de_la_casa=_STOP_NORMAL | vocabulario_de_familia(str(origen.get("familia", ""))),
        idioma=str(idioma) if extranjero else None,
    )


def sin_traducir(
    texto: str, lectura: LecturaDeOrigen, es_nombre: Callable[[str], bool]
) -> list[str]:
    """Words of the text (names and codes out) copied from an origin in another language that
    are not Spanish: not function words, not the family's house vocabulary, and not in
    simplemma's Spanish dictionary ("kids", "sneaker"; not "velcro", not "red")."""
    from simplemma import is_known

    palabras = _WORD_RE.findall(sin_nombres(texto, lectura.nombres, es_nombre))
    return [
        p.lower()
        for p in palabras
        if normalizar(p) in lectura.extranjeras
        and normalizar(p) not in lectura.de_la_casa
        and not is_known(p.lower(), lang="es")
    ]


def _hallazgo(
    campo: str, texto: str, lectura: LecturaDeOrigen, es_nombre: Callable[[str], bool]
) -> str | None:
    """What C08 says of one text read with ``es_nombre``, or None if it reads as Spanish.

    Foreign, in this order, when
    1. the identifier gives Spanish less than ``MIN_PROB_ESPANOL`` and at least
       ``MIN_PALABRAS_AJENAS`` of the words are not Spanish words;
    2. whatever the identifier says, at least ``MIN_SIN_TRADUCIR`` words, and
       ``MIN_PALABRAS_AJENAS`` of them, are copied untranslated from a foreign origin
       (``sin_traducir``); or the text has at least ``MIN_PALABRAS_COPIA`` words, all the
       foreign origin's, one of them untranslated (a copy: «Mini egg pan 12 cm red»);
    3. whatever the identifier says and however the text came to be, another language has
       more countable evidence than Spanish, and at least two words of it: function words,
       spellings and dictionary words only that language writes (``criterios.idiomas``;
       «Garrafa de vidro com tampa», written afresh from a Spanish origin).
    """
    prob = probabilidad_espanol(texto, lectura.nombres, es_nombre)
    if prob is None:
        return None
    if prob < MIN_PROB_ESPANOL and palabras_ajenas(texto, lectura.nombres, es_nombre) >= (
        MIN_PALABRAS_AJENAS
    ):
        idioma = _idioma_probable(texto, lectura.nombres, es_nombre)
        return f"{campo} en {idioma}, no en español: «{short(texto)}»"
    copiadas = sin_traducir(texto, lectura, es_nombre)
    palabras = _WORD_RE.findall(sin_nombres(texto, lectura.nombres, es_nombre))
    if len(copiadas) >= MIN_SIN_TRADUCIR and len(copiadas) >= MIN_PALABRAS_AJENAS * len(palabras):
        sin = ", ".join(dict.fromkeys(copiadas))
        return f"{campo} con palabras del origen sin traducir ({sin}): «{short(texto)}»"
    if copiadas and len(palabras) >= MIN_PALABRAS_COPIA and _todas_del_origen(palabras, lectura):
        sin = ", ".join(dict.fromkeys(copiadas))
        return f"{campo}: copia del origen sin traducir ({sin}): «{short(texto)}»"
    return _hallazgo_por_evidencia(campo, texto, lectura, es_nombre)


def _todas_del_origen(palabras: list[str], lectura: LecturaDeOrigen) -> bool:
    """Every word is a word of the foreign origin: nothing of the text was translated."""
    return all(normalizar(p) in lectura.extranjeras for p in palabras)


def _hallazgo_por_evidencia(
    campo: str, texto: str, lectura: LecturaDeOrigen, es_nombre: Callable[[str], bool]
) -> str | None:
    """The third reading of C08: words only another language writes
    (``criterios.idiomas.idioma_por_evidencia``), however the text came to be. It catches what
    the identifier reads as Spanish in a close language («Garrafa de vidro com tampa de
    bambu»: com, vidro, tampa) and a text written afresh, with no word of the origin."""
    limpio = sin_nombres(texto, lectura.nombres, es_nombre)
    hallado = idioma_por_evidencia(
        _COMPOUND_WORD_RE.findall(limpio),
        limpio,
        lambda palabra: normalizar(palabra) in lectura.de_la_casa,
        pista=lectura.idioma,
    )
    if hallado is None:
        return None
    idioma, palabras = hallado
    muestra = ", ".join(sorted(palabras)[:4])
    nombre = _NOMBRE_IDIOMA.get(idioma, idioma)
    return f"{campo} en {nombre}, no en español ({muestra}): «{short(texto)}»"


def comprobar_idioma(ficha: Mapping[str, Any], origen: Mapping[str, Any]) -> dict[str, Any]:
    """C08: the title and the description are in Spanish (``_hallazgo``).

    Codes, numbers, words in capitals and the origin's brand and model do not count
    (``sin_nombres``); a text with too few letters left is not judged. A capitalized word
    inside a sentence is a name, and does not count, only if
    1. the origin writes it as a name (``nombres_escritos``): "Runner" when the origin says
       "RUNNER X2 black mesh sneaker", "Vibram" when it says "Trail shoe with Vibram outsole"; or
    2. no dictionary of ``IDIOMAS`` knows it (``palabra_comun``: "Bluetooth", "SoundPro").
       This is asked only when the text reads as foreign by 1 alone, and the text is foreign
       only if it still does with these names out too: the dictionaries load only for
       suspect texts.
    Any other capitalized word counts. "Zapatillas Kids Velcro Sneaker Red", whose origin
    writes "Kids velcro sneaker red 30", passed criteria v2 twice over: every capital was
    taken for a name, so it was judged on "Zapatillas" alone; and with its words counted the
    identifier still gives Spanish 0.96. It fails now by its untranslated words (kids,
    sneaker: 2 of 5). And a text in a language close to Spanish, written afresh, read as
    Spanish to the identifier (0.96 for «Garrafa de vidro com tampa de bambu e capa de
    silicone»): it fails now by the words only Portuguese writes (com, tampa, vidro), the
    third reading of ``_hallazgo``, which names Italian, German, Catalan and Galician too.
    """
    lectura = leer_origen(origen)

    def del_origen(palabra: str) -> bool:
        return normalizar(palabra) in lectura.escritos

    def nombre(palabra: str) -> bool:
        return del_origen(palabra) or not palabra_comun(palabra)

    hallazgos = [
        hallazgo
        for campo, texto in title_and_description(ficha)
        if _hallazgo(campo, texto, lectura, del_origen)
        and (hallazgo := _hallazgo(campo, texto, lectura, nombre))
    ]
    if not hallazgos:
        return result("")
    return result("; ".join(hallazgos) + ". Tradúcelo al español; marca y modelo se quedan")


_NOMBRE_IDIOMA = {
    "en": "inglés",
    "pt": "portugués",
    "fr": "francés",
    "es": "español",
    "it": "italiano",
    "de": "alemán",
    "ca": "catalán",
    "gl": "gallego",
}


def _idioma_probable(texto: str, nombres: Iterable[str], es_nombre: Callable[[str], bool]) -> str:
    """The language name for the detail: the one with most evidence
    (``criterios.idiomas``), else the identifier's first choice among ``IDIOMAS`` (which
    would call Italian or German English)."""
    limpio = sin_nombres(texto, nombres, es_nombre)
    hallado = idioma_por_evidencia(_COMPOUND_WORD_RE.findall(limpio), limpio, lambda _: False)
    codigo = hallado[0] if hallado else _identificador().classify(limpio)[0]
    return _NOMBRE_IDIOMA.get(str(codigo), str(codigo))


# -- C09: contradicted attributes --------------------------------------------------------------


@cache
def _patrones(clave: str) -> tuple[tuple[str, str], ...]:
    """The spellings of a key's values as space-delimited word patterns, longest first so
    "azul marino" is read before "azul"; built once per key."""
    patrones = [
        (" " + " ".join(_WORD_RE.findall(alias)) + " ", casa)
        for alias, casa in terminos(clave).items()
    ]
    return tuple(sorted(((p, c) for p, c in patrones if p.strip()), key=lambda x: -len(x[0])))


@lru_cache(maxsize=TEXTOS_EN_CACHE)
def _palabras_de(texto: str) -> str:
    """A text's normalized words between single spaces, padded: what ``_patrones`` match.

    C09 reads the same texts once per key of ``claves_en_texto``, hence the cache."""
    return " " + " ".join(_WORD_RE.findall(normalizar(texto))) + " "


def _terminos_en(texto: str, clave: str) -> set[str]:
    """House values of ``clave`` named in a text, longest spelling first ("azul marino")."""
    norma = _palabras_de(texto)
    hallados: set[str] = set()
    for patron, casa in _patrones(clave):
        if patron in norma:
            hallados.add(casa)
            norma = norma.replace(patron, " ")
    return hallados


def _numeros(texto: str) -> set[float]:
    """Every reading of every number written in a text."""
    return {v for n in NUMBER_RE.findall(texto) for v in valores_numero(n)}


def _contradice(clave: str, valor: str, del_origen: str) -> bool:
    """A ficha value contradicts the origin's for the same key.

    Numbers must be the origin's; named house values ("negro", "hombre", "elastano") must be
    the origin's or more precise (``_igual_o_mas_preciso``). A value that only adds words
    ("aluminio con revestimiento cerámico") or words the vocabulary does not know does not
    contradict.
    """
    if normalizar(valor) == normalizar(del_origen):
        return False
    numeros, respaldo = _numeros(valor), _numeros(del_origen)
    if numeros and respaldo and not numeros <= respaldo:
        return True
    propios, ajenos = _terminos_en(valor, clave), _terminos_en(del_origen, clave)
    return bool(propios and ajenos and not _igual_o_mas_preciso(clave, propios, ajenos))


def _igual_o_mas_preciso(clave: str, propios: set[str], ajenos: set[str]) -> bool:
    """Every value an attribute names is the origin's, declared compatible with it, or more
    precise ("azul marino" for "azul"); a less precise one ("piel" for "piel sintética")
    changes the fact and contradicts it."""
    return all(
        compatibles(clave, p) & ajenos
        or any(set(normalizar(a).split()) <= set(normalizar(p).split()) for a in ajenos)
        for p in propios
    )


def _compatibles(clave: str, propios: set[str], ajenos: set[str]) -> bool:
    """Every value the ficha names is the origin's, shares a word with one ("azul marino"
    and "azul"), or is declared compatible with one ("infantil" and "niño")."""
    ajenos_palabras = {w for a in ajenos for w in normalizar(a).split()}
    return all(
        compatibles(clave, p) & ajenos or set(normalizar(p).split()) & ajenos_palabras
        for p in propios
    )


def comprobar_contradicciones(
    ficha: Mapping[str, Any], origen: Mapping[str, Any]
) -> dict[str, Any]:
    """C09: no attribute, and no value named in the title or the description, contradicts the
    mapped origin.

    An attribute is compared with the origin's attribute of the same house key. In the title
    and the description, every key of ``claves_en_texto`` (colour, gender, material,
    composition, connectivity, closure) is read with the vocabulary's spellings in every
    language: a value of a key the origin gives is a contradiction when it is not the
    origin's, not compatible with it (``compatibles``: "inalámbrica" and "Bluetooth"), does
    not share a word with it ("piel" and "piel sintética"), and nothing else in the origin
    (its text included, in any language) names it. A compound origin value supports each of
    its parts ("acero inoxidable y silicona"); a mixed one ("multicolor") supports any value.
    """
    del_origen = attributes(supplier(origen))
    hallazgos = [
        f"atributo {clave}: «{short(valor)}» y el origen dice «{short(del_origen[clave])}»"
        for clave, valor in attributes(ficha).items()
        if clave in del_origen and _contradice(clave, valor, del_origen[clave])
    ]
    textos = [(campo, texto) for campo, texto in title_and_description(ficha) if texto.strip()]
    if textos:
        texto_origen = " ".join(textos_de_origen(origen))
        for clave in claves_en_texto():
            if clave in del_origen:
                hallazgos += _contradichos_en_texto(clave, del_origen[clave], texto_origen, textos)
    if not hallazgos:
        return result("")
    return result("contradice el origen: " + "; ".join(hallazgos) + ". Usa el valor del origen")


def _contradichos_en_texto(
    clave: str, valor: str, texto_origen: str, textos: list[tuple[str, str]]
) -> list[str]:
    """The findings of one key in the title and the description (``comprobar_contradicciones``)."""
    esperados = _terminos_en(valor, clave)
    if not esperados or esperados & mixtos(clave):
        return []
    respaldados = esperados | _terminos_en(texto_origen, clave)
    hallazgos = []
    for campo, texto in textos:
        otros = _terminos_en(texto, clave) - respaldados
        otros = {o for o in otros if not _compatibles(clave, {o}, respaldados)}
        if otros:
            hallazgos.append(
                f"{campo} dice «{sorted(otros)[0]}» y el {_NOMBRE_CLAVE.get(clave, clave)} "
                f"del origen es «{valor}»"
            )
    return hallazgos


# How a detail names a key.
_NOMBRE_CLAVE = {"genero": "género", "composicion": "composición"}


# -- C10: empty description --------------------------------------------------------------------


def palabras_de_contenido(texto: str) -> list[str]:
    """Words of a text that carry content: letters only, not Spanish function words."""
    return [w for w in (normalizar(p) for p in _WORD_RE.findall(texto)) if w not in _STOP_NORMAL]


_STOP_NORMAL = frozenset(normalizar(w) for w in STOPWORDS)


def comprobar_descripcion_vacia(ficha: Mapping[str, Any]) -> dict[str, Any]:
    """C10: the description is not the title again and has at least
    ``MIN_PALABRAS_DESCRIPCION`` content words (``palabras_de_contenido``)."""
    titulo = str(ficha.get("titulo") or "")
    descripcion = str(ficha.get("descripcion") or "")
    contenido = palabras_de_contenido(descripcion)
    if not descripcion.strip():
        return result("")  # C02 already fails an empty description
    if _WORD_RE.findall(normalizar(descripcion)) == _WORD_RE.findall(normalizar(titulo)):
        return result(
            "la descripción repite el título. Di qué es, para qué sirve y sus rasgos del origen"
        )
    if len(contenido) < MIN_PALABRAS_DESCRIPCION:
        return result(
            f"descripción sin contenido: {len(contenido)} palabras con contenido (mínimo "
            f"{MIN_PALABRAS_DESCRIPCION}). Di qué es, para qué sirve y sus rasgos del origen"
        )
    return result("")


# -- C11: unsupported numbers -------------------------------------------------------------------


def comprobar_numeros(ficha: Mapping[str, Any], origen: Mapping[str, Any]) -> dict[str, Any]:
    """C11: every number of the title and the description is one the origin gives.

    A figure with a unit is backed as C07 backs it (after conversion); any other number
    must be written in the origin (a model number, a size, a count, a version), in any of
    its texts. "X2" is backed only by an origin that writes "X2" or the number 2.
    """
    respaldo = respaldo_de_origen(origen)
    del_origen = set().union(*(_numeros(t) for t in textos_de_origen(origen)))
    del_origen |= {v for lecturas in respaldo.por_magnitud.values() for v in lecturas}
    sin_respaldo = []
    for campo, texto in title_and_description(ficha):
        resto = texto
        for cifra in cifras_en_texto(texto):
            resto = resto.replace(cifra.texto, " ")
            if not respaldada(cifra, respaldo):
                sin_respaldo.append(f"«{cifra.texto}» ({campo})")
        for numero in NUMBER_RE.findall(resto):
            if not valores_numero(numero) & del_origen:
                sin_respaldo.append(f"«{numero}» ({campo})")
    if not sin_respaldo:
        return result("")
    return result("números que el origen no da: " + ", ".join(sin_respaldo[:4]) + ". Quítalos")


# -- unsupported content words: a signal --------------------------------------------------------


@cache
def _lema(palabra: str) -> str:
    """Spanish lemma of a normalized word (simplemma's data ship in its wheel)."""
    import simplemma

    return normalizar(simplemma.lemmatize(palabra, lang="es"))


def palabras_sin_respaldo(ficha: Mapping[str, Any], origen: Mapping[str, Any]) -> dict[str, Any]:
    """Share of the ficha's content lemmas in neither the mapped origin nor the family's
    vocabulary: ``{"proporcion": float | None, "palabras": [...]}``.

    A signal, not a veto (docs/calidad.md): for an origin in another language, a faithful
    translation has many words the origin does not spell.
    """
    familia = str(origen.get("familia", ""))
    conocidas = {_lema(w) for w in vocabulario_de_familia(familia)} | set(
        vocabulario_de_familia(familia)
    )
    texto_origen = " ".join(textos_de_origen(origen))
    conocidas |= {_lema(w) for w in palabras_de_contenido(texto_origen)}
    conocidas |= set(palabras_de_contenido(texto_origen))
    # the description starts a sentence
    texto = ". ".join(t for _, t in title_and_description(ficha))
    lemas = [_lema(w) for w in palabras_de_contenido(sin_nombres(texto)) if len(w) > 2]
    if not lemas:
        return {"proporcion": None, "palabras": []}
    ajenas = [w for w in lemas if w not in conocidas]
    return {"proporcion": round(len(ajenas) / len(lemas), 4), "palabras": sorted(set(ajenas))}
