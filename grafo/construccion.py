"""Wiring of the loop: four nodes, two conditional edges, one counter.

START -> generar -> evaluar (code checks, then the evaluator) -> decidir
                \\-> enviar_a_revision (answer that is not a valid Ficha)
decidir -> publicar | enviar_a_revision | generar

A 3-attempt ficha writes 9 checkpoints (input, start, 3 x generar, 3 x evaluar, then publicar
or enviar_a_revision); the code checks run inside ``evaluar`` (see ``grafo.nodos``).
"""

from __future__ import annotations

import functools
import inspect
import time
from collections.abc import Callable
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from criterios.recursos import precargar
from grafo.estado import EstadoFicha
from grafo.nodos import Nodos, Ruta, decidir, tras_generar
from grafo.sensores import NullSensor, Sensor


def _timed(name: str, node: Callable[..., Any], sensor: Sensor) -> Callable[..., Any]:
    """Report each node's duration to the sensor: node latency measured in one place.

    Every wrapped node is a coroutine function, so every node runs on the event loop.
    """
    if inspect.iscoroutinefunction(node):

        @functools.wraps(node)
        async def run_async(state: EstadoFicha) -> Any:
            start = time.perf_counter()
            try:
                return await node(state)
            finally:
                sensor.on_node(name, time.perf_counter() - start)

        return run_async

    # Sync nodes (publicar, enviar_a_revision) are wrapped as coroutines on purpose: in an
    # async graph LangGraph runs a plain function in the default thread pool, a hand-off to
    # another thread and back for work that takes well under a millisecond of pure Python.
    @functools.wraps(node)
    async def run(state: EstadoFicha) -> Any:
        start = time.perf_counter()
        try:
            return node(state)
        finally:
            sensor.on_node(name, time.perf_counter() - start)

    return run


def _en_el_bucle(ruta: Callable[[EstadoFicha], Ruta]) -> Callable[[EstadoFicha], Any]:
    """A routing function as a coroutine, so LangGraph calls it on the event loop.

    As with the sync nodes (``_timed``): in an async graph LangGraph runs a plain path function
    in the default thread pool, two thread hops per edge for a pure function of a few
    microseconds (6 per 3-attempt ficha, 3 % of the worker's CPU in issue 33's profile).
    ``decidir`` and ``tras_generar`` stay plain functions, tested as such.
    """

    async def en_el_bucle(state: EstadoFicha) -> Ruta:
        return ruta(state)

    return en_el_bucle


def construir_grafo(
    nodos: Nodos,
    max_intentos: int,
    checkpointer: BaseCheckpointSaver | None,
    sensor: Sensor | None = None,
) -> CompiledStateGraph:
    """Compile the ficha loop; ``max_intentos`` and the gate mode are read only by ``decidir``.

    The graph is built once per process at start-up, and so are the code checks' language
    resources (``criterios.recursos``): otherwise the first ficha would load them.
    """
    if max_intentos < 1:
        raise ValueError("max_intentos must be >= 1")
    precargar()
    sensor = sensor or NullSensor()
    grafo = StateGraph(EstadoFicha)
    for name in ("generar", "evaluar", "publicar", "enviar_a_revision"):
        grafo.add_node(name, _timed(name, getattr(nodos, name), sensor))
    grafo.add_edge(START, "generar")
    grafo.add_conditional_edges(
        "generar",
        _en_el_bucle(tras_generar),
        {"evaluar": "evaluar", "enviar_a_revision": "enviar_a_revision"},
    )
    grafo.add_conditional_edges(
        "evaluar",
        _en_el_bucle(functools.partial(decidir, max_intentos=max_intentos, modo=nodos.modo_puerta)),
        {"generar": "generar", "publicar": "publicar", "enviar_a_revision": "enviar_a_revision"},
    )
    grafo.add_edge("publicar", END)
    grafo.add_edge("enviar_a_revision", END)
    return grafo.compile(checkpointer=checkpointer)
