"""The candidate loop in shadow beside the live one (issue 41): routing, budget, run, write.

``a_candidata`` routes by a hash of the SKU alone; ``Candidata.ofrecer`` starts the candidate
run beside a routed event's live run, or skips it (counted: budget full, served model not
verified, same key as the live one), and never makes the live outcome wait. Its final ficha is
a ``FichaEnRevision`` marked ``candidata``, written to the review topic in a transaction of its
own (``EscritorCandidata``), nothing else; its graph runs with every gate closed. Best effort: a
stop or a crash loses the runs in flight. Why: docs/stream.md, "The candidate loop"; what an
on-call sees: docs/operacion.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from aiokafka import AIOKafkaProducer

from esquemas import EventoCambio
from esquemas.constantes import DESTINO_REVISION
from esquemas.estado_puerta import ClavePuerta
from esquemas.wire import cabeceras_resultado, encode_value
from grafo import Backoff, Procesador, Resultado
from infra.config import ConfigError, Settings
from stream.candidata.ajustes import candidata, candidata_concurrencia
from stream.candidata.metricas import SensorCandidata
from stream.commit.producers import Record
from stream.gobierno.clave import clave_de
from stream.gobierno.fuente import describir_clave
from stream.gobierno.identidad import SIN_LEER, ClaveEnUso, VigiaIdentidad
from stream.gobierno.runtime import CANDIDATA, build_processor
from stream.metricas.series import Series

log = logging.getLogger(__name__)

# How long a candidate run waits for its LLM before it gives up (lost, counted): it holds a
# slot of the budget meanwhile, and shadow evidence is not worth waiting for.
ESPERA_LLM_S = 120.0
POLITICA_LLM = Backoff(base_s=0.5, cap_s=15.0, max_wait_s=ESPERA_LLM_S)
CIERRE_S = 5.0  # at stop, how long the cancelled candidate runs get to end


def a_candidata(sku: str, proporcion: float) -> bool:
    """Whether ``sku``'s events also run the candidate: the first 8 bytes of
    sha256("candidata:" + sku), as a fraction of 2**64, below ``proporcion``."""
    digest = hashlib.sha256(("candidata:" + sku).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < proporcion


def prefijo_hilo(candidata: Settings) -> str:
    """The candidate's checkpoint threads: ``candidata-<key id>:``, the key as its settings
    make it (before any served model is read), so a thread left by a crash is resumed only by
    the same candidate configuration, and never collides with the live thread of its event."""
    return f"candidata-{clave_de(candidata, None).texto()}:"


def misma_clave_declarada(viva: Settings, candidata: Settings) -> bool:
    """The candidate's key equals the live key whatever the server says: same URL and every
    part the settings make equal (model, prompts, criteria, mode, request settings)."""
    if candidata.llm_url != viva.llm_url:
        return False  # another server: its served model decides (``Candidata.ofrecer``)
    return clave_de(candidata, None) == clave_de(viva, None)


def comprobar(viva: Settings, candidata: Settings) -> None:
    """Start-up: refuse (``ConfigError``, exit 2) a candidate that would run under the live key."""
    if misma_clave_declarada(viva, candidata):
        raise ConfigError(
            [
                f"FICHAS_CANDIDATA_PROPORCION={viva.candidata_proporcion} is not valid: the "
                f"candidate's gate key is the live key {clave_de(viva, None).texto()}: set a "
                "FICHAS_CANDIDATA_* override that changes the model, a prompt or a request "
                "setting, or set FICHAS_CANDIDATA_PROPORCION=0"
            ]
        )


def registro_candidata(settings: Settings, resultado: Resultado) -> Record:
    """The review-topic record of a candidate run's outcome; ``ValueError`` for anything that
    is not a review item marked ``candidata`` (never written: a candidate never publishes)."""
    salida = resultado.salida
    if resultado.destino != DESTINO_REVISION or salida.get("candidata") is not True:
        raise ValueError(f"a candidate run ended as {resultado.destino!r}, not a candidate item")
    headers = cabeceras_resultado(DESTINO_REVISION, salida)
    return Record(
        settings.topic_revision, encode_value(salida), resultado.sku.encode("utf-8"), headers
    )


class EscritorCandidata:
    """This worker's one transactional producer of candidate items, started on first use.

    Its transactional id is the worker's own (``<grupo>.candidata.<random>``, inside the group's
    ACL prefix), so it fences no live producer and none fences it; one transaction per item,
    with no offset in it. A fenced or failed producer is dropped and started again next time.
    """

    def __init__(self, factory: Callable[[str], AIOKafkaProducer], transactional_id: str) -> None:
        self._factory = factory
        self._id = transactional_id
        self._producer: AIOKafkaProducer | None = None
        self._lock = asyncio.Lock()

    async def escribir(self, record: Record) -> None:
        """Write ``record`` in a transaction of its own, committed when this returns."""
        async with self._lock:
            if self._producer is None:
                producer = self._factory(self._id)
                try:
                    await producer.start()
                except BaseException:
                    await _stop(producer)
                    raise
                self._producer = producer
            try:
                async with self._producer.transaction():
                    await self._producer.send_and_wait(
                        record.topic, record.value, key=record.key, headers=record.headers
                    )
            except BaseException:  # fenced, failed or cancelled mid-transaction: start anew
                producer, self._producer = self._producer, None
                await _stop(producer)
                raise

    async def cerrar(self) -> None:
        """Stop the producer (shutdown)."""
        async with self._lock:
            producer, self._producer = self._producer, None
        if producer is not None:
            await _stop(producer)


async def _stop(producer: AIOKafkaProducer) -> None:
    """Stop a producer; an open transaction is aborted by the broker."""
    with contextlib.suppress(Exception):
        await producer.stop()


class Candidata:
    """Starts and ends this worker's candidate runs (one per routed event, within the budget)."""

    def __init__(
        self,
        settings: Settings,
        procesador: Procesador,
        clave: ClaveEnUso,
        viva: ClaveEnUso,
        escritor: EscritorCandidata,
        sensor: SensorCandidata,
        presupuesto: int,
    ) -> None:
        self._settings = settings
        self._procesador = procesador
        self._clave = clave
        self._viva = viva
        self._escritor = escritor
        self._sensor = sensor
        self._presupuesto = presupuesto
        self._runs: set[asyncio.Task[None]] = set()
        self._dicho: ClavePuerta | None = None  # the equal key last said in the log

    @property
    def en_curso(self) -> int:
        """Candidate runs in flight now."""
        return len(self._runs)

    def ofrecer(self, evento: EventoCambio) -> bool:
        """Start the candidate run of ``evento`` if its SKU is routed to the candidate and the
        candidate may run now; never waits. True when a run started."""
        if not a_candidata(evento.sku, self._settings.candidata_proporcion):
            return False
        motivo = self._motivo_para_omitir()
        if motivo is not None:
            self._sensor.on_skipped(motivo)
            return False
        task = asyncio.create_task(self._correr(evento), name=f"candidata-{evento.event_id}")
        self._runs.add(task)
        task.add_done_callback(self._terminada)
        self._sensor.on_started(len(self._runs))
        return True

    def _motivo_para_omitir(self) -> str | None:
        """Why no candidate run may start now
        (``stream.metricas.series.CANDIDATE_SKIP_REASONS``)."""
        if len(self._runs) >= self._presupuesto:
            return "budget"
        if not self._clave.verificada or not self._procesador.health.is_up:
            return "identity"
        if self._clave.clave == self._viva.clave:
            if self._dicho != self._clave.clave:
                self._dicho = self._clave.clave
                log.error(
                    "the candidate's gate key is the live key %s (its server serves the same "
                    "model): no candidate run starts while they are equal; change a "
                    "FICHAS_CANDIDATA_* setting or set FICHAS_CANDIDATA_PROPORCION=0",
                    self._viva.clave.texto(),
                )
            return "same_key"
        return None

    def _terminada(self, task: asyncio.Task[None]) -> None:
        """A run ended: free its slot of the budget."""
        self._runs.discard(task)
        self._sensor.on_ended(len(self._runs))

    async def _correr(self, evento: EventoCambio) -> None:
        """Run the candidate loop on ``evento`` and write its review item; a failure or a stop
        loses the item (counted, logged), never the live outcome."""
        with self._sensor.por_ejecucion():
            try:
                resultado = await self._procesador.procesar(evento)
                await self._escritor.escribir(registro_candidata(self._settings, resultado))
                self._sensor.on_written()
            except asyncio.CancelledError:
                self._sensor.on_lost("stop")
                raise
            except Exception as exc:
                log.warning(
                    "candidate run of %s lost: %s: %s", evento.event_id, type(exc).__name__, exc
                )
                self._sensor.on_lost("failure")
            finally:
                with contextlib.suppress(Exception):
                    await self._procesador.olvidar(evento)

    async def cerrar(self) -> None:
        """Stop: cancel the runs in flight (lost, counted) and close the producer."""
        runs = list(self._runs)
        for task in runs:
            task.cancel()
        if runs:
            log.info("stopping: %d candidate runs in flight are cancelled (lost)", len(runs))
            await asyncio.wait(runs, timeout=CIERRE_S)
        await self._escritor.cerrar()


