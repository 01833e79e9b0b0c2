"""The JSON audit file of a calibration: what was certified, on which data, and the curve.

The topic ``fichas.puerta`` holds the gates' current states; this file is the record a person
reads later to answer "why was this gate open on that day": the key it was measured on, the
data (files and their sha256, or topics and offsets), every tested threshold with n, k and p,
and any warning about the data (docs/puerta.md, selection bias). One file per calibration run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from esquemas.decode import decode
from esquemas.estado_puerta import EstadoPuerta
from puerta.certificacion import Certificacion
from puerta.lectura import Ilegible, Instantanea, leer_datos, nombra_puerta

log = logging.getLogger(__name__)

FORMATO = "fichas-puerta/1"


def documento(
    estados: Sequence[EstadoPuerta],
    certificaciones: Mapping[str, Certificacion],
    origen: Mapping[str, Any],
    generado_en: datetime,
) -> dict[str, Any]:
    """The audit document: one entry per gate state, with its certification and curve."""
    return {
        "formato": FORMATO,
        "generado_en": generado_en.isoformat(),
        "origen": dict(origen),
        "puertas": [
            {
                "id": estado.id,
                "estado": estado.model_dump(mode="json"),
                "certificacion": _certificacion(certificaciones.get(estado.familia)),
            }
            for estado in estados
        ],
    }


def _certificacion(certificacion: Certificacion | None) -> dict[str, Any] | None:
    """A certification as plain JSON, its curve as a list of points."""
    if certificacion is None:
        return None
    datos = asdict(certificacion)
    datos["curva"] = [asdict(p) for p in certificacion.curva]
    return datos


def escribir(path: Path, doc: Mapping[str, Any]) -> None:
    """Write the audit document, UTF-8, indented so that a diff of two runs is readable."""
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def leer(path: Path) -> tuple[list[EstadoPuerta], dict[str, Any]]:
    """The gate states of an audit file, validated, and the whole document.

    Raises ValueError when the file is not a gate audit file or a state is invalid.
    """
    doc = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(doc, dict) or doc.get("formato") != FORMATO:
        raise ValueError(f"{path}: not a gate audit file ({FORMATO})")
    return list(_estados(doc, path).values()), doc


def estados_de_archivo(ruta: Path) -> dict[str, EstadoPuerta]:
    """The gate states of an audit file, by gate id (``fichas procesar --puerta``).

    Accepts the audit file ``fichas calibrar`` writes (``documento``: an object whose
    ``puertas`` each carry an ``estado``), an object whose ``estados`` lists them, a list of
    states, or one state. Raises ``ValueError`` saying what is wrong, so the command can refuse
    to run rather than run with every gate closed.
    """
    try:
        datos = json.loads(ruta.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read the gate file {ruta}: {exc}") from exc
    return _estados(datos, ruta)


def _estados(datos: Any, ruta: Path) -> dict[str, EstadoPuerta]:
    """The states of a parsed gate file in any of the accepted shapes, read as the topic's
    (``puerta.lectura``), each at the ``id`` its audit entry names or else at its own: a state
    with a value this version does not know closes its gate (a hold: held), with a warning; one
    that is not a gate state at all is refused."""
    instantanea = Instantanea()
    for id_entrada, dato in _entradas(datos, ruta):
        try:
            id_estado = id_entrada or decode(EstadoPuerta, dato).value.id
        except ValidationError as exc:
            raise ValueError(f"{ruta}: not a gate state: {exc.errors()[0]['msg']}") from exc
        lectura = leer_datos(id_estado, dato)
        if isinstance(lectura, Ilegible):
            efecto = "held" if lectura.retencion else "closed"
            log.warning("%s: gate %s %s: %s", ruta, id_estado, efecto, lectura.razon)
        instantanea.aplicar(id_estado, lectura)
    return instantanea.estados()


def _entradas(datos: Any, ruta: Path) -> list[tuple[str | None, Any]]:
    """(the id an audit entry names, if any, and the state) of each state in the file."""
    if isinstance(datos, dict) and isinstance(datos.get("puertas"), list):
        return [
            (_id(p.get("id")), p.get("estado")) if isinstance(p, dict) else (None, p)
            for p in datos["puertas"]
        ]
    if isinstance(datos, dict) and "estados" in datos:
        datos = datos["estados"]
    elif isinstance(datos, dict) and "estado" in datos:
        datos = [datos["estado"]]
    elif isinstance(datos, dict):
        datos = [datos]
    if not isinstance(datos, list):
        raise ValueError(f"{ruta}: expected gate states (EstadoPuerta), got {type(datos).__name__}")
    return [(None, d) for d in datos]


def _id(valor: Any) -> str | None:
    """An entry's ``id`` when it names a gate or a hold."""
    return valor if isinstance(valor, str) and nombra_puerta(valor) else None
