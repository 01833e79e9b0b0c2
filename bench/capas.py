"""CPU per LLM call layer by layer, and of the parent graph alone: where a ficha's CPU goes.

``python -m bench.capas [--n 300]`` prints, for one generator request made one at a time
against the fake LLM at 0 ms latency, the CPU this process spends per call at each layer the
worker stacks up (raw HTTP, the ``openai`` client, ``ChatOpenAI``, the ``create_agent`` graph),
stock and as shipped (``grafo.chat_model``); then the parent graph of a 3-attempt ficha with
the agents replaced by canned answers, under each saver. ``docs/rendimiento.md`` explains the
figures. CPU is ``time.process_time`` (all threads of this process), so thread-pool work counts.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.feed import fake_llm_config, make_feed
from harness.fake_llm_client import FakeLLM

Call = Callable[[], Awaitable[Any]]


async def _cpu_ms(call: Call, n: int, warmup: int = 20) -> float:
    """CPU milliseconds per awaited call, after a warm-up."""
    for _ in range(warmup):
        await call()
    start = time.process_time()
    for _ in range(n):
        await call()
    return (time.process_time() - start) * 1000 / n


def _origen() -> dict[str, Any]:
    from criterios import atributos_obligatorios
    from esquemas import EventoCambio
    from grafo.estado import origen_de

    evento = EventoCambio.model_validate_json(make_feed(1, {"1": 1.0}, "capas")[0].valor)
    datos = evento.model_dump(mode="json")
    return origen_de(datos, atributos_obligatorios(evento.familia))


async def capas_llm(url: str, n: int) -> list[tuple[str, float]]:
    """One generator request through each layer; CPU ms per call."""
    import aiohttp
    import openai
    from langchain_core.messages import HumanMessage, SystemMessage

    from esquemas import Ficha
    from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
    from grafo.chat_model import complete_response_models
    from grafo.mensajes import mensaje_generador, prompt_generador

    complete_response_models()  # as the worker does at start; every layer below benefits
    origen = _origen()
    texto = mensaje_generador(origen, [])
    schema = {"name": "Ficha", "schema": Ficha.model_json_schema(), "strict": True}
    response_format = {"type": "json_schema", "json_schema": schema}
    messages = [
        {"role": "system", "content": prompt_generador()},
        {"role": "user", "content": texto},
    ]
    body = {
        "model": "fake",
        "messages": messages,
        "response_format": response_format,
        "max_tokens": 1024,
        "temperature": 0.2,
    }
    filas: list[tuple[str, float]] = []
    async with aiohttp.ClientSession() as session:

        async def raw() -> None:
            async with session.post(url + "/chat/completions", json=body) as response:
                await response.json()

        filas.append(("raw aiohttp POST of the same body", await _cpu_ms(raw, n)))
    for label, http_client in (
        ("openai client, httpx transport (default)", None),
        ("openai client, aiohttp transport", openai.DefaultAioHttpClient()),
    ):
        client = openai.AsyncOpenAI(
            base_url=url, api_key="EMPTY", max_retries=0, http_client=http_client
        )

        async def create(client: openai.AsyncOpenAI = client) -> None:
            await client.chat.completions.create(**body)  # type: ignore[call-overload]

        filas.append((label, await _cpu_ms(create, n)))
        await client.close()

    lc_messages = [SystemMessage(prompt_generador()), HumanMessage(texto)]
    stock = build_chat_model(LLMSettings(url=url, model="fake"), direct=False)
    direct = build_chat_model(LLMSettings(url=url, model="fake"))
    for label, model in (
        ("ChatOpenAI (stock) .bind(response_format).ainvoke", stock),
        ("DirectChatOpenAI (shipped) .bind(response_format).ainvoke", direct),
    ):
        bound = model.bind(response_format=response_format)

        async def chat(bound: Any = bound) -> None:
            await bound.ainvoke(lc_messages)

        filas.append((label, await _cpu_ms(chat, n)))
    for label, model in (
        ("create_agent over stock ChatOpenAI", stock),
        ("create_agent over DirectChatOpenAI (Agentes.generar, shipped)", direct),
    ):
        agentes = Agentes(model)

        async def agent(agentes: Agentes = agentes) -> None:
            await agentes.generar(origen, [])

        filas.append((label, await _cpu_ms(agent, n)))
    await close_chat_model(direct)
    await close_chat_model(stock)
    return filas


class _CannedAgents:
    """Stands in for ``Agentes``: valid ficha every time, rejected twice then approved."""

    def __init__(self) -> None:
        from esquemas import Ficha, Veredicto

        self._ficha = Ficha(
            titulo="Zapatilla Runner X2 negra",
            descripcion="Zapatilla ligera para correr, con parte superior de malla transpirable.",
            atributos={"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
        )
        self._rechazo = Veredicto.model_validate(
            {"aprobada": False, "problemas": [{"criterio": "C06", "detalle": "tono"}]}
        )
        self._aprobado = Veredicto(aprobada=True, problemas=[])
        self._llamadas: dict[str, int] = {}

    async def generar(self, origen: dict[str, Any], problemas: list[dict[str, Any]]) -> Any:
        return self._ficha

    async def evaluar(self, ficha: Any, comprobaciones: Any, origen: dict[str, Any]) -> Any:
        sku = origen["sku"]
        self._llamadas[sku] = self._llamadas.get(sku, 0) + 1
        return self._aprobado if self._llamadas[sku] >= 3 else self._rechazo


async def grafo_solo(n: int) -> list[tuple[str, float]]:
    """The parent graph of a 3-attempt ficha with canned agents, per saver; CPU ms per ficha."""
    from langgraph.checkpoint.memory import InMemorySaver

    from esquemas import EventoCambio
    from grafo import Nodos, Procesador, construir_grafo, open_checkpointer

    feed = [EventoCambio.model_validate_json(e.valor) for e in make_feed(n + 20, {"3": 1}, "g")]
    filas: list[tuple[str, float]] = []

    async def medir(label: str, saver: Any) -> None:
        nodos = Nodos(
            _CannedAgents(),  # type: ignore[arg-type]
            modelo="fake",
            criterios_version="bench",
            modo_puerta="veredicto",  # three attempts, as measured before the gate
        )
        procesador = Procesador(construir_grafo(nodos, 3, saver))
        eventos = iter(feed)

        async def una() -> None:
            resultado = await procesador.procesar(next(eventos))
            assert len(resultado.resumen) == 3

        filas.append((label, await _cpu_ms(una, n)))

    await medir("parent graph, in-memory saver", InMemorySaver())
    with tempfile.TemporaryDirectory() as tmp:
        async with open_checkpointer(None, Path(tmp)) as saver:
            await medir("parent graph, InlineSqliteSaver (shipped)", saver)
    with tempfile.TemporaryDirectory() as tmp:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with aiosqlite.connect(str(Path(tmp) / "c.sqlite")) as conn:
            await conn.execute("PRAGMA journal_mode=WAL")
            await conn.execute("PRAGMA synchronous=NORMAL")
            await medir("parent graph, AsyncSqliteSaver (before)", AsyncSqliteSaver(conn))
    return filas


def main(argv: list[str] | None = None) -> int:
    """Print both tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=300)
    args = parser.parse_args(argv)
    with FakeLLM(fake_llm_config(0, 0)) as llm:
        capas = asyncio.run(capas_llm(llm.url, args.n))
    grafo = asyncio.run(grafo_solo(max(args.n // 3, 50)))
    print("| layer (one generator call at a time, fake LLM at 0 ms) | CPU ms per call |")
    print("| --- | --: |")
    for label, ms in capas:
        print(f"| {label} | {ms:.2f} |")
    print()
    print("| parent graph of a 3-attempt ficha, agents canned | CPU ms per ficha |")
    print("| --- | --: |")
    for label, ms in grafo:
        print(f"| {label} | {ms:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