@asynccontextmanager
async def abrir_candidata(
    settings: Settings,
    viva: ClaveEnUso,
    series: Series,
    producer_factory: Callable[[str], AIOKafkaProducer],
) -> AsyncIterator[Candidata | None]:
    """The worker's candidate loop, or None when there is none (``FICHAS_CANDIDATA_PROPORCION``
    0): refused at once (``ConfigError``) if its key is the live key by its settings; its own
    served-model watcher, graph and checkpoint threads, sensor and producer; on exit its runs
    are cancelled (lost) and everything closed."""
    ajustes = candidata(settings)
    if ajustes is None:
        yield None
        return
    comprobar(settings, ajustes)
    sensor = SensorCandidata(series)
    clave = ClaveEnUso(ajustes, SIN_LEER, verificada=False)
    vigia = VigiaIdentidad(ajustes, clave, on_key=sensor.on_key, etiqueta=CANDIDATA)
    fallo = await vigia.primera()
    async with build_processor(
        ajustes, clave, sensor=sensor, policy=POLITICA_LLM, candidata=prefijo_hilo(ajustes)
    ) as procesador:
        vigia.acompanar(procesador.health, fallo)
        vigilar = asyncio.create_task(vigia.vigilar(), name="modelo-servido-candidata")
        escritor = EscritorCandidata(
            producer_factory, f"{settings.grupo}.candidata.{uuid.uuid4().hex[:12]}"
        )
        presupuesto = candidata_concurrencia(settings)
        bucle = Candidata(settings, procesador, clave, viva, escritor, sensor, presupuesto)
        log.info(
            "candidate loop: %.0f %% of SKUs, at most %d runs in flight; key %s (live %s)",
            100 * settings.candidata_proporcion,
            presupuesto,
            describir_clave(clave.clave),
            viva.clave.texto(),
        )
        try:
            yield bucle
        finally:
            await bucle.cerrar()
            vigilar.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await vigilar
