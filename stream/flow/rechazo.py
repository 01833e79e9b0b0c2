"""Turning a rejected input message into the contract's ``EventoRechazado``.

Shared by the worker (Kafka origin) and ``fichas procesar`` (file origin: the path as topic,
partition 0, the 0-based line number as offset), so both write the same DLQ record. The
worker's whole record (value, key cut to fit, forwarded headers) is ``registro_dlq``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition

from esquemas import EventoInvalido, EventoRechazado, OrigenMensaje, payload_texto
from esquemas.constantes import MAX_MESSAGE_BYTES
from esquemas.wire import cabeceras_rechazo, encode_value
from stream.commit.producers import Record

# The raw value kept in a DLQ record: the first 64 KiB (base64 makes that ~87 KiB), so a record
# always fits the producer's 1 MiB maximum, whatever the broker accepted on the input topic.
MAX_PAYLOAD_BYTES = MAX_MESSAGE_BYTES
# The key of a DLQ record is the original key cut to 1 KiB (a SKU is at most 64 characters), and
# the original headers are forwarded up to 64 KiB in all: with the payload that keeps a record
# far below the producer's 1 MiB, whatever the input message carried.
MAX_KEY_BYTES = 1024
MAX_HEADERS_BYTES = 64 * 1024


def require_sku_key(record: ConsumerRecord, sku: str) -> None:
    """The message's key must be its SKU: partitioning by key is what keeps one SKU's events,
    and people's decisions on it, in order on one worker. Anything else is rejected."""
    key = record.key.decode("utf-8", "replace") if record.key is not None else None
    if key != sku:
        raise EventoInvalido(
            "esquema_invalido",
            f"la clave del mensaje ({key!r}) debe ser el SKU ({sku!r})",
            "key",
        )


def evento_rechazado(
    error: EventoInvalido, raw: bytes | str | None, topic: str, particion: int, offset: int
) -> dict[str, Any]:
    """The DLQ record as a JSON-able dict: the error, the raw payload, where it came from.

    A value over the 64 KiB limit is cut to its first 64 KiB (``truncado``), and its sha256 is
    of the full original value: the DLQ must stay writable, and ``origen`` points at the full
    value in the input topic.
    """
    data = raw.encode("utf-8") if isinstance(raw, str) else (raw or b"")
    truncado = len(data) > MAX_PAYLOAD_BYTES
    kept = data[:MAX_PAYLOAD_BYTES]
    texto, codificacion = payload_texto(kept)
    error_contrato = error.error()
    if truncado:
        error_contrato.mensaje += f"; payload truncado a los primeros {MAX_PAYLOAD_BYTES} bytes"
    rechazo = EventoRechazado(
        error=error_contrato,
        payload=texto,
        payload_codificacion=codificacion,
        payload_sha256=hashlib.sha256(data).hexdigest(),
        truncado=truncado,
        origen=OrigenMensaje(topic=topic, particion=particion, offset=offset),
        recibido_en=datetime.now(UTC),
    )
    return rechazo.model_dump(mode="json", exclude_none=True)


def clave_dlq(key: bytes | None) -> bytes | None:
    """The original key, cut to ``MAX_KEY_BYTES`` (the full value is at ``origen``)."""
    return key[:MAX_KEY_BYTES] if key is not None else None


def cabeceras_dlq(headers: Sequence[tuple[str, bytes | None]] | None) -> list[tuple[str, bytes]]:
    """The original headers, in order, while their total stays within ``MAX_HEADERS_BYTES``."""
    forwarded: list[tuple[str, bytes]] = []
    total = 0
    for name, value in headers or ():
        data = value or b""
        total += len(name.encode("utf-8")) + len(data)
        if total > MAX_HEADERS_BYTES:
            break
        forwarded.append((name, data))
    return forwarded


def registro_dlq(
    topic_dlq: str, tp: TopicPartition, record: ConsumerRecord, error: EventoInvalido
) -> Record:
    """The worker's DLQ record of an input message: its value, its key cut to fit, and its
    original headers followed by the DLQ schema's."""
    rechazo = evento_rechazado(error, record.value, tp.topic, tp.partition, record.offset)
    forwarded = cabeceras_dlq(record.headers)
    return Record(
        topic_dlq, encode_value(rechazo), clave_dlq(record.key), cabeceras_rechazo(forwarded)
    )
