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
wheels, nothing is downloaded at run time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from criterios.cifras import (
    NUMBER_RE,
    cifras_en_texto,
    respaldada,
    respaldo_de_origen,
    valores_numero,
)
from criterios.vocabulario import compatibles, normalizar, terminos, vocabulario_de_familia

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
# An empty description: the title again, or fewer content words than this. The shortest
# reference description has 4 ("Botella isotérmica de acero inoxidable."), the candidates
# people call empty 2 or 3 (docs/calidad.md).
MIN_PALABRAS_DESCRIPCION = 4

_WORD_RE = re.compile(r"[^\W\d_]+", re.UNICODE)
_TOKEN_RE = re.compile(r"\S+")
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


def _proveedor(origen: Mapping[str, Any]) -> Mapping[str, Any]:
    """The supplier's ficha of an origin, or an empty one."""
    proveedor = origen.get("ficha_proveedor") or {}
    return proveedor if isinstance(proveedor, Mapping) else {}


def _atributos(datos: Mapping[str, Any]) -> dict[str, str]:
    """Attributes as text; a malformed map counts as none."""
    atributos = datos.get("atributos")
    if not isinstance(atributos, Mapping):
        return {}
    return {str(k): "" if v is None else str(v) for k, v in atributos.items()}


def textos_de_origen(origen: Mapping[str, Any]) -> list[str]:
    """Every text of the origin: sku, supplier title, description, attribute values, cifras."""
    proveedor = _proveedor(origen)
    textos = [str(origen.get("sku") or ""), str(proveedor.get("titulo") or "")]
    textos += [str(proveedor.get("descripcion") or "")]
    textos += [f"{k} {v}" for k, v in _atributos(proveedor).items()]
    cifras = origen.get("cifras")
    if isinstance(cifras, Mapping):
        textos += [f"{k} {v}" for k, v in cifras.items()]
    return textos


