"""Figures with a unit (C07): find them in text, convert them, and match them against the origin.

A figure is a number next to a unit ("280 g", "1,5 l", "1.200 mAh", "30 x 20 cm"). Each unit
belongs to a magnitude and has a factor to that magnitude's base unit, so "0,28 kg" and
"280 g" compare equal. Units whose conversion would be a guess (ounces: weight or volume?)
form a magnitude of their own and only match themselves.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from criterios._comun import ORIGENES_EN_CACHE

# spelling (lower case, no spaces) -> (magnitude, factor to the magnitude's base unit)
UNIDADES: dict[str, tuple[str, float]] = {
    **dict.fromkeys(("mg",), ("masa", 0.001)),
    **dict.fromkeys(("g", "gr", "grs", "gramo", "gramos", "gram", "grams"), ("masa", 1.0)),
    **dict.fromkeys(
        ("kg", "kilo", "kilos", "kilogramo", "kilogramos", "kilogram", "kilograms"),
        ("masa", 1000.0),
    ),
    **dict.fromkeys(("lb", "lbs"), ("masa", 453.59237)),
    "oz": ("onzas", 1.0),
    "ml": ("volumen", 1.0),
    "cl": ("volumen", 10.0),
    "dl": ("volumen", 100.0),
    **dict.fromkeys(
        ("l", "litro", "litros", "liter", "liters", "litre", "litres"), ("volumen", 1000.0)
    ),
    **dict.fromkeys(("mm", "milímetros", "milimetros", "millimeters"), ("longitud", 1.0)),
    **dict.fromkeys(("cm", "centímetros", "centimetros", "centimeters"), ("longitud", 10.0)),
    **dict.fromkeys(("m", "metro", "metros", "meter", "meters", "metres"), ("longitud", 1000.0)),
    "km": ("longitud", 1_000_000.0),
    **dict.fromkeys(("pulgada", "pulgadas", "pulg", "inch", "inches", "″"), ("longitud", 25.4)),
    **dict.fromkeys(("s", "seg", "sec", "segundos", "seconds"), ("tiempo", 1.0)),
    **dict.fromkeys(("min", "mins", "minuto", "minutos", "minute", "minutes"), ("tiempo", 60.0)),
    **dict.fromkeys(("h", "hr", "hrs", "hora", "horas", "hour", "hours"), ("tiempo", 3600.0)),
    **dict.fromkeys(("día", "días", "dia", "dias", "day", "days"), ("tiempo", 86400.0)),
    **dict.fromkeys(("semana", "semanas", "week", "weeks"), ("tiempo", 604800.0)),
    **dict.fromkeys(("mes", "meses", "month", "months"), ("calendario", 1.0)),
    **dict.fromkeys(("año", "años", "anos", "ans", "year", "years"), ("calendario", 12.0)),
    "mw": ("potencia", 0.001),
    "w": ("potencia", 1.0),
    "kw": ("potencia", 1000.0),
    "wh": ("energía", 1.0),
    "kwh": ("energía", 1000.0),
    "mah": ("carga", 1.0),
    "ah": ("carga", 1000.0),
    "ma": ("corriente", 1.0),
    "v": ("tensión", 1.0),
    "hz": ("frecuencia", 1.0),
    "khz": ("frecuencia", 1e3),
    "mhz": ("frecuencia", 1e6),
    "ghz": ("frecuencia", 1e9),
    "db": ("sonido", 1.0),
    "kb": ("datos", 1e3),
    "mb": ("datos", 1e6),
    "gb": ("datos", 1e9),
    "tb": ("datos", 1e12),
    "%": ("porcentaje", 1.0),
    **dict.fromkeys(("°c", "ºc"), ("temperatura_c", 1.0)),
    **dict.fromkeys(("°f", "ºf"), ("temperatura_f", 1.0)),
}

# Unit suffixes of attribute and `cifras` keys ("capacidad_ml", "peso_g"); "pct" is "%".
SUFIJOS: dict[str, tuple[str, float]] = {**UNIDADES, "pct": UNIDADES["%"]}

# Upper-case spellings that are not units after a number: "5G" network, "talla 38 S", "3M".
NOT_UNITS = frozenset({"G", "M", "S"})

NUMBER = r"\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?"
_SEPARATOR = r"\s?[x×–-]\s?|\s(?:a|to|hasta)\s"
_WORD_UNITS = sorted((u for u in UNIDADES if u[-1].isalnum()), key=len, reverse=True)
_SYMBOL_UNITS = [u for u in UNIDADES if not u[-1].isalnum()]
_UNIT = (
    "(?:"
    + "|".join(re.escape(u) for u in _WORD_UNITS)
    + r")(?!\w)|°\s?[cf](?!\w)|º\s?[cf](?!\w)|"
    + "|".join(re.escape(u) for u in _SYMBOL_UNITS)
)
FIGURE_RE = re.compile(
    rf"(?<![\w.,])(?P<numeros>(?:{NUMBER})(?:(?:{_SEPARATOR})(?:{NUMBER}))*)\s?(?P<unidad>{_UNIT})",
    re.IGNORECASE,
)
NUMBER_RE = re.compile(rf"(?<![\d.,])(?:{NUMBER})(?![\d.,]\d)")
ONLY_NUMBER_RE = re.compile(rf"\s*(?:{NUMBER})\s*")


@dataclass(frozen=True)
class Cifra:
    """A figure as written: its text, its unit's magnitude and factor, and its numbers.

    ``numeros`` holds one set of candidate readings per written number ("30 x 20 cm" has
    two numbers); values are as written, multiply by ``factor`` for the base unit. An empty
    ``magnitud`` marks a bare origin number, which backs the same number in any unit.
    """

    texto: str
    magnitud: str
    factor: float
    numeros: tuple[frozenset[float], ...]

    def valores(self) -> frozenset[float]:
        """Every candidate reading in the base unit, for indexing the origin."""
        return frozenset(v * self.factor for lecturas in self.numeros for v in lecturas)


def valores_numero(texto: str) -> frozenset[float]:
    """Candidate values of a written number: "1.200" may be 1200 (Spanish) or 1.2 (English).

    One separator followed by exactly three digits is ambiguous, so both readings are kept;
    repeated separators are thousands; with two kinds, the last one is the decimal mark.
    """
    separators = re.findall(r"[.,]", texto)
    if not separators:
        return frozenset({float(texto)})
    if len(set(separators)) == 2:
        decimal = separators[-1]
        thousands = "," if decimal == "." else "."
        return frozenset({float(texto.replace(thousands, "").replace(decimal, "."))})
    if len(separators) > 1:
        return frozenset({float(re.sub(r"[.,]", "", texto))})
    entero, fraccion = re.split(r"[.,]", texto)
    decimal_value = float(f"{entero}.{fraccion}")
    if len(fraccion) == 3 and entero != "0":
        return frozenset({decimal_value, float(entero + fraccion)})
    return frozenset({decimal_value})


def _cifra(texto: str, numeros: str, magnitud: str, factor: float) -> Cifra:
    """Build a figure from the numbers part of a match and its unit's magnitude."""
    lecturas = tuple(valores_numero(n) for n in NUMBER_RE.findall(numeros))
    return Cifra(texto, magnitud, factor, lecturas)


