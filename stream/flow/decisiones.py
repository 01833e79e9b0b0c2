"""People's decisions in the worker: the one writer of a SKU also publishes what a person approved.

The worker that owns input partition *p* owns ``fichas.decisiones``-*p* too and queues each
decision in its SKU's lane behind the SKU's earlier events. A decision with ``publicacion`` is
published as the app built it, less what this version does not know (``esquemas.decode``),
unless a newer version was handled (then closed as obsolete; at an equal version the person
wins); one without writes nothing; one that does not parse or does not match its key goes to
the DLQ. Each decision is an ``InFlight`` ticket of its partition, committed by the same ledger
as the events. Why and the race it closes: docs/stream.md, "One writer per SKU".
"""

from __future__ import annotations

import enum
import json
import logging
from dataclasses import dataclass
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition
from pydantic import ValidationError

from esquemas import DecisionRevision, EventoInvalido
from esquemas.constantes import DESTINO_PUBLICADAS
from esquemas.decode import decode
from esquemas.wire import cabeceras_resultado, encode_value
from infra.config import Settings
from stream.commit.emitter import Emitter
from stream.commit.inflight import Ticket
from stream.commit.producers import Record
from stream.flow.fallos import FalloPermanente, Reintentos
from stream.flow.rechazo import registro_dlq, require_sku_key
from stream.metricas.sensor import WorkerSensor
from versiones.almacen import VersionStore
from versiones.regla import mas_nueva, obsoleta

log = logging.getLogger(__name__)


class Aplicacion(enum.Enum):
    """How the handling of one decision ended; each one finishes its offset."""

    PUBLICADA = "publicada"  # the person's ficha is written to fichas.publicadas
    OBSOLETA = "obsoleta"  # a newer version of the SKU was handled: nothing written
    SIN_PUBLICACION = "sin_publicacion"  # the decision publishes nothing
    RECHAZADA = "rechazada"  # a DLQ record is written


@dataclass(eq=False)
class DecisionItem:
    """One valid decision in its SKU's lane (``stream.flow.lanes.LaneItem``)."""

    ticket: Ticket
    decision: DecisionRevision
    publicacion: (
        dict[str, Any] | None
    )  # the FichaPublicada as the app wrote it and this version reads it, or None

    @property
    def tp(self) -> TopicPartition:
        """The ``fichas.decisiones`` partition the decision came from."""
        return self.ticket.tp

    @property
    def sku(self) -> str:
        """The decided ficha's SKU: its lane."""
        return self.decision.sku

    @property
    def version(self) -> int:
        """The decided ficha's version of its SKU."""
        return self.decision.version

    @property
    def event_id(self) -> str:
        """The decided ficha's ``event_id`` (the input event's)."""
        return self.decision.event_id


def particion_de_entrada(settings: Settings, tp: TopicPartition) -> TopicPartition:
    """The input partition whose producer writes for ``tp``: the one with the same number.

    Keys are SKUs on both topics and their partition counts are equal (checked at start-up),
    so a SKU's decisions are in the partition with the number of its events'.
    """
    return TopicPartition(settings.topic_entrada, tp.partition)


def leer_decision(record: ConsumerRecord) -> tuple[DecisionRevision, dict[str, Any] | None]:
    """Parse one ``fichas.decisiones`` record; raise ``EventoInvalido`` with the contract's code.

    Read through the contract's decode (``esquemas.decode``): fields a later contract version
    adds are ignored at every level and a value it adds (a decision kind, a motivo) is kept as
    written, so a newer app's decision is applied, never sent to the DLQ. The key must be the
    SKU, or the decision would not be in the partition of its SKU's events; a ``publicacion``
    must be about the decided ficha. The publication returned is the app's as this version
    reads it (``Decoded.data``: what it does not know dropped, a gate key it does not know
    null), so the worker writes only what its contract version says.
    """
    try:
        datos = json.loads(record.value) if record.value is not None else None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EventoInvalido("json_invalido", f"la decisión no es JSON: {exc}") from exc
    if not isinstance(datos, dict):
        raise EventoInvalido("esquema_invalido", "la decisión no es un objeto JSON")
    try:
        leida = decode(DecisionRevision, datos)
    except ValidationError as exc:
        error = exc.errors()[0]
        campo = ".".join(str(p) for p in error["loc"]) or None
        raise EventoInvalido("esquema_invalido", str(error["msg"]), campo) from exc
    decision = leida.value
    require_sku_key(record, decision.sku)
    _comprobar_publicacion(decision)
    return decision, leida.data["publicacion"] if decision.publicacion is not None else None


