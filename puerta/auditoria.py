"""The JSON audit file of a calibration: what was certified, on which data, and the curve.

The topic ``fichas.puerta`` holds the gates' current states; this file is the record a person
reads later to answer "why was this gate open on that day": the key it was measured on, the
data (files and their sha256, or topics and offsets), every tested threshold with n, k and p,
and any warning about the data (docs/puerta.md, selection bias). One file per calibration run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from esquemas.puerta import EstadoPuerta
from puerta.certificacion import Certificacion

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
    estados = [EstadoPuerta.model_validate(p["estado"]) for p in doc.get("puertas", [])]
    return estados, doc