def cifras_en_texto(texto: str) -> list[Cifra]:
    """Every number-with-unit in a text; "30 x 20 cm" and "100-240 V" give one figure each."""
    cifras = []
    for match in FIGURE_RE.finditer(texto):
        if match["unidad"] in NOT_UNITS:
            continue
        magnitud, factor = UNIDADES[re.sub(r"\s+", "", match["unidad"]).lower()]
        numeros = _numbers_with_unit(match["numeros"], magnitud)
        cifras.append(_cifra(match.group(0), numeros, magnitud, factor))
    return cifras


def _numbers_with_unit(numeros: str, magnitud: str) -> str:
    """Which numbers the unit applies to: "30 x 20 cm" is two lengths, but "2 x 500 ml" is
    a count times one volume, so outside lengths only the number after the last "x" counts."""
    if magnitud == "longitud":
        return numeros
    return re.split(r"[x×]", numeros)[-1]


def key_unit(clave: str) -> str | None:
    """Unit declared by a key suffix ("capacidad_ml" -> "ml"), or None when there is none."""
    if "_" not in clave:
        return None
    suffix = clave.rsplit("_", 1)[1].lower()
    return suffix if suffix in SUFIJOS else None


def cifras_en_valor(clave: str, valor: str) -> list[Cifra]:
    """Figures in an attribute value; plain numbers take the unit of the key's suffix.

    "capacidad_ml": "750" is 750 ml. A value that writes its own unit ("750 ml") is read as
    written, and then the key's suffix is not applied on top.
    """
    cifras = cifras_en_texto(valor)
    unidad = key_unit(clave)
    if cifras or unidad is None or not NUMBER_RE.search(valor):
        return cifras
    magnitud, factor = SUFIJOS[unidad]
    return [_cifra(f"{valor.strip()} ({clave})", valor, magnitud, factor)]


