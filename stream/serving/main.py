"""``fichas worker`` served: start every part in order, run until a signal, stop them in order.

The start-up order is the contract's (docs/stream.md, "How one message flows", and
docs/operacion.md): the version store first (its schemas are set up or migrated under the
schema lock, independent of Kafka); then the topics (``ensure_topics`` waits for the broker by
the start-up rule, then exit 4, and the worker refuses unequal partition counts of the input
and the decisions topic); then the gate topic, read to its end before any input; then the
graph, and last the Kafka clients, the ``/metrics`` and health server and the signal handlers.
A stop is SIGTERM or SIGINT: the worker drains within ``FICHAS_GRACIA_S``, a drain stuck
past ``STOP_MARGIN_S`` more is cancelled as a SIGKILL would end it (``run_until_stopped``), the
clients get ``CLOSE_LIMIT_S`` to close (``close_within``), and a process still alive after all
that exits by force (``arm_forced_exit``): a stop always ends within ``FICHAS_GRACIA_S`` + 30 s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
import time
from collections.abc import Awaitable, Callable, Sequence

from criterios import CRITERIOS_VERSION
from grafo import Procesador
from infra import eventloop
from infra.config import Settings
from infra.kafka.clients import build_consumer, build_producer, committed_points, connect_admin
from infra.kafka.topics import check_co_partitioned, ensure_topics
from infra.tasks import await_chain
from stream.candidata.bucle import Candidata, abrir_candidata
from stream.commit.emitter import Emitter
from stream.flow.decisiones import particion_de_entrada
from stream.flow.worker import Worker
from stream.gobierno.identidad import SIN_LEER, ClaveEnUso, VigiaIdentidad
from stream.gobierno.runtime import build_processor
from stream.gobierno.seguimiento import seguir_puerta
from stream.metricas.prometheus import PrometheusSensor
from stream.serving.http import HealthServer
from versiones.almacen import ClaimStore, open_version_store

log = logging.getLogger(__name__)


async def serve(settings: Settings, on_started: Callable[[Worker], None] | None = None) -> None:
    """Start every part of the worker, run until a signal, stop them in order.

    ``on_started``: the worker is driven in a process of someone else's (the tests'
    ``harness.worker.WorkerInProcess``, on a thread of its own): no signal handlers are
    installed, and the callback gets the ``Worker`` whose ``stop`` ends the run.
    """
    log.info("event loop: %s", eventloop.loop_name())
    sensor = PrometheusSensor(CRITERIOS_VERSION, max_intentos=settings.max_intentos)
    # The version store first: opening it sets up or migrates the schemas under the schema
    # lock (migraciones.cerrojo), independent of Kafka. Then the topics: ``ensure_topics``
    # waits for the broker by the start-up rule (retry for FICHAS_KAFKA_ESPERA_S, then exit 4)
    # and creates the gate topic, so the gate reader, the first Kafka client after it, meets a
    # broker that answers. The graph (and its checkpointer) needs the gate source.
    async with open_version_store(settings.postgres_dsn, settings.data_dir) as versions:
        await ensure_topics(settings)
        await check_co_partitioned(settings)
        # The running key names the model that answers: read before the gate is resolved.
        clave = ClaveEnUso(settings, SIN_LEER, verificada=False)
        identidad = VigiaIdentidad(settings, clave, on_key=sensor.on_key)
        fallo = await identidad.primera()
        async with (
            seguir_puerta(settings, clave, sensor) as puerta,
            build_processor(
                settings, clave, sensor=sensor, puerta=puerta, on_probe=sensor.on_logprobs_probe
            ) as procesador,
        ):
            identidad.acompanar(procesador.health, fallo)
            vigilar = asyncio.create_task(identidad.vigilar(), name="modelo-servido")
            try:
                if on_started is None:  # a process of its own: see freeze_startup_heap
                    eventloop.freeze_startup_heap()
                await _serve(settings, sensor, procesador, versions, clave, on_started)
            finally:
                vigilar.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await vigilar


async def _serve(
    settings: Settings,
    sensor: PrometheusSensor,
    procesador: Procesador,
    versions: ClaimStore,
    clave: ClaveEnUso,
    on_started: Callable[[Worker], None] | None = None,
) -> None:
    """Run the worker on started parts until a signal, then stop Kafka clients and health.

    The candidate loop (``stream.candidata.bucle``, none unless ``FICHAS_CANDIDATA_PROPORCION`` > 0)
    starts before the consumer and stops after it: its runs in flight are then cancelled.
    """
    async with abrir_candidata(
        settings, clave, sensor.series, lambda txn_id: build_producer(settings, txn_id)
    ) as candidata:
        await _serve_worker(settings, sensor, procesador, versions, candidata, on_started)


async def _serve_worker(
    settings: Settings,
    sensor: PrometheusSensor,
    procesador: Procesador,
    versions: ClaimStore,
    candidata: Candidata | None,
    on_started: Callable[[Worker], None] | None,
) -> None:
    """The consumer, the producers, the worker and its health server, until a signal."""
    consumer = build_consumer(settings)
    admin = await connect_admin(settings)
    emitter = Emitter(
        lambda txn_id: build_producer(settings, txn_id),
        settings.grupo,
        reader=lambda tps: committed_points(admin, settings.grupo, tps),
        # People's decisions of partition p are written, and their offsets committed, by the
        # producer of input partition p (one writer per SKU, stream.flow.decisiones).
        producer_partition=lambda tp: particion_de_entrada(settings, tp),
        # Every topic the worker writes: a claim aborts there what a dead epoch left open.
        outputs=(
            settings.topic_publicadas,
            settings.topic_revision,
            settings.topic_muestra,
            settings.topic_dlq,
        ),
    )
    worker = Worker(settings, procesador, versions, sensor, consumer, emitter, candidata)
    health = HealthServer(sensor.registry, worker.readiness, settings.metricas_puerto)
    if on_started is None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, worker.stop)
    else:
        on_started(worker)
    await health.start()
    await consumer.start()
    failed = True
    try:
        await run_until_stopped(
            worker, settings.gracia_s + STOP_MARGIN_S, forced_exit=on_started is None
        )
        failed = False
    finally:
        await close_within(
            [
                ("the consumer", consumer.stop),
                ("the producers", emitter.close),
                ("the admin client", admin.close),
                ("the health server", health.stop),
            ],
            CLOSE_LIMIT_S,
            hung_level=logging.WARNING if failed else logging.ERROR,
        )


# Beyond the grace period, how long the drain may take to commit before it is cancelled.
STOP_MARGIN_S = 20.0
# Then how long the Kafka clients and the health server get to close, all together.
CLOSE_LIMIT_S = 8.0
# Then how long the event loop gets to end its last tasks before the process exits by force.
EXIT_MARGIN_S = 2.0
# The exit status of a stop that had to be forced (the orchestrator sees a failed stop).
EXIT_FORCED = 1


async def close_within(
    steps: Sequence[tuple[str, Callable[[], Awaitable[object]]]],
    limit_s: float,
    hung_level: int = logging.ERROR,
) -> None:
    """Close each part in order within ``limit_s`` seconds for all; log and skip what hangs.

    A Kafka client's ``stop`` waits on its broker (a producer's pending transaction, a
    consumer leaving its group): after a broker SIGKILL and return, one such wait outlived
    the fault suite's 60 s stop bound. What does not close in time is left to the process's
    end; what it had in flight is redelivered, as after any crash (guarantee 2).
    ``hung_level`` is ERROR on a signalled stop. After a fatal error it is WARNING: the
    error's own line is the one a person acts on (a refused consumer group, for one, can leave
    aiokafka's coordinator waiting on a lookup, and that wait is not a second problem).
    """
    deadline = time.monotonic() + limit_s
    for name, close in steps:
        remaining = max(deadline - time.monotonic(), 0.1)
        try:
            await asyncio.wait_for(close(), remaining)
        except TimeoutError:
            log.log(
                hung_level,
                "%s did not close within the stop's %.0f s: left to the exit",
                name,
                limit_s,
            )
        except Exception as exc:  # closing goes on with the next part
            log.warning("%s failed to close: %s", name, exc)


def arm_forced_exit(limit_s: float) -> threading.Timer:
    """Exit the process by force ``limit_s`` seconds from now unless it ended first.

    The last resort of a stop: a thread of its own, so that it fires even when the event
    loop is stuck ending its tasks (``asyncio.run`` waits for every cancelled task).
    """

    def _exit() -> None:
        log.critical(
            "the worker did not end within %.0f s of the stop signal: exiting by force", limit_s
        )
        logging.shutdown()
        os._exit(EXIT_FORCED)

    timer = threading.Timer(limit_s, _exit)
    timer.daemon = True
    timer.start()
    return timer


async def run_until_stopped(worker: Worker, limit_s: float, forced_exit: bool = False) -> None:
    """Run the worker; once asked to stop, give it ``limit_s`` to drain and commit, then cancel.

    A stop is seen when the poll loop comes round to its flag. An await in that loop that never
    returns (a Kafka client waiting on a broker that came back without it: seen once in the
    fault suite, after a broker SIGKILL under heavy load) kept the process alive after SIGTERM
    until something killed it. Cancelling ends it as a SIGKILL would, and says so in the log:
    what was in flight is redelivered, as after any crash (guarantee 2). ``forced_exit``
    (a worker in a process of its own) also arms ``arm_forced_exit`` once the signal comes.
    """
    run = asyncio.create_task(worker.run(), name="worker-run")
    asked = asyncio.create_task(worker.stop_requested(), name="worker-stop")
    try:
        await asyncio.wait({run, asked}, return_when=asyncio.FIRST_COMPLETED)
        if asked.done() and forced_exit:
            arm_forced_exit(limit_s + CLOSE_LIMIT_S + EXIT_MARGIN_S)
        if not run.done():
            done, _ = await asyncio.wait({run}, timeout=limit_s)
            if not done:
                log.error(
                    "the worker did not stop within %.0f s of the signal: cancelling what it "
                    "was waiting for (its fichas are redelivered, as after a crash); it waited "
                    "at: %s",
                    limit_s,
                    await_chain(run),
                )
                run.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await run
                return
        await run
    finally:
        asked.cancel()
        if not run.done():
            run.cancel()


def run_worker(settings: Settings) -> int:
    """Entry point of ``fichas worker``: exit 0 after a clean, signalled stop."""
    eventloop.run(serve(settings))
    log.info("worker stopped")
    return 0
