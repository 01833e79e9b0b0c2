"""Turning a rejected input message into the contract's ``EventoRechazado``.

Shared by the worker (Kafka origin) and ``fichas procesar`` (file origin: the path as topic,
partition 0, the 0-based line number as offset), so both write the same DLQ record.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from esquemas import EventoInvalido, EventoRechazado, OrigenMensaje, payload_texto
from esquemas.evento import MAX_MESSAGE_BYTES


def evento_rechazado(
    error: EventoInvalido, raw: bytes | str | None, topic: str, particion: int, offset: int
) -> dict[str, Any]:
    """The DLQ record as a JSON-able dict: the error, the raw payload, where it came from.

    A value over the 64 KiB limit is cut to its first 64 KiB, and the message says so: the
    DLQ must stay writable, and ``origen`` points at the full value in the input topic.
    """
    error_contrato = error.error()
    if raw is not None and len(raw) > MAX_MESSAGE_BYTES:
        error_contrato.mensaje += f"; payload truncado a los primeros {MAX_MESSAGE_BYTES} bytes"
        raw = raw[:MAX_MESSAGE_BYTES]
    registro = EventoRechazado(
        error=error_contrato,
        payload=payload_texto(raw),
        origen=OrigenMensaje(topic=topic, particion=particion, offset=offset),
        recibido_en=datetime.now(UTC),
    )
    return registro.model_dump(mode="json", exclude_none=True)
