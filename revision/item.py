"""``Item``: one thing to review, as the store keeps it and the decisions read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Item:
    """One thing to review: a ficha the loop could not publish, or a sampled published one."""

    event_id: str
    tipo: str
    motivo: str
    sku: str
    version: int
    familia: str
    criterios: list[str]
    datos: dict[str, Any]
    recibido_en: float
    estado: str
    cerrado_en: float | None
    # The ``Evidencia`` (JSON-ready) every decision on this item carries; None without a key
    # or a score (contract v1.3).
    evidencia: dict[str, Any] | None = None
