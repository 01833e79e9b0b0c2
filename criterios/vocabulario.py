"""The house vocabulary: supplier attribute keys and values mapped to the house's Spanish ones.

``cor: preto`` in the origin becomes ``color: negro`` before the generator sees it, and the
checks and the evaluator compare the ficha with the same mapped origin. The data,
``criterios/datos/vocabulario_v1.json``, are part of ``CRITERIOS_VERSION``. Invariants: an
unknown key is kept as written and listed (``Mapeo.claves_desconocidas``); a value not wholly
known is kept as written; mapping is idempotent; pure functions, no I/O after the first load.
Each field of the data, with examples and what was measured: docs/calidad.md, "El vocabulario
de la casa".
"""

from __future__ import annotations

import copy
import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any

from criterios.cifras import UNIDADES, cifras_en_texto

ARCHIVO_VOCABULARIO = "vocabulario_v1.json"
_KEY_SEPARATORS_RE = re.compile(r"[\s\-./]+")
_WORD_RE = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?|\d+(?:[.,]\d+)?%?|\S", re.UNICODE)
_SQUARE_RE = re.compile(r"^\s*(\d+(?:[.,]\d+)?)\s*[x×]\s*(\d+(?:[.,]\d+)?)\s*$")


@dataclass(frozen=True)
class Mapeo:
    """A mapped origin and the supplier keys the vocabulary does not know (kept as written)."""

    origen: dict[str, Any]
    claves_desconocidas: tuple[str, ...]


# The code checks normalize the same words over and over: every word of a ficha and of its
# origin, for several checks, on every attempt (about 180 calls per attempt, a quarter of the
# checks' CPU before this cache). Bounded, so a long-running worker's memory stays flat.
_NORMALIZADAS = 1 << 16


@lru_cache(maxsize=_NORMALIZADAS)
def normalizar(texto: str) -> str:
    """Lower case without accents and with single spaces: how aliases are compared.

    Pure, hence cached (``_NORMALIZADAS`` entries)."""
    sin_tildes = unicodedata.normalize("NFKD", texto.casefold())
    sin_tildes = "".join(c for c in sin_tildes if not unicodedata.combining(c))
    return " ".join(sin_tildes.replace("’", "'").split())


def _normalizar_clave(clave: str) -> str:
    """Keys compare as identifiers: "Battery life (h)" and "battery_life_h" are one key."""
    return _KEY_SEPARATORS_RE.sub("_", normalizar(clave).replace("(", "").replace(")", ""))


@cache
def datos_vocabulario() -> dict[str, Any]:
    """The packaged vocabulary as JSON (read once); also hashed into ``CRITERIOS_VERSION``."""
    texto = files("criterios").joinpath("datos", ARCHIVO_VOCABULARIO).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(texto)
    return data


@cache
def _alias_de_claves(familia: str) -> dict[str, str]:
    """Normalized alias -> house key, with the family's own aliases winning."""
    datos = datos_vocabulario()
    alias = {
        _normalizar_clave(a): casa
        for casa, variantes in datos["claves"].items()
        for a in [casa, *variantes]
    }
    for casa, variantes in datos["claves_por_familia"].get(familia, {}).items():
        alias.update({_normalizar_clave(a): casa for a in variantes})
    return alias


@cache
def _alias_de_valores(clave: str) -> dict[str, str]:
    """Normalized spelling -> house value, for the values of one house key."""
    valores = datos_vocabulario()["valores"].get(clave, {})
    return {normalizar(a): casa for casa, variantes in valores.items() for a in [casa, *variantes]}


@cache
def _alias_de_palabras() -> dict[str, str]:
    """Normalized word -> house word, for values translated word by word."""
    palabras = datos_vocabulario()["palabras"]
    return {normalizar(a): casa for casa, variantes in palabras.items() for a in [casa, *variantes]}


def clave_de_casa(clave: str, familia: str = "") -> str | None:
    """The house key of a supplier key, or None if the vocabulary does not know it."""
    return _alias_de_claves(familia).get(_normalizar_clave(clave))


def terminos(clave: str) -> dict[str, str]:
    """Every known spelling of the values of a house key -> its house value (normalized keys)."""
    return dict(_alias_de_valores(clave))


def compatibles(clave: str, valor: str) -> frozenset[str]:
    """House values that do not contradict ``valor`` besides itself ("infantil" and "niño").

    Declared one way in ``compatibles`` and read both ways.
    """
    tabla = datos_vocabulario().get("compatibles", {}).get(clave, {})
    hacia = set(tabla.get(valor, []))
    desde = {general for general, concretos in tabla.items() if valor in concretos}
    return frozenset(hacia | desde | {valor})


def claves_en_texto() -> tuple[str, ...]:
    """House keys whose values are a closed set a title or a description can name (colour,
    gender, material, composition, connectivity, closure): C09 reads them in the text. Sizes,
    yes/no and "no aplica" are left out, because their spellings ("g", "no") are everyday words.
    """
    return tuple(datos_vocabulario().get("claves_en_texto", ()))


def mixtos(clave: str) -> frozenset[str]:
    """House values that stand for several values of their key ("multicolor"): an origin that
    says one supports any value of that key in the text."""
    return frozenset(datos_vocabulario().get("mixtos", {}).get(clave, ()))


