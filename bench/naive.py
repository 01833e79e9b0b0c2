"""The naive design, as the source article writes it, for the benchmark to compare against.

Same prompts, messages, code checks, veto and outcome events as ``grafo`` (reused from it),
but with the article's structure:

* one event at a time: read one Kafka message, run the graph, produce the outcome, commit;
* both agents built with ``create_agent(...)`` and the default ``checkpointer=None``, so,
  invoked with a plain ``.ainvoke`` inside a node, they inherit the parent's checkpointer and
  write their own rows under their namespace;
* the parent graph invoked with LangGraph's default durability.

It reads the same ``FICHAS_*`` settings as the worker and writes its SQLite checkpoints under
``FICHAS_DATA_DIR``, so the harness measures both the same way. Once the consumer has joined
it writes its partition count to ``<FICHAS_DATA_DIR>/listo``; it stops on SIGTERM.
Run: ``python -m bench.naive``.
"""

from __future__ import annotations

import asyncio
import functools
import json
import signal
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.abc import ConsumerRebalanceListener
from langchain.agents import create_agent
from langchain.agents.structured_output import ProviderStrategy
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph

from criterios import CRITERIOS_VERSION, atributos_obligatorios, fallos, familias_conocidas
from criterios import comprobar as comprobar_ficha
from esquemas import EventoInvalido, Ficha, Veredicto, leer_evento
from esquemas.constantes import DESTINO_PUBLICADAS
from grafo import Agentes, LLMSettings, Nodos, build_chat_model, open_checkpointer
from grafo.estado import EstadoFicha, origen_de
from grafo.mensajes import (
    mensaje_evaluador,
    mensaje_generador,
    problemas_acumulados,
    prompt_evaluador,
    prompt_generador,
)
from grafo.nodos import decidir, forzar_rechazo
from infra.config import Settings

READY_FILE = "listo"


def build_naive_graph(settings: Settings, saver: BaseCheckpointSaver) -> CompiledStateGraph:
    """The article's five nodes; agents with the default checkpointer (inherit the parent's)."""
    # The article's stock ChatOpenAI, not the worker's DirectChatOpenAI (grafo.chat_model).
    model = build_chat_model(
        LLMSettings(url=settings.llm_url, model=settings.llm_modelo, api_key=settings.llm_api_key),
        direct=False,
    )
    generador = create_agent(
        model, tools=[], system_prompt=prompt_generador(), response_format=ProviderStrategy(Ficha)
    )
    evaluador = create_agent(
        model,
        tools=[],
        system_prompt=prompt_evaluador(),
        response_format=ProviderStrategy(Veredicto),
    )
    # publicar/enviar_a_revision only build the contract's outcome events; they never touch agents
    # The naive baseline keeps the rule it was measured with: publish on the judge's yes.
    salidas = Nodos(
        cast(Agentes, None), settings.llm_modelo, CRITERIOS_VERSION, modo_puerta="veredicto"
    )

    async def generar(state: EstadoFicha) -> dict[str, Any]:
        problemas = problemas_acumulados(state.get("historial", []))
        mensaje = {"role": "user", "content": mensaje_generador(state["origen"], problemas)}
        salida = await generador.ainvoke({"messages": [mensaje]})
        return {"ficha": salida["structured_response"].model_dump(), "intentos": 1}

    def comprobar(state: EstadoFicha) -> dict[str, Any]:
        return {"comprobaciones": comprobar_ficha(state["ficha"] or {}, state["origen"])}

    async def evaluar(state: EstadoFicha) -> dict[str, Any]:
        ficha = state["ficha"] or {}
        texto = mensaje_evaluador(ficha, state["comprobaciones"], state["origen"])
        salida = await evaluador.ainvoke({"messages": [{"role": "user", "content": texto}]})
        veredicto = forzar_rechazo(
            salida["structured_response"].model_dump(), fallos(state["comprobaciones"])
        )
        registro = {"intento": state["intentos"], "ficha": ficha, "veredicto": veredicto}
        return {"veredicto": veredicto, "historial": [registro]}

    grafo = StateGraph(EstadoFicha)
    grafo.add_node("generar", generar)
    grafo.add_node("comprobar", comprobar)
    grafo.add_node("evaluar", evaluar)
    grafo.add_node("publicar", salidas.publicar)
    grafo.add_node("enviar_a_revision", salidas.enviar_a_revision)
    grafo.add_edge(START, "generar")
    grafo.add_edge("generar", "comprobar")
    grafo.add_edge("comprobar", "evaluar")
    grafo.add_conditional_edges(
        "evaluar",
        functools.partial(decidir, max_intentos=settings.max_intentos, modo="veredicto"),
        {"generar": "generar", "publicar": "publicar", "enviar_a_revision": "enviar_a_revision"},
    )
    grafo.add_edge("publicar", END)
    grafo.add_edge("enviar_a_revision", END)
    return grafo.compile(checkpointer=saver)


async def serve(settings: Settings) -> None:
    """Consume one message at a time until SIGTERM: run, produce the outcome, commit."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    familias = familias_conocidas()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_brokers,
        group_id=settings.grupo,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_interval_ms=300_000,
    )
    producer = AIOKafkaProducer(bootstrap_servers=settings.kafka_brokers, acks="all")
    async with open_checkpointer(None, settings.data_dir) as saver:
        graph = build_naive_graph(settings, saver)
        await producer.start()
        await consumer.start()
        consumer.subscribe(
            [settings.topic_entrada], listener=_Listo(settings.data_dir / READY_FILE)
        )
        try:
            while not stop.is_set():
                batch = await consumer.getmany(timeout_ms=200, max_records=1)
                for records in batch.values():
                    for record in records:
                        await _handle(record.value, graph, producer, settings, familias)
                        await consumer.commit()
        finally:
            await consumer.stop()
            await producer.stop()


class _Listo(ConsumerRebalanceListener):  # type: ignore[misc]
    """Tells the harness how many partitions this process owns, after each rebalance."""

    def __init__(self, path: Path) -> None:
        self._path = path

    async def on_partitions_revoked(self, revoked: Any) -> None:
        """Nothing to finish: the loop handles one message at a time."""

    async def on_partitions_assigned(self, assigned: Any) -> None:
        """Write the count; the harness produces the feed once every partition is owned."""
        self._path.write_text(str(len(assigned)))


async def _handle(
    value: bytes,
    graph: CompiledStateGraph,
    producer: AIOKafkaProducer,
    settings: Settings,
    familias: Collection[str],
) -> None:
    """One event through the graph, its outcome to its topic (invalid input is skipped)."""
    try:
        evento = leer_evento(value, familias)
    except EventoInvalido:
        return
    datos = evento.model_dump(mode="json")
    entrada = {"evento": datos, "origen": origen_de(datos, atributos_obligatorios(evento.familia))}
    config: RunnableConfig = {"configurable": {"thread_id": f"{evento.sku}:{evento.event_id}"}}
    valores = await graph.ainvoke(entrada, config)
    salida = valores["salida"]
    publicada = salida["destino"] == DESTINO_PUBLICADAS
    topic = settings.topic_publicadas if publicada else settings.topic_revision
    payload = json.dumps(salida["evento"], ensure_ascii=False).encode()
    await producer.send_and_wait(topic, payload, key=evento.sku.encode())


def main() -> int:
    """Entry point of ``python -m bench.naive``."""
    asyncio.run(serve(Settings()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
