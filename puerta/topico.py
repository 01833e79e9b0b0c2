"""The gate states on Kafka: the compacted topic ``fichas.puerta``, written and followed.

Why a compacted topic (docs/puerta.md): every replica of the worker must apply the same gate,
and a gate closed by the reviewer app must stop automatic publication everywhere within
seconds. A compacted topic keyed by gate id keeps the newest state of every gate forever, so a
worker that starts (or restarts) reads it from the beginning and has the current state of every
gate, with no database shared between the worker and the app, and with the same delivery
guarantees as the rest of the contract.

The reader joins no consumer group: each worker needs *every* gate, not a share of the
partitions, and must never move anyone's offsets. It assigns all partitions, seeks to the
beginning, reads with ``isolation_level=read_committed`` (guarantee 10 of the contract) and
keeps following. The newest record per key wins (one key always lands on one partition, so
"newest" is the partition's order). A record's key is its value's ``id``: the gate id for a
gate's state, the hold id (``<gate id>|retencion``, v1.5) for a person's hold or release. Each
record is read by ``puerta.lectura``: one this version cannot interpret closes the gate its key
names (a hold: held) and is logged once with why; only a record whose key names no gate is
skipped. A tombstone removes the record (a gate then counts as closed, a hold as released).
Why a topic: docs/puerta.md, "The topic".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable

from aiokafka import AIOKafkaConsumer, ConsumerRecord, TopicPartition

from esquemas.estado_puerta import EstadoPuerta
from esquemas.wire import cabeceras_estado, encode_value
from infra.config import Settings
from infra.kafka.access import AUTHORIZATION_ERRORS
from infra.kafka.clients import build_reader, build_writer
from infra.kafka.topics import topic_partitions
from puerta.lectura import Ilegible, Instantanea, leer_registro

log = logging.getLogger(__name__)

ESPERA_TOPIC_S = 5.0  # how often a reader looks again for a topic that does not exist yet
PAUSA_ERROR_S = 1.0  # after an unexpected error while following, before trying again


def registro_de(estado: EstadoPuerta) -> tuple[bytes, bytes]:
    """The record of a state: key = its id (gate id, or hold id for a hold), value = its JSON."""
    return estado.id.encode("utf-8"), encode_value(estado)


async def escribir_estados(
    settings: Settings, estados: Iterable[EstadoPuerta], topic: str | None = None
) -> None:
    """Write several states to ``topic`` (``FICHAS_TOPIC_PUERTA`` if None) with one idempotent
    producer, each acknowledged by all replicas."""
    topic = topic or settings.topic_puerta
    producer = build_writer(settings, client_id="fichas-puerta")
    await producer.start()
    try:
        for estado in estados:
            clave, valor = registro_de(estado)
            await producer.send_and_wait(topic, valor, key=clave, headers=cabeceras_estado())
            log.info(
                "gate %s written: %s (umbral %s)",
                estado.id,
                "open" if estado.abierta else "closed",
                estado.umbral,
                extra={"puerta": estado.id, "motivo": estado.motivo, "topic": topic},
            )
    finally:
        await producer.stop()


async def escribir_estado(
    settings: Settings, estado: EstadoPuerta, topic: str | None = None
) -> None:
    """Write one gate state, keyed by its id; it replaces the previous state of that gate."""
    await escribir_estados(settings, [estado], topic)


class LectorPuertas:
    """Follows ``fichas.puerta`` from the beginning; ``estados()`` is the current snapshot.

    ``al_cambiar`` (optional) is called with the key of each gate or hold whose state changed
    (a record read, an unreadable one closing it, a tombstone), in the reader's task; an
    exception in it is logged and ignored.
    """

    def __init__(
        self,
        topic: str,
        al_cambiar: Callable[[str], None] | None = None,
        client_id: str = "fichas-puerta",
    ) -> None:
        self.topic = topic
        self.al_cambiar = al_cambiar
        self.client_id = client_id
        self._instantanea = Instantanea()
        self._al_dia = asyncio.Event()
        self._consumer: AIOKafkaConsumer | None = None
        self._tarea: asyncio.Task[None] | None = None
        self._rechazo: BaseException | None = None
        self.invalidos = 0  # records skipped: their key names no gate

    async def start(self, settings: Settings) -> None:
        """Connect and start following in a background task (returns before catching up)."""
        self._consumer = build_reader(settings, client_id=self.client_id)
        await self._consumer.start()
        self._tarea = asyncio.create_task(self._seguir(settings), name=f"lector-{self.topic}")

    async def stop(self) -> None:
        """Stop following and close the connection."""
        if self._tarea is not None:
            self._tarea.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tarea
            self._tarea = None
        if self._consumer is not None:
            await self._consumer.stop()
            self._consumer = None

    async def al_dia(self) -> None:
        """Return once every record that existed when the reader started has been read.

        A topic that does not exist yet counts as read (no gate: closed); the reader keeps
        looking for it and follows it once it appears. Kafka refusing this client before it
        caught up (an ACL on the topic) is raised here: the caller's refusal, not a wait.
        """
        await self._al_dia.wait()
        if self._rechazo is not None:
            raise self._rechazo

    def estados(self) -> dict[str, EstadoPuerta]:
        """A copy of the current state of every gate and hold, by key; a gate whose newest
        record this version cannot read is absent (closed), such a hold is held."""
        return self._instantanea.estados()

    def ilegibles(self) -> dict[str, Ilegible]:
        """The newest records this version could not read, by key (each closes its gate)."""
        return self._instantanea.ilegibles()

    async def _particiones(self, settings: Settings) -> list[TopicPartition]:
        """Every partition of the topic, waiting for the topic to exist (admin metadata)."""
        avisado = False
        while True:
            particiones, _ = await topic_partitions(settings, [self.topic], self.client_id)
            if particiones:
                return particiones
            if not avisado:
                log.warning(
                    "topic %s does not exist yet: every gate is closed until it does",
                    self.topic,
                    extra={"topic": self.topic},
                )
                avisado = True
                self._al_dia.set()
            await asyncio.sleep(ESPERA_TOPIC_S)

    async def _seguir(self, settings: Settings) -> None:
        """Read from the beginning, mark when caught up, then keep following for ever."""
        assert self._consumer is not None
        consumer = self._consumer
        while True:
            try:
                particiones = await self._particiones(settings)
                break
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                if self._rechazado(exc):
                    return
                log.warning("cannot describe topic %s: %s", self.topic, exc)
                await asyncio.sleep(PAUSA_ERROR_S)
        consumer.assign(particiones)
        await consumer.seek_to_beginning(*particiones)
        finales = await consumer.end_offsets(particiones)
        pendientes = {tp for tp, fin in finales.items() if fin > 0}
        while True:
            if not pendientes:
                self._al_dia.set()
            try:
                lotes = await consumer.getmany(timeout_ms=500)
                for registros in lotes.values():
                    for registro in registros:
                        self._aplicar(registro)
                for tp in list(pendientes):
                    if await consumer.position(tp) >= finales[tp]:
                        pendientes.discard(tp)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # keep the gates of every worker alive; log and go on
                if self._rechazado(exc):
                    return
                log.warning("error following %s: %s", self.topic, exc, extra={"topic": self.topic})
                await asyncio.sleep(PAUSA_ERROR_S)

    def _rechazado(self, exc: BaseException) -> bool:
        """Whether ``exc`` is Kafka refusing this reader before it caught up: then ``al_dia``
        raises it and the reader stops (retrying cannot cure an ACL). Once caught up, errors
        are logged and retried, so a worker keeps the gates it has."""
        if self._al_dia.is_set() or not isinstance(exc, AUTHORIZATION_ERRORS):
            return False
        self._rechazo = exc
        self._al_dia.set()
        return True

    def _aplicar(self, registro: ConsumerRecord) -> None:
        """Take one record into the snapshot; log a skipped or unreadable one, once."""
        clave = None if registro.key is None else bytes(registro.key).decode("utf-8", "replace")
        donde = f"{registro.topic} partition {registro.partition} offset {registro.offset}"
        try:
            lectura = leer_registro(clave, registro.value)
        except ValueError as exc:
            self.invalidos += 1
            log.warning("skipped record on %s: %s", donde, exc, extra={"topic": registro.topic})
            return
        assert clave is not None
        if isinstance(lectura, Ilegible):
            efecto = "held" if lectura.retencion else "closed"
            log.warning(
                "gate record %s on %s cannot be read by this version (%s): %s until a record "
                "this version reads replaces it",
                clave,
                donde,
                lectura.razon,
                efecto,
                extra={"puerta": clave, "topic": registro.topic, "offset": registro.offset},
            )
        cambiadas = self._instantanea.aplicar(clave, lectura)
        if lectura is None and cambiadas:
            log.warning("gate %s removed by a tombstone: closed", clave)
        for cambiada in cambiadas:
            if self.al_cambiar is None:
                break
            try:
                self.al_cambiar(cambiada)
            except Exception:
                log.exception("gate change callback failed for %s", cambiada)


async def leer_estados(
    settings: Settings, topic: str | None = None, espera_s: float = 60.0
) -> dict[str, EstadoPuerta]:
    """The current state of every gate on ``topic`` (``FICHAS_TOPIC_PUERTA`` if None), read once
    to the end (for tools, not for workers)."""
    lector = LectorPuertas(topic or settings.topic_puerta, client_id="fichas-puerta-lectura")
    await lector.start(settings)
    try:
        await asyncio.wait_for(lector.al_dia(), espera_s)
        return lector.estados()
    finally:
        await lector.stop()
