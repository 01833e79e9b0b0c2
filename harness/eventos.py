"""Ready-made valid ``EventoCambio`` values, for tests, benchmarks and examples."""

from __future__ import annotations

import json
import uuid
from typing import Any

EJEMPLO_ORIGEN: dict[str, Any] = {
    "titulo": "RUNNER X2 black mesh sneaker men 42",
    "descripcion": "Lightweight running shoe, mesh upper, rubber sole. Weight 280 g.",
    "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
    "idioma": "en",
}


def evento_dict(sku: str = "ZAP-000123", version: int = 1, **cambios: Any) -> dict[str, Any]:
    """A valid EventoCambio as a dict; keyword arguments override fields."""
    evento: dict[str, Any] = {
        "event_id": str(uuid.uuid4()),
        "sku": sku,
        "version": version,
        "proveedor": "Calzados Norte SL",
        "familia": "zapatillas",
        "ocurrido_en": "2026-11-29T10:00:00Z",
        "ficha_proveedor": dict(EJEMPLO_ORIGEN),
        "cifras": {"peso_g": 280},
    }
    evento.update(cambios)
    return evento


def evento_json(sku: str = "ZAP-000123", version: int = 1, **cambios: Any) -> str:
    """A valid EventoCambio as one JSON line."""
    return json.dumps(evento_dict(sku, version, **cambios), ensure_ascii=False)