def _bare(texto: str) -> Cifra | None:
    """A value that is only a number ("750"): its unit is unknown, so it backs any unit."""
    if not ONLY_NUMBER_RE.fullmatch(texto):
        return None
    return _cifra(texto.strip(), texto, "", 1.0)


@dataclass(frozen=True)
class Respaldo:
    """What the origin backs: base-unit values per magnitude, and bare numbers."""

    por_magnitud: Mapping[str, frozenset[float]]
    sueltos: frozenset[float]


def respaldo_de_origen(origen: Mapping[str, Any]) -> Respaldo:
    """Every figure the origin backs: supplier title, description, attributes, and ``cifras``.

    Lenient fallback: a supplier attribute value or a ``cifras`` value that is only a number,
    with no unit in the value nor in the key suffix, is kept as a bare number that backs a
    ficha figure with the same written number in any unit ("autonomia": "30" backs "30 h").
    Bare numbers inside the supplier's title or description do not count: too many of them
    are sizes or model numbers.
    """
    proveedor = origen.get("ficha_proveedor") or {}
    if not isinstance(proveedor, Mapping):
        proveedor = {}
    return _respaldo(
        str(proveedor.get("titulo") or ""),
        str(proveedor.get("descripcion") or ""),
        (*_items(proveedor.get("atributos")), *_items(origen.get("cifras"))),
    )


@lru_cache(maxsize=ORIGENES_EN_CACHE)
def _respaldo(titulo: str, descripcion: str, valores: tuple[tuple[str, str], ...]) -> Respaldo:
    """``respaldo_de_origen`` of the origin's texts, read once per origin: C07 and C11 ask for
    it on every attempt of a ficha."""
    cifras = cifras_en_texto(titulo) + cifras_en_texto(descripcion)
    for clave, valor in valores:
        cifras += _valor_con_respaldo(clave, valor)
    return _index(cifras)


def respaldo_de_cifras(cifras: Iterable[Cifra]) -> Respaldo:
    """What some figures back, as ``respaldada`` reads it (the origin's structured figures
    alone: ``criterios.citable``)."""
    return _index(cifras)


def _index(cifras: Iterable[Cifra]) -> Respaldo:
    """Group origin figures by magnitude so a ficha figure is compared only with its kind."""
    por_magnitud: dict[str, frozenset[float]] = {}
    sueltos: frozenset[float] = frozenset()
    for cifra in cifras:
        if cifra.magnitud:
            previos = por_magnitud.get(cifra.magnitud, frozenset())
            por_magnitud[cifra.magnitud] = previos | cifra.valores()
        else:
            sueltos |= cifra.valores()
    return Respaldo(por_magnitud, sueltos)


def _items(valores: Any) -> list[tuple[str, str]]:
    """Mapping items as strings; booleans and nulls are not figures and are skipped."""
    if not isinstance(valores, Mapping):
        return []
    return [
        (str(k), _as_text(v))
        for k, v in valores.items()
        if v is not None and not isinstance(v, bool)
    ]


def _as_text(valor: Any) -> str:
    """Numbers as text that parses back to the same value (280.0 -> "280")."""
    if isinstance(valor, float) and valor.is_integer():
        return str(int(valor))
    return str(valor)


def _valor_con_respaldo(clave: str, valor: str) -> list[Cifra]:
    """Figures of one origin value, falling back to a bare number when it has no unit."""
    cifras = cifras_en_valor(clave, valor)
    if cifras:
        return cifras
    bare = _bare(valor)
    return [bare] if bare else []


def respaldada(cifra: Cifra, respaldo: Respaldo) -> bool:
    """Backed when every written number has a reading the origin has, after conversion.

    "0,28 kg" is backed by "280 g"; "30 x 20 cm" needs both 30 cm and 20 cm in the origin.
    """
    valores = respaldo.por_magnitud.get(cifra.magnitud, frozenset())
    return all(
        any(
            _close_to_any(v * cifra.factor, valores) or _close_to_any(v, respaldo.sueltos)
            for v in lecturas
        )
        for lecturas in cifra.numeros
    )


def _close_to_any(valor: float, valores: frozenset[float]) -> bool:
    """Equal up to float noise: 0.28 * 1000 must equal 280."""
    return any(math.isclose(valor, v, rel_tol=1e-9, abs_tol=1e-9) for v in valores)
