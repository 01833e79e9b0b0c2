"""Logging of every ``fichas`` command: JSON lines for machines, plain lines for people.

One JSON object per line (``python-json-logger``), or ``time LEVEL logger: message [sku=...]``
when standard error is a terminal. Every line logged while an event is handled carries its
``sku``, ``event_id``, ``version`` (and ``intento`` inside the graph): ``configure`` takes the
function that reads them (``grafo.contexto.campos``). A few library records are re-levelled
(``_RELEVEL``): aiokafka's normal start-up noise, connection lines on TLS and SASL, a producer
id refused by an ACL (the command's own line names the setting), a connection collected
unclosed. Operators read English, catalogue people Spanish. What each line means and why a
record is re-levelled: docs/operacion.md, "Logs".
"""

from __future__ import annotations

import logging
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, TextIO
from urllib.parse import urlsplit, urlunsplit

EVENT_FIELDS = ("sku", "event_id", "version", "intento")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
SECRET_MASK = "***"

# (logger name prefix, text in the message, level it is logged at instead)
_RELEVEL: tuple[tuple[str, str, int], ...] = (
    ("aiokafka", "GroupCoordinatorNotAvailableError", logging.INFO),
    ("aiokafka", "Marking the coordinator dead", logging.INFO),
    ("aiokafka", "Unable connect to", logging.WARNING),
    ("aiokafka", "Unable to request metadata", logging.WARNING),
    ("aiokafka", "Authenticated as", logging.DEBUG),
    ("aiokafka", "Loading SSL ", logging.DEBUG),
    # A producer's id refused by an ACL (InitProducerId): the command's own one line says it,
    # with the setting to fix (infra.kafka.access); aiokafka's ERROR would be a second line.
    ("aiokafka.producer", "AuthorizationFailedError", logging.INFO),
    # uvloop's SSL protocol writing to a transport the client has already closed (a process
    # exiting on a refused login or ACL while aiokafka still had a request to send).
    ("asyncio", "transport: <TCPTransport closed=True", logging.DEBUG),
    # aiokafka's connection collected unclosed (a client whose start failed on a refusal is
    # dropped with a connection open): a leak worth a WARNING, never a second ERROR line
    # beside the command's own.
    ("asyncio", "Unclosed AIOKafkaConnection", logging.WARNING),
)


class _EventContext(logging.Filter):
    """Adds the current event's fields to the record, and re-levels known library noise."""

    def __init__(self, campos: Callable[[], dict[str, Any]]) -> None:
        super().__init__()
        self._campos = campos

    def filter(self, record: logging.LogRecord) -> bool:
        """Never drops a record except one re-levelled below the root's level."""
        for field, value in self._campos().items():
            if not hasattr(record, field):
                setattr(record, field, value)
        for prefix, text, level in _RELEVEL:
            if (
                record.name.startswith(prefix)
                and text in record.getMessage()
                and (record.levelno > level)
            ):
                record.levelno, record.levelname = level, logging.getLevelName(level)
                return level >= logging.getLogger().getEffectiveLevel()
        return True


class _HumanFormatter(logging.Formatter):
    """``time LEVEL logger: message`` plus the event fields, for a terminal."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The stock line, then ``[sku=... event_id=... version=... intento=...]``."""
        line = super().format(record)
        config = getattr(record, "configuracion", None)
        if isinstance(config, dict):  # the effective configuration, readable on one line
            line += " " + " ".join(f"{k}={v}" for k, v in config.items())
        fields = [f"{k}={getattr(record, k)}" for k in EVENT_FIELDS if hasattr(record, k)]
        return f"{line} [{' '.join(fields)}]" if fields else line


def configure(
    level: str,
    stream: TextIO | None = None,
    json_lines: bool | None = None,
    campos: Callable[[], dict[str, Any]] = dict,
) -> None:
    """Set up the root logger once per process; ``json_lines`` None: JSON unless a terminal;
    ``campos``: the current event's fields for every line (none by default)."""
    from pythonjsonlogger.json import JsonFormatter  # imported here: ``fichas --help`` is instant

    out = stream or sys.stderr
    if json_lines is None:
        json_lines = not out.isatty()
    handler = logging.StreamHandler(out)
    handler.addFilter(_EventContext(campos))
    if json_lines:
        handler.setFormatter(
            JsonFormatter(
                "%(levelname)s %(name)s %(message)s",
                rename_fields={"levelname": "level", "name": "logger"},
                timestamp="time",  # ISO 8601 in UTC, what log stores parse without help
                json_ensure_ascii=False,
            )
        )
    else:
        handler.setFormatter(_HumanFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level.upper())
    # httpx logs every LLM request at INFO (six lines per 3-attempt ficha); the sensor counts
    # them, and failed requests surface as the LLM health messages.
    for name in ("httpx", "httpcore"):
        logging.getLogger(name).setLevel(max(logging.WARNING, root.level))


def mask_url(url: str) -> str:
    """A URL or libpq DSN with its password (if any) replaced by the mask."""
    if "password=" in url:
        return re.sub(r"password=('[^']*'|\S*)", f"password={SECRET_MASK}", url)
    try:
        parts = urlsplit(url)
    except ValueError:
        return SECRET_MASK
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:{SECRET_MASK}@{parts.hostname or ''}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def masked(
    settings: Mapping[str, Any], secrets: tuple[str, ...], urls: tuple[str, ...]
) -> dict[str, Any]:
    """Settings as plain values, secrets masked (unset stays null), passwords in URLs too."""
    out: dict[str, Any] = {}
    for key, value in settings.items():
        if key in secrets and value not in (None, ""):
            out[key] = SECRET_MASK
        elif key in urls and isinstance(value, str):
            out[key] = mask_url(value)
        else:
            out[key] = value if isinstance(value, int | float | bool | None) else str(value)
    return out
