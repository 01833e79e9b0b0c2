"""The app's side of the stream: the consumer that fills the queue and the outbox that sends.

Consumer: the review, sample and published topics, in the app's own group; review and sample
records become items (``revision.almacen.item``), every record's version closes older open
items of its SKU, offsets are committed after the batch is stored (redelivery changes
nothing). Outbox: a decision is stored first, then its ``DecisionRevision`` is sent to
``fichas.decisiones`` with an idempotent producer and marked sent once acknowledged; unsent rows
are sent again at start-up and every few seconds. Kafka refusing the app stops it (exit 2).
The app never writes ``fichas.publicadas``, and never sends a candidate's decision. Why:
docs/revision.md, "Garantías y cómo se consiguen" and "Un solo escritor por SKU".
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from pydantic import ValidationError

from esquemas import FichaEnRevision, FichaPublicada
from esquemas.constantes import (
    MOTIVO_MUESTRA,
    MOTIVO_SIN_GARANTIA,
    TIPO_MUESTRA,
    TIPO_REVISION,
)
from esquemas.decode import decode
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from esquemas.wire import cabeceras_decision, encode_value
from infra.config import Settings
from infra.kafka.access import refusal
from infra.kafka.clients import build_group_reader, build_writer
from infra.kafka.topics import ensure_topics
from puerta.resolucion import puerta_para, umbral_aplicable
from revision.almacen.cola import Almacen, Decision, ItemNuevo, Llegada
from revision.almacen.decisiones import criterios_a_ciegas
from revision.almacen.item import es_candidata, es_muestra_sombra, id_item

log = logging.getLogger(__name__)

M = TypeVar("M", FichaEnRevision, FichaPublicada)

REINTENTO_S = 5.0


def grupo(settings: Settings) -> str:
    """The app's consumer group: its own, so it never takes partitions from the workers."""
    return f"{settings.grupo}-revisor"


def topics_leidos(settings: Settings) -> list[str]:
    return [settings.topic_revision, settings.topic_muestra, settings.topic_publicadas]


def item_de_registro(
    topic: str, valor: bytes, settings: Settings
) -> tuple[dict[str, Any], str, str, list[str]] | None:
    """(record, tipo, motivo, failing criteria) of a review or sample record; None otherwise.

    Read through the contract's decode (``esquemas.decode``): a record of a later version is
    queued all the same, what this version does not know dropped, a motivo it does not know kept
    as written, and a gate key it does not know read as null (the item is then evidence of no
    gate). A review record's ``candidata`` is read from the record as it came (``es_candidata``)
    and kept in the stored data when true, whatever fields this build's model knows.
    """
    if topic == settings.topic_revision:
        crudo = json.loads(valor)
        revision = _leido(FichaEnRevision, crudo, topic)
        criterios = sorted({p.criterio for p in revision.problemas})
        datos = revision.model_dump(mode="json")
        if isinstance(crudo, dict) and es_candidata(crudo):
            datos["candidata"] = True
        return datos, TIPO_REVISION, revision.motivo, criterios
    if topic == settings.topic_muestra:
        publicada = _leido(FichaPublicada, json.loads(valor), topic)
        return publicada.model_dump(mode="json"), TIPO_MUESTRA, MOTIVO_MUESTRA, []
    return None


def _leido(modelo: type[M], crudo: Any, topic: str) -> M:
    """``crudo`` read as ``modelo``; what this version does not know of it is logged."""
    leido = decode(modelo, crudo)
    if leido.unknown:
        log.info(
            "record on %s (event_id %s) read with values this version does not know: %s",
            topic,
            crudo.get("event_id") if isinstance(crudo, dict) else None,
            leido.reasons(),
        )
    return leido.value


