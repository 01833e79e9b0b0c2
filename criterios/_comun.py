"""Helpers shared by the code checks (``criterios.comprobaciones`` and ``criterios.fidelidad``):
how a result is shaped, how a fragment is quoted, and how a ficha's texts are read.

They live below both modules so neither imports the other for them: the two had their own
copies (``_short``/``_corto``, ``_attributes``/``_atributos``…) and ``fidelidad`` imported
``comprobaciones`` back for the result, a circle. Pure functions, standard library only.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from typing import Any

from esquemas.constantes import MAX_DETALLE

# Quoted fragments stay this short so several fit in one 200-character detail.
MAX_FRAGMENT = 40

# The checks cache what they read many times per attempt and on every attempt of a ficha
# (issue 33): a text's readings, and an origin's. The bounds keep a long-running worker's
# memory flat and hold the fichas in flight up to FICHAS_CONCURRENCIA = 256 (32 by default);
# above that an entry may be dropped between two attempts, which costs CPU, never a result.
TEXTOS_EN_CACHE = 1024
ORIGENES_EN_CACHE = 256


def result(detalle: str) -> dict[str, Any]:
    """A check's result; an empty detail means it passed. Long details are cut at 200."""
    if len(detalle) > MAX_DETALLE:
        detalle = detalle[: MAX_DETALLE - 1] + "…"
    return {"ok": not detalle, "detalle": detalle}


def short(texto: str, maximo: int = MAX_FRAGMENT) -> str:
    """A quoted fragment on one line and at most ``maximo`` characters, so several fit in one
    detail."""
    texto = " ".join(texto.split())
    return texto if len(texto) <= maximo else texto[: maximo - 1] + "…"


def nfc(texto: str) -> str:
    """Composed Unicode form: the same visible text always has the same length."""
    return unicodedata.normalize("NFC", texto)


def text(valor: Any) -> str:
    """NFC text of a field, so lengths and patterns see "ñ" as one character; None is empty."""
    return nfc("" if valor is None else str(valor))


def attributes(datos: Mapping[str, Any]) -> dict[str, str]:
    """The ``atributos`` of a ficha or a supplier's ficha as NFC text; a missing or malformed
    map counts as no attributes."""
    atributos = datos.get("atributos")
    if not isinstance(atributos, Mapping):
        return {}
    return {str(k): text(v) for k, v in atributos.items()}


def title_and_description(ficha: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The free texts of a ficha, title and description, named as a detail names them."""
    return [
        ("título", text(ficha.get("titulo"))),
        ("descripción", text(ficha.get("descripcion"))),
    ]


def supplier(origen: Mapping[str, Any]) -> Mapping[str, Any]:
    """The supplier's ficha of an origin, or an empty one when it is missing or malformed."""
    proveedor = origen.get("ficha_proveedor") or {}
    return proveedor if isinstance(proveedor, Mapping) else {}
