"""The real loop against a given LLM URL: real ChatOpenAI, real HTTP, real checkpointer.

The loop runs under ``FICHAS_PUERTA=veredicto`` unless a test says otherwise: most graph tests
are about the loop's plumbing (retries, checkpoints, requests), whose meaning predates the
publication gate; the tests about the gate pass ``modo_puerta="certificada"`` and a source.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from langgraph.checkpoint.base import BaseCheckpointSaver

from esquemas.constantes import PUERTA_VEREDICTO, ModoPuerta
from grafo import (
    Agentes,
    Backoff,
    FuentePuerta,
    LLMSettings,
    Nodos,
    Plantillas,
    Procesador,
    PuertaCerrada,
    build_chat_model,
    clave_puerta,
    close_chat_model,
    construir_grafo,
    open_checkpointer,
)

CRITERIOS_VERSION_PRUEBA = "test"


@asynccontextmanager
async def abrir_procesador(
    url: str,
    data_dir: Path,
    max_intentos: int = 3,
    postgres_dsn: str | None = None,
    timeout_s: float = 10.0,
    modo_puerta: ModoPuerta = PUERTA_VEREDICTO,
    puerta: FuentePuerta | None = None,
    limpiar_origen: bool = False,
    plantillas: Plantillas | None = None,
    sombra_proporcion: float = 0.0,
) -> AsyncIterator[tuple[Procesador, BaseCheckpointSaver]]:
    """A ``Procesador`` over the real graph and its saver, with fast retries (tests, bench);
    ``plantillas`` replace the package's prompt templates, in the agents and in the key;
    ``sombra_proporcion`` is the blind shadow share of an open gate (none by default)."""
    plantillas = plantillas or Plantillas()
    model = build_chat_model(LLMSettings(url=url, model="fake", timeout_s=timeout_s))
    nodos = Nodos(
        Agentes(model, plantillas=plantillas),
        modelo="fake",
        criterios_version=CRITERIOS_VERSION_PRUEBA,
        limpiar_origen=limpiar_origen,
        modo_puerta=modo_puerta,
        puerta=puerta or PuertaCerrada(),
        clave=clave_puerta(
            "fake",
            False,
            CRITERIOS_VERSION_PRUEBA,
            limpiar_origen=limpiar_origen,
            max_intentos=max_intentos,
            plantillas=plantillas,
        ),
        sombra_proporcion=sombra_proporcion,
    )
    try:
        async with open_checkpointer(postgres_dsn, data_dir) as saver:
            graph = construir_grafo(nodos, max_intentos, saver)
            policy = Backoff(base_s=0.05, cap_s=0.2, max_wait_s=30)
            yield Procesador(graph, policy=policy), saver
    finally:
        await close_chat_model(model)