def _textos_de_ficha(ficha: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Title and description, named as a detail names them."""
    return [
        ("título", str(ficha.get("titulo") or "")),
        ("descripción", str(ficha.get("descripcion") or "")),
    ]


# -- C08: Spanish -------------------------------------------------------------------------------


@cache
def _identificador() -> Any:
    """py3langid's model restricted to ``IDIOMAS``; loaded once (about 0.1 s)."""
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_pickled_model(MODEL_FILE, norm_probs=True)
    ident.set_languages(list(IDIOMAS))
    return ident


def sin_nombres(texto: str, nombres: Iterable[str] = ()) -> str:
    """The text without what is not language: codes, numbers, names and shouted words.

    A token with a digit (X2, 5.3), a word in capitals (USB), a capitalized word inside a
    sentence (Runner, Bluetooth) and any word of ``nombres`` (the origin's brand and model)
    are taken out, so "Zapatilla Runner X2" is judged on "Zapatilla".
    """
    iniciales = {m.start(1) for m in _SENTENCE_START_RE.finditer(texto)}
    excluidas = {normalizar(n) for nombre in nombres for n in _WORD_RE.findall(nombre)}
    quedan = []
    for match in _TOKEN_RE.finditer(texto):
        token = match.group(0)
        palabra = "".join(_WORD_RE.findall(token))
        if any(c.isdigit() for c in token) or not palabra:
            continue
        if palabra.isupper() and len(palabra) > 1:
            continue
        if palabra[0].isupper() and match.start() not in iniciales:
            continue
        if normalizar(palabra) in excluidas:
            continue
        quedan.append(token)
    return " ".join(quedan)


def probabilidad_espanol(texto: str, nombres: Iterable[str] = ()) -> float | None:
    """P(Spanish) among ``IDIOMAS`` of the text without names; None if too little is left."""
    limpio = sin_nombres(texto, nombres)
    if sum(c.isalpha() for c in limpio) < MIN_LETRAS_IDIOMA:
        return None
    return float(dict(_identificador().rank(limpio)).get("es", 0.0))


def palabras_ajenas(texto: str, nombres: Iterable[str] = ()) -> float:
    """Share of the words (names and codes out) that simplemma's Spanish dictionary lacks."""
    from simplemma import is_known

    palabras = [w.lower() for w in _WORD_RE.findall(sin_nombres(texto, nombres))]
    if not palabras:
        return 0.0
    return sum(not is_known(w, lang="es") for w in palabras) / len(palabras)


def _nombres_de_origen(origen: Mapping[str, Any]) -> list[str]:
    """Brand and model values of the mapped origin: names that are in no language."""
    atributos = _atributos(_proveedor(origen))
    return [atributos[k] for k in ("marca", "modelo") if k in atributos]


def comprobar_idioma(ficha: Mapping[str, Any], origen: Mapping[str, Any]) -> dict[str, Any]:
    """C08: the title and the description are in Spanish.

    Foreign when py3langid (restricted to ``IDIOMAS``) gives Spanish less than
    ``MIN_PROB_ESPANOL`` and at least ``MIN_PALABRAS_AJENAS`` of the words are not Spanish
    words. Product names and codes do not count (``sin_nombres``); a text with too few
    letters left is not judged.
    """
    nombres = _nombres_de_origen(origen)
    titulo, descripcion = (t for _, t in _textos_de_ficha(ficha))
    hallazgos = []
    for campo, texto in (("título", titulo), ("descripción", descripcion)):
        prob = probabilidad_espanol(texto, nombres)
        if prob is None or prob >= MIN_PROB_ESPANOL:
            continue
        if palabras_ajenas(texto, nombres) >= MIN_PALABRAS_AJENAS:
            idioma = _idioma_probable(texto, nombres)
            hallazgos.append(f"{campo} en {idioma}, no en español: «{_corto(texto)}»")
    if not hallazgos:
        return _resultado("")
    return _resultado("; ".join(hallazgos) + ". Tradúcelo al español; marca y modelo se quedan")


_NOMBRE_IDIOMA = {"en": "inglés", "pt": "portugués", "fr": "francés", "es": "español"}


def _idioma_probable(texto: str, nombres: Iterable[str]) -> str:
    """The language name of the identifier's first choice, for the detail."""
    codigo, _ = _identificador().classify(sin_nombres(texto, nombres))
    return _NOMBRE_IDIOMA.get(str(codigo), str(codigo))


# -- C09: contradicted attributes --------------------------------------------------------------

# House keys whose values the text may state ("negra" for color: negro).
CLAVES_EN_TEXTO = ("color", "genero")


def _terminos_en(texto: str, clave: str) -> set[str]:
    """House values of ``clave`` named in a text, longest spelling first ("azul marino")."""
    norma = " " + " ".join(_WORD_RE.findall(normalizar(texto))) + " "
    hallados: set[str] = set()
    for alias, casa in sorted(terminos(clave).items(), key=lambda x: -len(x[0])):
        patron = " " + " ".join(_WORD_RE.findall(alias)) + " "
        if patron.strip() and patron in norma:
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
    """C09: no attribute, and no colour or gender in the text, contradicts the mapped origin.

    An attribute is compared with the origin's attribute of the same house key. In the title
    and the description, a colour or a gender is a contradiction when the origin's attribute
    names another and nothing in the origin (its text included, in any language) names it.
    """
    del_origen = _atributos(_proveedor(origen))
    hallazgos = [
        f"atributo {clave}: «{_corto(valor)}» y el origen dice «{_corto(del_origen[clave])}»"
        for clave, valor in _atributos(ficha).items()
        if clave in del_origen and _contradice(clave, valor, del_origen[clave])
    ]
    texto_origen = " ".join(textos_de_origen(origen))
    for clave in CLAVES_EN_TEXTO:
        if clave not in del_origen:
            continue
        esperados = _terminos_en(del_origen[clave], clave)
        respaldados = esperados | _terminos_en(texto_origen, clave)
        if not esperados:
            continue
        for campo, texto in _textos_de_ficha(ficha):
            otros = _terminos_en(texto, clave) - respaldados
            otros = {o for o in otros if not _compatibles(clave, {o}, respaldados)}
            if otros:
                hallazgos.append(
                    f"{campo} dice «{sorted(otros)[0]}» y el {clave} del origen es "
                    f"«{del_origen[clave]}»"
                )
    if not hallazgos:
        return _resultado("")
    return _resultado("contradice el origen: " + "; ".join(hallazgos) + ". Usa el valor del origen")


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
        return _resultado("")  # C02 already fails an empty description
    if _WORD_RE.findall(normalizar(descripcion)) == _WORD_RE.findall(normalizar(titulo)):
        return _resultado(
            "la descripción repite el título. Di qué es, para qué sirve y sus rasgos del origen"
        )
    if len(contenido) < MIN_PALABRAS_DESCRIPCION:
        return _resultado(
            f"descripción sin contenido: {len(contenido)} palabras con contenido (mínimo "
            f"{MIN_PALABRAS_DESCRIPCION}). Di qué es, para qué sirve y sus rasgos del origen"
        )
    return _resultado("")


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
    for campo, texto in _textos_de_ficha(ficha):
        resto = texto
        for cifra in cifras_en_texto(texto):
            resto = resto.replace(cifra.texto, " ")
            if not respaldada(cifra, respaldo):
                sin_respaldo.append(f"«{cifra.texto}» ({campo})")
        for numero in NUMBER_RE.findall(resto):
            if not valores_numero(numero) & del_origen:
                sin_respaldo.append(f"«{numero}» ({campo})")
    if not sin_respaldo:
        return _resultado("")
    return _resultado("números que el origen no da: " + ", ".join(sin_respaldo[:4]) + ". Quítalos")


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
    texto = ". ".join(t for _, t in _textos_de_ficha(ficha))  # the description starts a sentence
    lemas = [_lema(w) for w in palabras_de_contenido(sin_nombres(texto)) if len(w) > 2]
    if not lemas:
        return {"proporcion": None, "palabras": []}
    ajenas = [w for w in lemas if w not in conocidas]
    return {"proporcion": round(len(ajenas) / len(lemas), 4), "palabras": sorted(set(ajenas))}


# -- shared -------------------------------------------------------------------------------------


def _corto(texto: str, maximo: int = 40) -> str:
    """Quoted fragments stay short so several fit in one detail."""
    texto = " ".join(texto.split())
    return texto if len(texto) <= maximo else texto[: maximo - 1] + "…"


def _resultado(detalle: str) -> dict[str, Any]:
    """A check's result as ``criterios.comprobaciones`` shapes it (detail cut at 200)."""
    from criterios.comprobaciones import _result

    return _result(detalle)
