"""Validation messages in Spanish, for the people who read the DLQ.

The DLQ is read by the catalogue team, in Spanish; pydantic and ``json`` speak English. Each
pydantic error type the event schema can raise gets a Spanish sentence built from the error's
own context (limits, expected values); an unknown type still gets a Spanish sentence naming
it, never an English one. The field travels apart, in ``campo``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import ErrorDetails

_PYDANTIC: dict[str, Callable[[dict[str, Any]], str]] = {
    "missing": lambda c: "falta el campo, que es obligatorio",
    "int_parsing": lambda c: "debe ser un número entero",
    "int_type": lambda c: "debe ser un número entero",
    "int_from_float": lambda c: "debe ser un número entero, sin decimales",
    "float_parsing": lambda c: "debe ser un número",
    "float_type": lambda c: "debe ser un número",
    "finite_number": lambda c: "debe ser un número finito",
    "string_type": lambda c: "debe ser un texto",
    "string_too_short": lambda c: f"debe tener al menos {c.get('min_length')} caracteres",
    "string_too_long": lambda c: f"debe tener como máximo {c.get('max_length')} caracteres",
    "string_pattern_mismatch": lambda c: f"no sigue el formato {c.get('pattern')}",
    "greater_than_equal": lambda c: f"debe ser mayor o igual que {c.get('ge')}",
    "greater_than": lambda c: f"debe ser mayor que {c.get('gt')}",
    "less_than_equal": lambda c: f"debe ser menor o igual que {c.get('le')}",
    "less_than": lambda c: f"debe ser menor que {c.get('lt')}",
    "dict_type": lambda c: "debe ser un objeto JSON",
    "model_type": lambda c: "debe ser un objeto JSON",
    "model_attributes_type": lambda c: "debe ser un objeto JSON",
    "list_type": lambda c: "debe ser una lista",
    "too_long": lambda c: f"debe tener como máximo {c.get('max_length')} elementos",
    "bool_type": lambda c: "debe ser verdadero o falso",
    "bool_parsing": lambda c: "debe ser verdadero o falso",
    "datetime_type": lambda c: "debe ser una fecha y hora RFC 3339",
    "datetime_parsing": lambda c: "debe ser una fecha y hora RFC 3339, con zona horaria",
    "datetime_from_date_parsing": lambda c: "debe ser una fecha y hora RFC 3339, con zona horaria",
    "timezone_aware": lambda c: "la fecha y hora debe llevar zona horaria",
    "literal_error": lambda c: f"debe ser uno de {c.get('expected')}",
    "enum": lambda c: f"debe ser uno de {c.get('expected')}",
    "value_error": lambda c: str(c.get("error", "valor no válido")),
}

_JSON: tuple[tuple[str, str], ...] = (
    ("Unexpected UTF-8 BOM", "marca BOM UTF-8 al principio del valor"),
    ("Expecting property name enclosed in double quotes", "se esperaba un nombre entre comillas"),
    ("Expecting value", "se esperaba un valor"),
    ("Expecting ',' delimiter", "falta una coma"),
    ("Expecting ':' delimiter", "faltan los dos puntos tras un nombre"),
    ("Unterminated string", "texto sin comillas de cierre"),
    ("Invalid control character", "carácter de control dentro de un texto"),
    ("Invalid \\escape", "secuencia de escape no válida"),
    ("Invalid \\uXXXX escape", "secuencia \\u no válida"),
    ("Extra data", "hay más datos después del JSON"),
)


def mensaje_pydantic(error: ErrorDetails) -> str:
    """One pydantic error in Spanish."""
    plantilla = _PYDANTIC.get(error["type"])
    contexto = dict(error.get("ctx") or {})
    if plantilla is None:
        return f"valor no válido ({error['type']})"
    return plantilla(contexto)


def mensaje_json(msg: str) -> str:
    """One ``json`` decoder message in Spanish (the position is added by the caller)."""
    for ingles, espanol in _JSON:
        if msg.startswith(ingles):
            return espanol
    return "sintaxis no válida"