def vocabulario_de_familia(familia: str) -> frozenset[str]:
    """Common Spanish words of a family's fichas and every house value and word, normalized."""
    return _vocabulario_de_familia(familia)


@lru_cache(maxsize=64)
def _vocabulario_de_familia(familia: str) -> frozenset[str]:
    """Built once per family and process: C08 asks for it at every check of every attempt,
    and normalizing every house value each time was an eighth of ``comprobar`` (issue 33).
    Bounded, as a family name the tables do not know still gets an entry."""
    datos = datos_vocabulario()
    palabras = set(normalizar(datos["familias"].get(familia, "")).split())
    for valores in datos["valores"].values():
        for casa in valores:
            palabras.update(normalizar(casa).split())
    palabras.update(normalizar(p) for p in datos["palabras"])
    return frozenset(palabras)


def mapear_valor(clave: str, valor: str) -> str:
    """A supplier value in the house's Spanish, for a house key; unknown values as written."""
    unidad = datos_vocabulario()["unidades_de_clave"].get(clave)
    if unidad is not None:
        return _en_unidad(valor, unidad)
    completo = _alias_de_valores(clave).get(normalizar(valor))
    if completo is not None:
        return completo
    return _palabra_a_palabra(clave, valor)


def _palabra_a_palabra(clave: str, valor: str) -> str:
    """Translate each word when every word is known; one unknown word keeps the value intact.

    A half-translated value ("algodón biologique") reads worse than the supplier's own, and
    the generator still sees the original in the description.
    """
    valores = _alias_de_valores(clave)
    palabras = _alias_de_palabras()
    tokens = _WORD_RE.findall(valor)
    traducidas: list[str] = []
    for token in tokens:
        norma = normalizar(token)
        if not any(c.isalpha() for c in token):
            traducidas.append(token)
        elif norma in palabras:
            traducidas.append(palabras[norma])
        elif norma in valores:
            traducidas.append(valores[norma])
        else:
            return valor
    return _juntar(traducidas)


def _juntar(tokens: list[str]) -> str:
    """Words back into a value: no space before punctuation or after an opening bracket."""
    texto = ""
    for token in tokens:
        pegado = token in ",.;:)%" or texto.endswith("(") or not texto
        texto += token if pegado else " " + token
    return texto


def _en_unidad(valor: str, unidad: str) -> str:
    """A figure in the key's unit as a plain number ("75 cl" -> "750"); else as written.

    "28x28" (a square size) is one figure. A value without a unit is already in the key's unit.
    """
    cuadrado = _SQUARE_RE.match(valor)
    if cuadrado and cuadrado.group(1) == cuadrado.group(2):
        return cuadrado.group(1)
    cifras = cifras_en_texto(valor)
    if len(cifras) != 1:
        return _palabra_a_palabra_libre(valor)
    magnitud, factor = UNIDADES[unidad]
    cifra = cifras[0]
    if cifra.magnitud != magnitud or len(cifra.numeros) != 1 or len(cifra.numeros[0]) != 1:
        return valor  # another magnitude, a range, or an ambiguous "1.200": as written
    (numero,) = cifra.numeros[0]
    return _numero(numero * cifra.factor / factor)


def _palabra_a_palabra_libre(valor: str) -> str:
    """A unit key's value that is not a figure ("n/a"): the not-applicable spellings only."""
    return _alias_de_valores("autonomia_h").get(normalizar(valor), valor)


def _numero(valor: float) -> str:
    """A number as the house writes it: no trailing zeros, decimal comma."""
    texto = f"{round(valor, 2):.2f}".rstrip("0").rstrip(".")
    return texto.replace(".", ",")


def mapear_atributos(
    atributos: Mapping[str, Any], familia: str
) -> tuple[dict[str, Any], list[str]]:
    """Supplier attributes under house keys with house values; unknown keys kept and listed.

    When two supplier keys map to one house key (``color`` and ``colour``) the first wins and
    the second is kept under its own name, so nothing is lost.
    """
    mapeados: dict[str, Any] = {}
    desconocidas: list[str] = []
    for clave, valor in atributos.items():
        casa = clave_de_casa(str(clave), familia)
        if casa is None or casa in mapeados:
            desconocidas += [str(clave)] if casa is None else []
            mapeados[str(clave)] = valor
            continue
        mapeados[casa] = mapear_valor(casa, valor) if isinstance(valor, str) else valor
    return mapeados, desconocidas


def mapear_origen(origen: Mapping[str, Any]) -> Mapeo:
    """A copy of the origin with its supplier attributes in the house vocabulary.

    Idempotent: a mapped origin maps to itself, so the graph may map at every node.
    """
    mapeado: dict[str, Any] = copy.deepcopy(dict(origen))
    proveedor = mapeado.get("ficha_proveedor")
    if not isinstance(proveedor, dict) or not isinstance(proveedor.get("atributos"), Mapping):
        return Mapeo(mapeado, ())
    atributos, desconocidas = mapear_atributos(
        proveedor["atributos"], str(mapeado.get("familia", ""))
    )
    proveedor["atributos"] = atributos
    return Mapeo(mapeado, tuple(desconocidas))