def _comprobar_publicacion(decision: DecisionRevision) -> None:
    """A publication is the decided ficha's: same ``event_id``, SKU and version."""
    publicada = decision.publicacion
    if publicada is None:
        return
    for campo in ("event_id", "sku", "version"):
        if getattr(publicada, campo) != getattr(decision, campo):
            raise EventoInvalido(
                "esquema_invalido",
                f"publicacion.{campo} ({getattr(publicada, campo)!r}) no es el de la decisión "
                f"({getattr(decision, campo)!r})",
                f"publicacion.{campo}",
            )


def registro_publicacion(settings: Settings, publicacion: dict[str, Any]) -> Record:
    """The ``fichas.publicadas`` record of a person's ficha: keyed by SKU, the outcome headers,
    the value in the project's compact JSON (a redelivered decision gives the same bytes)."""
    return Record(
        settings.topic_publicadas,
        encode_value(publicacion),
        str(publicacion["sku"]).encode("utf-8"),
        cabeceras_resultado(DESTINO_PUBLICADAS, publicacion),
    )


@dataclass
class Decisiones:
    """Handles the decisions of the worker's ``fichas.decisiones`` partitions."""

    settings: Settings
    versions: VersionStore
    sensor: WorkerSensor
    emitter: Emitter
    steps: Reintentos

    def item(self, ticket: Ticket) -> DecisionItem:
        """The lane item of a fetched decision; ``EventoInvalido`` for one to reject."""
        decision, publicacion = leer_decision(ticket.record)
        return DecisionItem(ticket, decision, publicacion)

    async def handle(self, item: DecisionItem, newest_waiting: int | None) -> Aplicacion:
        """Apply one decision; a step that keeps failing for a non-transient reason sends it
        to the DLQ (``error_procesamiento``), as it does an event."""
        try:
            aplicacion = await self._aplicar(item, newest_waiting)
        except FalloPermanente as exc:
            mensaje = (
                f"{type(exc.causa).__name__} al aplicar la decisión del event_id "
                f"{item.event_id!r} (paso {exc.paso}): {str(exc.causa)[:500]}"
            )
            return await self.reject(item.ticket, EventoInvalido("error_procesamiento", mensaje))
        self.sensor.on_decision(aplicacion.value)
        return aplicacion

    async def _aplicar(self, item: DecisionItem, newest_waiting: int | None) -> Aplicacion:
        """Publish the person's ficha unless a newer version of the SKU was handled."""
        if item.publicacion is None:
            return Aplicacion.SIN_PUBLICACION
        stored = await self.steps.run(lambda: self.versions.get(item.sku), "store")
        vigente = mas_nueva(newest_waiting, stored)
        if obsoleta(item.version, vigente):
            log.info(
                "a person's %s of %s v%d is not published (obsolete): v%d of the SKU is known",
                item.decision.decision,
                item.sku,
                item.version,
                vigente,
            )
            return Aplicacion.OBSOLETA
        await self.steps.run(lambda: self.versions.record(item.sku, item.version), "store")
        records = [registro_publicacion(self.settings, item.publicacion)]
        # The emitter maps the decision's partition to input partition p's producer
        # (``particion_de_entrada``): the publication and this decision's offset are one
        # transaction, so a replay after a crash never publishes it twice.
        offset = item.ticket.offset
        await self.steps.run(lambda: self.emitter.send(item.tp, records, offset), "produce")
        log.info("published the %s ficha of %s v%d", item.decision.decision, item.sku, item.version)
        return Aplicacion.PUBLICADA

    async def reject(self, ticket: Ticket, exc: EventoInvalido) -> Aplicacion:
        """The DLQ record of a decision that cannot be read, with its ``fichas.decisiones``
        origin, written by the producer of the input partition with the same number."""
        log.warning("decision at %s offset %d to the DLQ: %s", ticket.tp, ticket.offset, exc)
        records = [registro_dlq(self.settings.topic_dlq, ticket.tp, ticket.record, exc)]
        await self.steps.run(
            lambda: self.emitter.send(ticket.tp, records, ticket.offset), "produce", acotado=False
        )
        self.sensor.on_decision(Aplicacion.RECHAZADA.value)
        return Aplicacion.RECHAZADA
