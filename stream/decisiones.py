"""People's decisions in the worker: the one writer of a SKU also publishes what a person approved.

Why here and not in the reviewer app (docs/stream.md, "One writer per SKU"): the compacted
``fichas.publicadas`` keeps the *last* record of a SKU, so whoever writes a SKU's records must
write them in version order. The loop's records are written in the SKU's lane, after the claim
in the version store, through the transactional producer of the SKU's input partition (fenced
when the partition moves). A second writer (the app, with its own producer) can only check the
version store and then write, and the loop can publish a newer version between the two; after
compaction the older ficha would be the one that survives. So the app writes only its decision
to ``fichas.decisiones`` (keyed by SKU, the same partition count as the input), with the ficha to
publish in ``DecisionRevision.publicacion``; the worker that owns input partition *p* also owns
``fichas.decisiones``-*p* (``infra.kafka.CO_PARTITIONING_ASSIGNORS``), queues each decision in
its SKU's lane behind the SKU's earlier events, and there:

* a decision without ``publicacion`` (rejected, a sample verdict, an ``obsoleta`` closure, or
  an approval written by an app older than this addition, which published it itself) writes
  nothing: its offset is finished and committed like an event's;
* a decision with ``publicacion`` is published when no newer version of the SKU was handled
  (the version store, plus the versions queued behind it in the lane: ``versiones.regla``'s
  one rule, ``obsoleta``); the stored version is raised to the decision's, and the
  ``FichaPublicada`` is written, byte for byte as the app built it, through the producer of the
  input partition with the same number (``Emitter.send``: ``NotOwner`` when this worker does not
  own it, so the decision is left to the owner);
* otherwise it is closed as obsolete: nothing is written (the newer version is the SKU's
  outcome, as for an event), and the log says so. The decision itself stays on
  ``fichas.decisiones`` as the person's verdict on that ficha (gate evidence keeps it).

At an equal version the person's ficha wins over the loop's: the decision is about the loop's
outcome of that version, which was written before it in the same lane (a review record, or a
publication a person sampled). A decision that does not parse, whose key is not its SKU, or whose
``publicacion`` is not about the same ``event_id``, SKU and version goes to the DLQ with the
contract's codes and its ``origen`` on ``fichas.decisiones``; the worker goes on.

Every decision is a normal ``InFlight`` ticket of its ``fichas.decisiones`` partition: its offset
is committed only once it is handled, by the same ledger as the events' offsets.
"""

from __future__ import annotations

import enum
import json
import logging
from dataclasses import dataclass
from typing import Any

from aiokafka import ConsumerRecord, TopicPartition
from pydantic import ValidationError

from esquemas import DecisionRevision, EventoInvalido, FichaPublicada
from esquemas.constantes import DESTINO_PUBLICADAS
from esquemas.wire import cabeceras_resultado, encode_value, known_fields
from infra.config import Settings
from stream.emitter import Emitter
from stream.fallos import FalloPermanente, Reintentos
from stream.inflight import Ticket
from stream.producers import Record
from stream.rechazo import registro_dlq, require_sku_key
from stream.sensor import WorkerSensor
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
    """One valid decision in its SKU's lane (``stream.lanes.LaneItem``)."""

    ticket: Ticket
    decision: DecisionRevision
    publicacion: dict[str, Any] | None  # the FichaPublicada as the app wrote it, or None

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

    Fields a later contract version adds are ignored (the models forbid extras because they
    are what this project writes). The key must be the SKU, or the decision would not be in
    the partition of its SKU's events; a ``publicacion`` must be about the decided ficha.
    """
    try:
        datos = json.loads(record.value) if record.value is not None else None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EventoInvalido("json_invalido", f"la decisión no es JSON: {exc}") from exc
    if not isinstance(datos, dict):
        raise EventoInvalido("esquema_invalido", "la decisión no es un objeto JSON")
    publicacion = datos.get("publicacion")
    try:
        decision = DecisionRevision.model_validate(
            known_fields(datos, DecisionRevision)
            | {"publicacion": known_fields(publicacion, FichaPublicada) if publicacion else None}
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        campo = ".".join(str(p) for p in error["loc"]) or None
        raise EventoInvalido("esquema_invalido", str(error["msg"]), campo) from exc
    require_sku_key(record, decision.sku)
    _comprobar_publicacion(decision)
    return decision, known_fields(publicacion, FichaPublicada) if publicacion else None


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
