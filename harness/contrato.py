"""Checking what the processor writes against the contract, for tests of every package.

Each value is validated twice: against the committed JSON Schema in ``contrato/esquemas/`` (what
subscribers validate against) and against the pydantic model, which also refuses fields the
contract does not name. A Kafka record's headers must name its schema and repeat the SKU,
version and ``event_id`` of its value.

Typical use::

    from harness.contrato import validar_registros, validar_salidas_procesar

    validar_registros(await read_all(bootstrap, topics.publicadas), "FichaPublicada")
    validar_salidas_procesar(salidas)          # the lines ``fichas procesar`` printed
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

import jsonschema

from esquemas.constantes import (
    CABECERA_ESQUEMA,
    CABECERA_ESQUEMA_VERSION,
    CABECERA_EVENT_ID,
    CABECERA_SKU,
    CABECERA_VERSION,
    DESTINO_DLQ,
    DESTINO_PUBLICADAS,
    DESTINO_REVISION,
    ESQUEMA_VERSION,
)
from esquemas.json_schema import DIRECTORIO, MODELOS

# The schema of each destination of ``fichas procesar`` output.
ESQUEMA_DE_DESTINO: Mapping[str, str] = {
    DESTINO_PUBLICADAS: "FichaPublicada",
    DESTINO_REVISION: "FichaEnRevision",
    DESTINO_DLQ: "EventoRechazado",
}


@cache
def validador(nombre: str) -> jsonschema.Draft7Validator:
    """The draft-07 validator of one committed schema file, with format checks."""
    esquema = json.loads((DIRECTORIO / f"{nombre}.json").read_text(encoding="utf-8"))
    jsonschema.Draft7Validator.check_schema(esquema)
    return jsonschema.Draft7Validator(
        esquema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER
    )


def validar(nombre: str, valor: Any) -> None:
    """Fail with every schema error of ``valor``, then with the model's, if any."""
    errores = sorted(validador(nombre).iter_errors(valor), key=lambda e: list(e.absolute_path))
    if errores:
        detalle = "; ".join(f"{list(e.absolute_path)}: {e.message}" for e in errores[:5])
        raise AssertionError(f"not a valid {nombre}: {detalle}\n{valor!r:.500}")
    MODELOS[nombre].model_validate(valor)


def validar_salidas_procesar(salidas: Iterable[Mapping[str, Any]]) -> int:
    """Validate ``fichas procesar`` lines (``{"destino", "evento"}``); return how many."""
    cuantas = 0
    for salida in salidas:
        validar(ESQUEMA_DE_DESTINO[salida["destino"]], salida["evento"])
        cuantas += 1
    return cuantas


def cabeceras(registro: Mapping[str, Any]) -> dict[str, str]:
    """The headers of a record read by ``harness.topicos``, as text (last value wins)."""
    return {clave: bytes(valor).decode("utf-8") for clave, valor in registro.get("headers", ())}


def validar_registros(registros: Iterable[Mapping[str, Any]], nombre: str) -> int:
    """Validate records read by ``harness.topicos`` (value and headers); return how many."""
    cuantos = 0
    for registro in registros:
        valor = registro["value"]
        validar(nombre, valor)
        _validar_cabeceras(cabeceras(registro), nombre, valor)
        cuantos += 1
    return cuantos


def _validar_cabeceras(recibidas: dict[str, str], nombre: str, valor: Mapping[str, Any]) -> None:
    """Schema name and version on every record; SKU, version and event_id when the value has."""
    esperadas = {CABECERA_ESQUEMA: nombre, CABECERA_ESQUEMA_VERSION: ESQUEMA_VERSION}
    if "sku" in valor:
        esperadas |= {
            CABECERA_SKU: valor["sku"],
            CABECERA_VERSION: str(valor["version"]),
            CABECERA_EVENT_ID: valor["event_id"],
        }
    distintas = {k: (v, recibidas.get(k)) for k, v in esperadas.items() if recibidas.get(k) != v}
    assert not distintas, f"headers (expected, got): {distintas}"
