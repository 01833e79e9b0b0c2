"""Assembling the loop from ``Settings``: chat model, agents, checkpointer, graph, runner.

Both entry points (``fichas worker`` and ``fichas procesar``) build the same ``Procesador``
here, so the offline command runs exactly the graph the worker runs. Each hands it the
publication gate it reads (``stream.gobierno.fuente``): the worker the topic ``fichas.puerta``, the
offline command an audit file or none (closed), and the running key (``clave_de``: the settings'
parts, both sides' request settings, and the served model's identity, which
``stream.gobierno.identidad`` reads from the server and keeps current in the worker).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from criterios import CRITERIOS_VERSION, lector
from esquemas.constantes import MODO_LECTOR, PUERTA_CERTIFICADA
from esquemas.estado_puerta import ClavePuerta
from grafo import (
    Agentes,
    Backoff,
    FuentePuerta,
    LogprobsProbe,
    Nodos,
    Procesador,
    PuertaCerrada,
    Sensor,
    build_chat_model,
    close_chat_model,
    construir_grafo,
    open_checkpointer,
    probe_logprobs,
)
from infra.config import Settings
from infra.logs import mask_url
from puerta.auditoria import estados_de_archivo
from stream.gobierno.clave import llm_settings, plantillas
from stream.gobierno.fuente import PuertaResuelta, fija

if TYPE_CHECKING:
    from stream.gobierno.identidad import ClaveEnUso


CANDIDATA = " (candidate)"  # after the candidate's LLM URL in its log lines


def puerta_sin_kafka(
    settings: Settings, clave: ClavePuerta, archivo: Path | None = None
) -> PuertaResuelta:
    """The gate of a run without Kafka (``fichas procesar``, ``fichas evaluar --modo bucle``)
    under the running ``clave``: the states of ``archivo`` or ``FICHAS_PUERTA_ARCHIVO``, or
    none (every gate closed).

    Raises ``ValueError`` for a file that is not gate states.
    """
    archivo = archivo or settings.puerta_archivo
    estados = estados_de_archivo(archivo) if archivo is not None else {}
    return fija(clave, estados)


@asynccontextmanager
async def build_processor(
    settings: Settings,
    clave: ClavePuerta | ClaveEnUso,
    sensor: Sensor | None = None,
    policy: Backoff | None = None,
    puerta: FuentePuerta | None = None,
    on_probe: Callable[[LogprobsProbe], None] | None = None,
    candidata: str | None = None,
) -> AsyncIterator[Procesador]:
    """Open the checkpointer and yield a ready ``Procesador``; close everything on exit.

    ``clave`` is the running key stamped on every outcome: fixed, or the worker's
    ``ClaveEnUso``, which the nodes follow when the served model changes. ``puerta`` is where
    the loop reads the gate under ``FICHAS_PUERTA=certificada``; without
    one every gate is closed and nothing is published by the loop. With ``on_probe`` (the
    worker), the same agents ask the LLM once, in the background, whether it gives the
    evaluator its log-probabilities (``grafo.logprobs_probe``, which logs the one line), and
    ``on_probe`` gets the answer; start-up never waits for it, and it is cancelled on exit.

    ``candidata`` (the candidate loop, ``stream.candidata.bucle``) is the prefix of its checkpoint
    threads: its nodes run with every gate closed whatever ``puerta`` says, mark every outcome
    ``candidata``, and its runs never share a thread with the live run of the same event.
    """
    if candidata is not None:
        puerta = None  # closed: a candidate never publishes
    modo_puerta = settings.puerta if candidata is None else PUERTA_CERTIFICADA
    model = build_chat_model(llm_settings(settings))
    agentes = Agentes(
        model,
        sensor,
        rubrica=settings.evaluador,
        ejemplos=settings.generador_ejemplos,
        senal=settings.evaluador_senal,
        plantillas=plantillas(settings),
    )
    nodos = Nodos(
        agentes,
        modelo=settings.llm_modelo,
        criterios_version=CRITERIOS_VERSION,
        limpiar_origen=settings.limpiar_origen,
        modo_puerta=modo_puerta,
        puerta=puerta or PuertaCerrada(),
        clave=clave if isinstance(clave, ClavePuerta) else clave.clave,
        candidata=candidata is not None,
        sombra_proporcion=settings.sombra_proporcion if candidata is None else 0.0,
    )
    pool_size = min(settings.concurrencia, 16) if candidata is None else 4
    if not isinstance(clave, ClavePuerta):
        clave.seguir(lambda en_uso: setattr(nodos, "clave", en_uso.clave))
    try:
        async with open_checkpointer(
            settings.postgres_dsn, settings.data_dir, pool_size=pool_size
        ) as saver:
            graph = construir_grafo(nodos, settings.max_intentos, saver, sensor)
            async with _probe(settings, agentes, on_probe):
                yield Procesador(
                    graph,
                    policy=policy,
                    sensor=sensor,
                    llm_url=mask_url(settings.llm_url) + ("" if candidata is None else CANDIDATA),
                    prefijo_hilo=candidata or "",
                )
    finally:
        await close_chat_model(model)


@asynccontextmanager
async def _probe(
    settings: Settings, agentes: Agentes, on_probe: Callable[[LogprobsProbe], None] | None
) -> AsyncIterator[None]:
    """Run the log-probabilities probe beside the caller's work; cancel it if still running.
    The model-free evaluator (``lector``) asks the server nothing, so there is nothing to
    probe: its reader of translations is loaded instead, before the first ficha."""
    if agentes.modo == MODO_LECTOR:
        lector.cargar()
        yield
        return
    if on_probe is None:
        yield
        return

    async def probe() -> None:
        on_probe(await probe_logprobs(agentes, mask_url(settings.llm_url), settings.llm_modelo))

    task = asyncio.create_task(probe(), name="logprobs-probe")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
