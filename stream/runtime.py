"""Assembling the loop from ``Settings``: chat model, agents, checkpointer, graph, runner.

Both entry points (``fichas worker`` and ``fichas procesar``) build the same ``Procesador``
here, so the offline command runs exactly the graph the worker runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from criterios import CRITERIOS_VERSION
from grafo import (
    Agentes,
    LLMSettings,
    Nodos,
    Procesador,
    RetryPolicy,
    Sensor,
    build_chat_model,
    close_chat_model,
    construir_grafo,
    open_checkpointer,
)
from stream.config import Settings
from stream.registro import mask_url


def llm_settings(settings: Settings) -> LLMSettings:
    """The LLM part of the settings, in the shape ``grafo`` takes."""
    return LLMSettings(
        url=settings.llm_url,
        model=settings.llm_modelo,
        api_key=settings.llm_api_key,
        timeout_s=settings.llm_timeout_s,
        max_tokens=settings.llm_max_tokens,
        repeat_penalty=settings.llm_repeat_penalty,
    )


@asynccontextmanager
async def build_processor(
    settings: Settings, sensor: Sensor | None = None, policy: RetryPolicy | None = None
) -> AsyncIterator[Procesador]:
    """Open the checkpointer and yield a ready ``Procesador``; close everything on exit."""
    model = build_chat_model(llm_settings(settings))
    agentes = Agentes(
        model, sensor, rubrica=settings.evaluador_rubrica, ejemplos=settings.generador_ejemplos
    )
    nodos = Nodos(
        agentes,
        modelo=settings.llm_modelo,
        criterios_version=CRITERIOS_VERSION,
        limpiar_origen=settings.limpiar_origen,
    )
    try:
        async with open_checkpointer(
            settings.postgres_dsn, settings.data_dir, pool_size=min(settings.concurrencia, 16)
        ) as saver:
            graph = construir_grafo(nodos, settings.max_intentos, saver, sensor)
            yield Procesador(
                graph, policy=policy, sensor=sensor, llm_url=mask_url(settings.llm_url)
            )
    finally:
        await close_chat_model(model)