def llegada_de(
    datos: Mapping[str, Any], tipo: str, estados: Mapping[str, EstadoPuerta]
) -> Llegada | None:
    """What the store keeps of an arriving item as a gate's evidence; None without a key.

    - ``clave``: the key of the loop that wrote the ficha (v1.3); a record without one (older
      than v1.3) is evidence of no gate.
    - ``puntuacion``: the final attempt's score (the review record's last ``historial`` entry;
      the sample record's own ``puntuacion``).
    - ``codigo_ok``: a review item passed its code checks exactly when its motivo is
      ``sin_garantia`` (the worker sends a ficha whose checks failed as ``rechazada``, and an
      unusable answer as ``salida_invalida``); a sampled publication passed them (the loop never
      publishes over a code failure). Under ``FICHAS_PUERTA=veredicto`` a ficha the judge rejected
      is ``rechazada`` even when its checks passed: it counts as no approval at any λ, which
      can only slow an opening, and that mode publishes without a gate anyway.
    - ``sombra``: the gate that governs the family under this key (``puerta.resolucion.
      puerta_para``, on the app's view of ``fichas.puerta``) is closed now, when the app stores
      the item. A sampled publication is never shadow: an open gate let it through. A candidate
      loop's item is always shadow, even under an open gate of its key: the candidate never
      publishes, so every one of its final fichas reaches people unselected, which is what
      shadow evidence is (an open gate's items are only those it held back, by score). So is
      an item of the blind shadow share (v1.6 ``muestra_sombra``): the worker held it back
      from an open gate by a hash of its id alone, so while a gate is open the evidence is
      exactly that share of its final fichas, and while it is closed, all of them.

    The race around a transition, and why it is harmless: the worker routed the ficha on its
    own view of the gate, a few seconds apart from the app's. A ficha routed while the gate was
    closed and stored after the app saw it open is left out of the sequence (the gate is open:
    nothing more is needed of it). A ficha held back by an open gate (score under λ) and stored
    after the app saw the gate closed joins the new sequence, while the fichas published in
    those seconds do not. Either way, which fichas enter depends on their score and on timing,
    never on what people decide about them, which is what the e-processes need (the bets are
    placed before the labels are seen); and only the seconds the workers take to read a
    transition are affected.
    """
    if datos.get("clave") is None:
        return None
    clave = ClavePuerta.model_validate(datos["clave"])
    if tipo == TIPO_MUESTRA:
        puntuacion = datos.get("puntuacion")
        return Llegada(clave, None if puntuacion is None else float(puntuacion), True, False)
    historial = datos.get("historial") or []
    final = historial[-1].get("puntuacion") if historial else None
    estado = puerta_para(str(datos["familia"]), clave, estados)
    return Llegada(
        clave=clave,
        puntuacion=None if final is None else float(final),
        codigo_ok=datos.get("motivo") == MOTIVO_SIN_GARANTIA,
        sombra=es_candidata(datos) or es_muestra_sombra(datos) or umbral_aplicable(estado) is None,
    )


