"""The sample feed and what became of each of its lines, as the outcomes arrive."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from criterios import familias_conocidas
from esquemas import EventoCambio, EventoInvalido, leer_evento
from esquemas.constantes import DESTINO_DLQ, DESTINO_PUBLICADAS, DESTINO_REVISION

# What the table and the summary call each fate of a feed line.
PUBLICADA = "publicada"
REVISION = "revisión"
DLQ = "DLQ"
OBSOLETO = "obsoleto"
PENDING = "…"
LABELS = {DESTINO_PUBLICADAS: PUBLICADA, DESTINO_REVISION: REVISION, DESTINO_DLQ: DLQ}


@dataclass
class FeedLine:
    """One non-blank line of the feed: what was sent, where it landed, and its outcome."""

    number: int  # 1-based line number in the feed file
    raw: bytes
    key: bytes | None
    evento: EventoCambio | None  # None: invalid, a DLQ record is expected
    error: str | None = None
    partition: int | None = None
    offset: int | None = None
    produced_ms: int | None = None
    destino: str | None = None  # fichas.publicadas / fichas.revision_manual / dlq
    evento_salida: dict[str, Any] | None = None
    outcome_ms: int | None = None

    @property
    def sku(self) -> str:
        """The SKU, or as much of one as an invalid line lets us read."""
        if self.evento is not None:
            return self.evento.sku
        return self.key.decode("utf-8", "replace") if self.key is not None else "-"

    @property
    def version(self) -> int | None:
        return self.evento.version if self.evento is not None else None

    @property
    def intentos(self) -> int | None:
        if self.evento_salida is None or self.destino == DESTINO_DLQ:
            return None
        value = self.evento_salida.get("intentos")
        return value if isinstance(value, int) else None

    @property
    def latency_ms(self) -> int | None:
        """From the moment it was produced to the timestamp of its outcome record."""
        if self.produced_ms is None or self.outcome_ms is None:
            return None
        return max(0, self.outcome_ms - self.produced_ms)


def key_of(raw: bytes) -> bytes | None:
    """The message key a feed would use: the SKU when the line says one, else none."""
    try:
        data = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    sku = data.get("sku") if isinstance(data, dict) else None
    return sku.encode("utf-8") if isinstance(sku, str) and sku else None


def read_feed(path: Path) -> list[FeedLine]:
    """Every non-blank line, validated as the worker will, so the demo knows what to expect."""
    familias = familias_conocidas()
    lines: list[FeedLine] = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            raw = line.rstrip(b"\r\n")
            if not raw.strip():
                continue
            try:
                evento: EventoCambio | None = leer_evento(raw, familias)
                error = None
            except EventoInvalido as exc:
                evento, error = None, str(exc)
            lines.append(FeedLine(number, raw, key_of(raw), evento, error))
    return lines


# ----------------------------------------------------------------------------- progress


class Progress:
    """What has happened to each feed line, fed with the records of the output topics."""

    def __init__(self, lines: Sequence[FeedLine], input_topic: str, topics: Mapping[str, str]):
        """``topics`` maps each output topic to the ``destino`` its records mean."""
        self.lines = list(lines)
        self.input_topic = input_topic
        self.topics = dict(topics)
        self.duplicates = 0
        self.unmatched = 0
        self._by_event_id = {
            line.evento.event_id: line for line in self.lines if line.evento is not None
        }
        self._by_position: dict[tuple[int, int], FeedLine] = {}
        self._shown: dict[int, str] = {}

    def produced(self, line: FeedLine, partition: int, offset: int, timestamp_ms: int) -> None:
        """The broker acknowledged the line at this partition and offset."""
        line.partition, line.offset, line.produced_ms = partition, offset, timestamp_ms
        self._by_position[(partition, offset)] = line

    def record(self, topic: str, value: bytes | None, timestamp_ms: int) -> FeedLine | None:
        """Match one output record to its feed line; returns the line when it is news."""
        destino = self.topics.get(topic)
        try:
            evento = json.loads(value) if value is not None else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            evento = None
        if destino is None or not isinstance(evento, dict):
            self.unmatched += 1
            return None
        line = self._match(destino, evento)
        if line is None:
            self.unmatched += 1
            return None
        if line.destino is not None:  # at-least-once delivery: keep the first
            self.duplicates += 1
            return None
        line.destino, line.evento_salida, line.outcome_ms = destino, evento, timestamp_ms
        return line

    def _match(self, destino: str, evento: dict[str, Any]) -> FeedLine | None:
        """DLQ records by where the message was written; outcomes by ``event_id``."""
        if destino == DESTINO_DLQ:
            origen = evento.get("origen") or {}
            if origen.get("topic") != self.input_topic:
                return None
            particion, offset = origen.get("particion"), origen.get("offset")
            if not isinstance(particion, int) or not isinstance(offset, int):
                return None
            return self._by_position.get((particion, offset))
        event_id = evento.get("event_id")
        return self._by_event_id.get(event_id) if isinstance(event_id, str) else None

    def superseded(self, line: FeedLine) -> bool:
        """A newer version of the same SKU has an outcome: this one will never have one."""
        if line.evento is None:
            return False
        sku, version = line.evento.sku, line.evento.version
        return any(
            other.evento is not None
            and other.evento.sku == sku
            and other.evento.version > version
            and other.destino in (DESTINO_PUBLICADAS, DESTINO_REVISION)
            for other in self.lines
        )

    def state(self, line: FeedLine) -> str:
        """publicada / revisión / DLQ / obsoleto, or pending."""
        if line.destino is not None:
            return LABELS[line.destino]
        if self.superseded(line):
            return OBSOLETO
        return PENDING

    def complete(self) -> bool:
        """Every line has its final fate (docs/operacion.md, "`fichas demo`", says when)."""
        return all(self.state(line) != PENDING for line in self.lines)

    def pending(self) -> int:
        return sum(1 for line in self.lines if self.state(line) == PENDING)

    def changed(self) -> list[FeedLine]:
        """Lines whose state changed since the last call, in feed order."""
        out = []
        for line in self.lines:
            state = self.state(line)
            if self._shown.get(line.number, PENDING) != state:
                self._shown[line.number] = state
                out.append(line)
        return out

    def outcomes(self) -> list[dict[str, Any]]:
        """``{"destino", "evento"}`` per line with an outcome, in feed order (procesar's format)."""
        return [
            {"destino": line.destino, "evento": line.evento_salida}
            for line in self.lines
            if line.destino is not None and line.evento_salida is not None
        ]
