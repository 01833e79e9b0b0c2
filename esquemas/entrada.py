"""Reading one raw input message into an ``EventoCambio``, or a precise rejection.

Order of checks follows cost and the contract's error codes: size first (never parse a
1 MiB value), then UTF-8 and JSON, then the schema, then the family. Each failure raises
``EventoInvalido`` carrying the contract's ``codigo`` and the offending field, so the caller
can route it to the DLQ and go on with the next message.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Collection
from typing import Any

from pydantic import ValidationError

from esquemas.constantes import MAX_MESSAGE_BYTES, CodigoRechazo, PayloadCodificacion
from esquemas.evento import EventoCambio
from esquemas.mensajes import mensaje_json, mensaje_pydantic
from esquemas.salidas import ErrorRechazo


class EventoInvalido(ValueError):
    """An input message that cannot become an ``EventoCambio``; never retried, sent to the DLQ."""

    def __init__(self, codigo: CodigoRechazo, mensaje: str, campo: str | None = None) -> None:
        super().__init__(f"{codigo}: {mensaje}" + (f" (campo {campo})" if campo else ""))
        self.codigo: CodigoRechazo = codigo
        self.mensaje = mensaje
        self.campo = campo

    def error(self) -> ErrorRechazo:
        """The contract's ``error`` object for the DLQ record."""
        return ErrorRechazo(codigo=self.codigo, mensaje=self.mensaje, campo=self.campo)


def leer_evento(raw: bytes | str | None, familias: Collection[str]) -> EventoCambio:
    """Parse and validate one message value; raise ``EventoInvalido`` with the contract's code."""
    data = _decode_json(raw)
    evento = _validate_schema(data)
    if evento.familia not in familias:
        raise EventoInvalido(
            "familia_desconocida",
            f"familia '{evento.familia}' no está en la tabla de familias "
            f"({', '.join(sorted(familias))})",
            "familia",
        )
    return evento


def _decode_json(raw: bytes | str | None) -> Any:
    """Size, encoding and JSON syntax: the checks that need no schema."""
    if raw is None:
        raise EventoInvalido("json_invalido", "el mensaje no tiene valor (tombstone)")
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    if len(data) > MAX_MESSAGE_BYTES:
        raise EventoInvalido(
            "demasiado_grande", f"{len(data)} bytes; el máximo es {MAX_MESSAGE_BYTES}"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EventoInvalido("json_invalido", f"no es UTF-8 válido: {exc.reason}") from exc
    try:
        return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant)
    except _AmbiguousJSON as exc:
        raise EventoInvalido("esquema_invalido", str(exc), exc.campo) from exc
    except RecursionError as exc:
        raise EventoInvalido("json_invalido", "JSON demasiado anidado") from exc
    except json.JSONDecodeError as exc:
        raise EventoInvalido(
            "json_invalido",
            f"JSON mal formado: {mensaje_json(exc.msg)} (línea {exc.lineno}, col {exc.colno})",
        ) from exc


class _AmbiguousJSON(ValueError):
    """Valid-looking JSON that two readers could understand differently."""

    def __init__(self, mensaje: str, campo: str | None) -> None:
        super().__init__(mensaje)
        self.campo = campo


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Refuse duplicate keys: which of two ``version`` values wins depends on the reader."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _AmbiguousJSON(f"clave JSON repetida: {key!r}", key)
        result[key] = value
    return result


def _no_constant(name: str) -> Any:
    """Refuse NaN and Infinity: they are not JSON, and no figure can be compared to them."""
    raise _AmbiguousJSON(f"{name} no es un número JSON válido", None)


def _validate_schema(data: Any) -> EventoCambio:
    """Pydantic validation, reporting the first failing field by its dotted path."""
    if not isinstance(data, dict):
        raise EventoInvalido("esquema_invalido", "el mensaje debe ser un objeto JSON")
    try:
        return EventoCambio.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        campo = ".".join(str(part) for part in first["loc"]) or None
        raise EventoInvalido("esquema_invalido", mensaje_pydantic(first), campo) from exc
    except RecursionError as exc:
        raise EventoInvalido("esquema_invalido", "valor demasiado anidado") from exc


def payload_texto(raw: bytes | str | None) -> tuple[str, PayloadCodificacion]:
    """The raw value for the DLQ record and how it is carried: text when UTF-8, else base64."""
    if raw is None:
        return "", "texto"
    if isinstance(raw, str):
        return raw, "texto"
    try:
        return raw.decode("utf-8"), "texto"
    except UnicodeDecodeError:
        return base64.b64encode(raw).decode("ascii"), "base64"