class Flujo:
    """Consumer and outbox of one app process."""

    def __init__(
        self,
        settings: Settings,
        almacen: Almacen,
        estados: Callable[[], Mapping[str, EstadoPuerta]] = dict,
    ) -> None:
        self.settings = settings
        self.almacen = almacen
        # The app's view of fichas.puerta (``LectorPuertas.estados``): whether an arriving item
        # is in shadow mode. Without one every gate is closed, as with no record.
        self.estados = estados
        self.producer: AIOKafkaProducer | None = None
        self.consumer: AIOKafkaConsumer | None = None
        self._envio = asyncio.Lock()
        self._tareas: list[asyncio.Task[None]] = []
        self.listo = False
        self.rechazo: Exception | None = None
        self.rechazada = asyncio.Event()

    async def start(self) -> None:
        """Topics, producer, the unsent decisions of a previous run, then the consumer."""
        await ensure_topics(self.settings)
        self.producer = build_writer(self.settings)
        await self.producer.start()
        await self.enviar_pendientes()
        self.consumer = build_group_reader(
            self.settings, grupo(self.settings), *topics_leidos(self.settings)
        )
        await self.consumer.start()
        self._tareas = [
            asyncio.create_task(self._consumir(), name="revisor-consumidor"),
            asyncio.create_task(self._reenviar(), name="revisor-outbox"),
        ]
        self.listo = True

    async def stop(self) -> None:
        """Stop the tasks, then the clients."""
        self.listo = False
        for tarea in self._tareas:
            tarea.cancel()
        for tarea in self._tareas:
            try:
                await tarea
            except (asyncio.CancelledError, Exception):
                pass
        if self.consumer is not None:
            await self.consumer.stop()
        if self.producer is not None:
            await self.producer.stop()

    # ------------------------------------------------------------------ consuming

    async def _consumir(self) -> None:
        """Consume until cancelled; a failed batch is logged and, uncommitted, read again."""
        while True:
            try:
                await self._lote()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._rechazar(exc):
                    return
                log.exception("batch not stored; it will be read again")
                await asyncio.sleep(REINTENTO_S)
                await self._rebobinar()

    async def _lote(self) -> None:
        """Store one batch, then commit its offsets, then send the closures it caused."""
        assert self.consumer is not None
        lotes = await self.consumer.getmany(timeout_ms=1000, max_records=200)
        if not lotes:
            return
        cerradas: list[Decision] = []
        for records in lotes.values():
            for record in records:
                cerradas += await self.guardar(record.topic, record.value)
        await self.consumer.commit()
        for decision in cerradas:
            await self.enviar(decision.event_id)

    async def _rebobinar(self) -> None:
        """Back to the committed offsets, so the records of a failed batch come again."""
        assert self.consumer is not None
        for tp in self.consumer.assignment():
            committed = await self.consumer.committed(tp)
            if committed is None:
                await self.consumer.seek_to_beginning(tp)
            else:
                self.consumer.seek(tp, committed)

    async def guardar(self, topic: str, valor: bytes | None) -> list[Decision]:
        """Store one record; the decisions ``obsoleta`` it caused are returned to be sent."""
        if valor is None:
            return []
        ahora = time.time()
        try:
            item = item_de_registro(topic, valor, self.settings)
            if item is None:
                datos = json.loads(valor)
                return await self.almacen.observar_version(
                    str(datos["sku"]), int(datos["version"]), ahora
                )
        except (ValidationError, ValueError, KeyError, TypeError) as exc:
            log.warning("unreadable record on %s skipped: %s", topic, exc)
            return []
        datos, tipo, motivo, criterios = item
        try:
            llegada = llegada_de(datos, tipo, self.estados())
        except (ValidationError, ValueError, TypeError) as exc:
            log.warning("unreadable gate key on %s record %s: %s", topic, datos["event_id"], exc)
            llegada = None
        if llegada is not None and llegada.sombra:
            # decided blind (docs/revision.md): the queue shows the code checks, not the judge
            criterios = criterios_a_ciegas(datos)
        candidata = es_candidata(datos)
        clave_id = llegada.clave.texto() if llegada is not None else None
        nuevo = ItemNuevo.de_registro(
            datos,
            tipo,
            motivo,
            criterios,
            event_id=id_item(datos["event_id"], candidata, clave_id),
            candidata=candidata,
        )
        return await self.almacen.guardar_item(nuevo, ahora, llegada)

    # ------------------------------------------------------------------ the outbox

    async def enviar(self, event_id: str) -> bool:
        """Send one stored decision's records if not sent yet; True once acknowledged.

        The lock makes the request handler and the periodic resend never send the same row
        twice from one process.
        """
        async with self._envio:
            decision = await self.almacen.decision(event_id)
            if decision is None or decision.enviada:
                return decision is not None
            await self._send(decision)
            await self.almacen.marcar_enviada(event_id)
            return True

    async def _send(self, decision: Decision) -> None:
        """The decision record, acknowledged; the worker publishes what it carries."""
        assert self.producer is not None
        registro = registro_a_enviar(decision.registro, decision.publicacion)
        await self.producer.send_and_wait(
            self.settings.topic_decisiones,
            encode_value(registro),
            key=str(registro["sku"]).encode(),
            headers=cabeceras_decision(registro),
        )

    async def enviar_pendientes(self, anteriores_a: float | None = None) -> int:
        """Send every unsent decision (those older than ``anteriores_a`` when given)."""
        pendientes = await self.almacen.pendientes(anteriores_a)
        for decision in pendientes:
            await self.enviar(decision.event_id)
        if pendientes:
            log.info("resent %d pending decisions", len(pendientes))
        return len(pendientes)

    async def _reenviar(self) -> None:
        """Retry rows a failed send left behind (broker down at decision time)."""
        while True:
            await asyncio.sleep(REINTENTO_S)
            try:
                await self.enviar_pendientes(anteriores_a=time.time() - REINTENTO_S)
            except Exception as exc:
                if self._rechazar(exc):
                    return
                log.exception("resending pending decisions failed; will retry")

    def _rechazar(self, exc: Exception) -> bool:
        """Whether Kafka refused the app (a missing ACL): then it is kept for the app's exit
        line and ``rechazada`` is set, once; retrying would not cure it."""
        if refusal(exc, self.settings) is None:
            return False
        if self.rechazo is None:
            self.rechazo = exc
            self.rechazada.set()
        return True


def registro_a_enviar(
    registro: dict[str, Any], publicacion: dict[str, Any] | None
) -> dict[str, Any]:
    """The ``DecisionRevision`` as sent: the stored record with the stored publication in
    ``publicacion`` (an approval's; null otherwise). Pure, so a resend is byte-identical; a row
    stored before the field existed gets it at its send, from the publication stored with it."""
    if publicacion is None:
        return registro
    return {**registro, "publicacion": publicacion}
