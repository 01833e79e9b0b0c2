"""CPU per LLM call layer by layer, and of the parent graph alone: where a ficha's CPU goes.

``python -m bench.capas [--n 300]`` prints, for one generator request made one at a time
against the fake LLM at 0 ms latency, the CPU this process spends per call at each layer the
worker stacks up (raw HTTP, the ``openai`` client, ``ChatOpenAI``, the ``create_agent`` graph),
stock and as shipped (``grafo.chat_model``); then the parent graph of a 3-attempt ficha with
the agents replaced by canned answers, under each saver. ``docs/rendimiento.md`` explains the
figures. CPU is ``time.process_time`` (all threads of this process), so thread-pool work counts.
It exits 1 if the evaluator's two designs disagree on a score or a verdict. ``--prueba`` runs
every table at its smallest, for the tool's test, not a measurement.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from bench.feed import fake_llm_config, make_feed
from harness.fake_llm.client import FakeLLM

Call = Callable[[], Awaitable[Any]]
CALENTAMIENTO = 20  # warm-up calls before each row is timed


async def _cpu_ms(call: Call, n: int, warmup: int = CALENTAMIENTO) -> float:
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


async def capas_llm(url: str, n: int, warmup: int = CALENTAMIENTO) -> list[tuple[str, float]]:
    """One generator request through each layer; CPU ms per call."""
    import aiohttp
    import openai
    from langchain_core.messages import HumanMessage, SystemMessage

    from esquemas import Ficha
    from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
    from grafo.chat_model import complete_response_models
    from grafo.mensajes import mensaje_generador, prompt_generador
    from harness.agente_grafo import AgenteGrafo

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

        filas.append(("raw aiohttp POST of the same body", await _cpu_ms(raw, n, warmup)))
    for label, http_client in (
        ("openai client, httpx transport (default)", None),
        ("openai client, aiohttp transport", openai.DefaultAioHttpClient()),
    ):
        client = openai.AsyncOpenAI(
            base_url=url, api_key="EMPTY", max_retries=0, http_client=http_client
        )

        async def create(client: openai.AsyncOpenAI = client) -> None:
            await client.chat.completions.create(**body)  # type: ignore[call-overload]

        filas.append((label, await _cpu_ms(create, n, warmup)))
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

        filas.append((label, await _cpu_ms(chat, n, warmup)))
    for label, model in (
        ("create_agent over stock ChatOpenAI", stock),
        ("create_agent over DirectChatOpenAI (Agentes.generar before issue 33)", direct),
    ):
        agente = AgenteGrafo(model, "generador", prompt_generador(), Ficha)

        async def agent(agente: Any = agente) -> None:
            await agente.ainvoke(texto)

        filas.append((label, await _cpu_ms(agent, n, warmup)))
    agentes = Agentes(direct)

    async def llamada() -> None:
        await agentes.generar(origen, [])

    filas.append(
        (
            "LlamadaEstructurada over DirectChatOpenAI (Agentes.generar, shipped)",
            await _cpu_ms(llamada, n, warmup),
        )
    )
    await close_chat_model(direct)
    await close_chat_model(stock)
    return filas


def _sdk_chat_model(directo: Any) -> Any:
    """``DirectChatOpenAI`` as issue 7 left it, over the same client and settings:
    ``chat.completions.create``, so the answer is built into the SDK's ``ChatCompletion``
    (one pydantic object per logprob alternative) and dumped back to a dict by langchain,
    with the whole logprobs kept. The "before" of the evaluator rows."""
    from grafo.chat_model import DirectChatOpenAI

    class SdkChatOpenAI(DirectChatOpenAI):
        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any
        ) -> Any:
            payload = self._get_request_payload(messages, stop=stop, **kwargs)
            model = payload.pop("model")
            extra_body = payload.pop("extra_body", None) or {}
            response = await self.root_async_client.chat.completions.create(
                model=model, messages=[], extra_body={**payload, **extra_body}
            )
            return self._create_chat_result(response, {})

    copia = directo.model_copy()
    copia.__class__ = SdkChatOpenAI  # same fields and client; only _agenerate differs
    return copia


def _origen_de(sku: str) -> dict[str, Any]:
    """The bench feed's origin for one SKU (its prefix scripts the fake evaluator)."""
    from criterios import atributos_obligatorios
    from esquemas import EventoCambio
    from grafo.estado import origen_de
    from harness.eventos import evento_dict

    evento = EventoCambio.model_validate(evento_dict(sku)).model_dump(mode="json")
    return origen_de(evento, atributos_obligatorios(evento["familia"]))


FICHA_EVALUADA = {
    "titulo": "Zapatilla Runner X2 negra",
    "descripcion": "Zapatilla ligera para correr, con parte superior de malla y suela de goma.",
    "atributos": {"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
}


async def capas_evaluador(url: str, n: int, warmup: int = CALENTAMIENTO) -> list[tuple[str, float]]:
    """One evaluator call at a time, approvals and rejections in turn; CPU ms per call.

    The fake LLM answers with ``top_logprobs`` alternatives at every token, as vLLM and
    llama.cpp do (``harness.fake_llm.answers``), so an answer weighs what a real one does.
    """
    from esquemas import Veredicto
    from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
    from grafo.chat_model import evaluator_chat_model
    from grafo.mensajes import prompt_del_evaluador
    from grafo.puntuacion import RUTA_APROBADA, TOP_LOGPROBS
    from harness.agente_grafo import AgenteGrafo

    directo = build_chat_model(LLMSettings(url=url, model="fake"))
    origenes = [_origen_de("A1-capas-00001"), _origen_de("NV-capas-00002")]
    grafo, llamada = AgenteGrafo, Agentes._build
    variantes: list[tuple[str, Any, dict[str, Any], Any]] = [
        (
            "create_agent, no logprobs (no score)",
            directo,
            {"logprobs": None, "top_logprobs": None},
            grafo,
        ),
        (
            "create_agent, top_logprobs 10, SDK ChatCompletion, whole logprobs (before issue 33)",
            _sdk_chat_model(directo),
            {"rutas_puntuadas": None},
            grafo,
        ),
        (
            "create_agent, top_logprobs 10, JSON dict, whole logprobs kept",
            directo,
            {"rutas_puntuadas": None},
            grafo,
        ),
        (
            "create_agent, top_logprobs 10, JSON dict, cut to the verdict (round 1 of issue 33)",
            directo,
            {},
            grafo,
        ),
        (
            "LlamadaEstructurada, top_logprobs 10, orjson, cut to the verdict (shipped)",
            directo,
            {},
            llamada,
        ),
        (
            "LlamadaEstructurada, no logprobs (no score)",
            directo,
            {"logprobs": None, "top_logprobs": None},
            llamada,
        ),
    ]
    filas: list[tuple[str, float]] = []
    for label, modelo, cambios, agente in variantes:
        agentes = Agentes(directo)
        evaluador = evaluator_chat_model(modelo, TOP_LOGPROBS, (RUTA_APROBADA,))
        agentes._evaluador = agente(
            evaluador.model_copy(update=cambios), "evaluador", prompt_del_evaluador(), Veredicto
        )
        turno = iter(range(10**9))

        async def call(agentes: Agentes = agentes, turno: Any = turno) -> None:
            await agentes.evaluar(FICHA_EVALUADA, {}, origenes[next(turno) % 2])

        filas.append((f"Agentes.evaluar, {label}", await _cpu_ms(call, n, warmup)))
    await close_chat_model(directo)
    return filas


TOKENS_DEL_VEREDICTO = 8  # max_tokens of the first call: '{"aprobada": true' and some slack


async def capas_dos_llamadas(
    url: str, n: int, warmup: int = CALENTAMIENTO
) -> tuple[list[tuple[str, float]], dict[str, Any]]:
    """The evaluator in one call (shipped) against the two-call design, measured.

    Two calls: the first asks for ``TOKENS_DEL_VEREDICTO`` tokens with logprobs, so the answer
    stops after the verdict (the fake LLM stops at ``max_tokens`` as vLLM does, with
    ``finish_reason`` "length"); the score is read from it; an approval ends there (its
    ``Veredicto`` has no problems), a rejection makes a second call with the same messages and
    no logprobs for the whole answer. CPU per evaluation for approvals and rejections apart,
    answer tokens and bytes received, and whether both designs give every evaluation the same
    score and verdict.
    """
    import re

    from langchain.agents.structured_output import ProviderStrategy
    from langchain_core.messages import HumanMessage, SystemMessage

    from esquemas import Veredicto
    from grafo import Agentes, LLMSettings, build_chat_model, close_chat_model
    from grafo.chat_model import evaluator_chat_model
    from grafo.mensajes import mensaje_evaluador, prompt_del_evaluador
    from grafo.puntuacion import RUTA_APROBADA, TOP_LOGPROBS, puntuacion_veredicto

    directo = build_chat_model(LLMSettings(url=url, model="fake"))
    agentes = Agentes(directo)
    sin_logprobs = evaluator_chat_model(directo, TOP_LOGPROBS, None).model_copy(
        update={"logprobs": None, "top_logprobs": None}
    )
    segunda = Agentes(directo)
    segunda._evaluador = Agentes._build(
        sin_logprobs, "evaluador", prompt_del_evaluador(), Veredicto
    )
    # bound as LlamadaEstructurada binds the evaluator, with a short max_tokens
    primera = evaluator_chat_model(directo, TOP_LOGPROBS, (RUTA_APROBADA,)).bind_tools(
        [],
        **ProviderStrategy(Veredicto).to_model_kwargs(),
        strict=True,
        max_tokens=TOKENS_DEL_VEREDICTO,
    )
    sistema = SystemMessage(content=prompt_del_evaluador())
    verdad = re.compile(r'"aprobada"\s*:\s*(true|false)')
    medidas: dict[str, Any] = {"mismo_resultado": True}

    async def una(origen: dict[str, Any]) -> tuple[bool, float | None]:
        evaluacion = await agentes.evaluar(FICHA_EVALUADA, {}, origen)
        return evaluacion.veredicto.aprobada, evaluacion.puntuacion

    async def dos(origen: dict[str, Any]) -> tuple[bool, float | None]:
        texto = mensaje_evaluador(FICHA_EVALUADA, {}, origen)
        mensaje = await primera.ainvoke([sistema, HumanMessage(content=texto)])
        puntuacion = puntuacion_veredicto(mensaje.response_metadata.get("logprobs"))
        leido = verdad.search(str(mensaje.content))
        if leido is not None and leido.group(1) == "true":
            return True, puntuacion
        evaluacion = await segunda.evaluar(FICHA_EVALUADA, {}, origen)  # the problems
        return evaluacion.veredicto.aprobada, puntuacion

    filas: list[tuple[str, float]] = []
    for clase, sku in (("approval", "A1-capas-00001"), ("rejection", "NV-capas-00002")):
        origen = _origen_de(sku)
        uno, otro = await una(origen), await dos(origen)
        medidas["mismo_resultado"] &= uno == otro
        medidas[f"puntuacion_{clase}"] = [uno[1], otro[1]]
        for label, diseno in (("one call (shipped)", una), ("two calls", dos)):

            async def call(diseno: Any = diseno, origen: dict[str, Any] = origen) -> None:
                await diseno(origen)

            filas.append((f"{clase}: {label}", await _cpu_ms(call, n, warmup)))
    await close_chat_model(directo)
    return filas, medidas


def capas_criterios(repeticiones: int = 3) -> list[tuple[str, float]]:
    """The code checks on every ficha of the labelled set (references and candidates, with
    their origins); CPU ms per ficha. The labelled set's fichas are real-looking Spanish and
    foreign text, where the bench's fake fichas are one neutral sentence."""
    import json

    from criterios import comprobar, mapear_origen
    from criterios.recursos import precargar
    from herramientas.evaluar.casos import origen_de_caso

    casos = Path(__file__).resolve().parents[1] / "ejemplos" / "evaluacion" / "casos.jsonl"
    pares = []
    for linea in casos.read_text(encoding="utf-8").splitlines():
        caso = json.loads(linea)
        origen = origen_de_caso(caso)
        for ficha in [caso["referencia"], *(c["ficha"] for c in caso["candidatas"])]:
            pares.append((ficha, origen))
    precargar()
    mapeados = [mapear_origen(o).origen for _, o in pares]

    def por_ficha(una: Callable[[int], Any]) -> float:
        for i in range(len(pares)):  # warm-up: the caches a long-running worker has
            una(i)
        start = time.process_time()
        for _ in range(repeticiones):
            for i in range(len(pares)):
                una(i)
        return (time.process_time() - start) * 1000 / (repeticiones * len(pares))

    return [
        ("criterios.mapear_origen", por_ficha(lambda i: mapear_origen(pares[i][1]))),
        (
            "criterios.comprobar, origin mapped inside (before: once more per evaluation)",
            por_ficha(lambda i: comprobar(*pares[i])),
        ),
        (
            "criterios.comprobar, mapped origin given (shipped)",
            por_ficha(lambda i: comprobar(pares[i][0], pares[i][1], mapeados[i])),
        ),
    ]


def precarga_ms() -> float:
    """CPU of the first ``comprobar`` in a fresh process: the resources it loads (identifier,
    Spanish dictionary), which ``criterios.recursos.precargar`` moves to start-up."""
    import subprocess
    import sys

    programa = (
        "import time\n"
        "from criterios import comprobar\n"
        "from bench.capas import FICHA_EVALUADA, _origen_de\n"
        "o = _origen_de('A1-x-1')\n"
        "t = time.process_time(); comprobar(FICHA_EVALUADA, o); a = time.process_time() - t\n"
        "t = time.process_time(); comprobar(FICHA_EVALUADA, o); b = time.process_time() - t\n"
        "print((a - b) * 1000)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", programa],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return float(out.stdout.strip().splitlines()[-1])


def tokens_evaluador(share: dict[str, float]) -> dict[str, Any]:
    """Evaluator answer tokens, one call against the two-call design, per call and per
    published ficha of the mix; the fake LLM's tokenization (words with their leading space,
    punctuation apart), and the bytes of each answer with and without the logprobs cut.

    Two calls: the first stops after the verdict token (``max_tokens``), with logprobs; only a
    rejection makes a second call for the problems (the same prompt, a cached prefix on vLLM).
    """
    import json

    from bench.feed import CLASES
    from grafo.puntuacion import RUTA_APROBADA, TOP_LOGPROBS, recortar_logprobs
    from harness.fake_llm.answers import TOKEN_PATTERN, completion_body, evaluator_content

    def medida(accion: str) -> dict[str, int]:
        contenido = evaluator_content(accion)
        tokens = [m.group() for m in TOKEN_PATTERN.finditer(contenido)]
        hasta = contenido.index("aprobada") + len("aprobada")
        veredicto = next(
            i + 1
            for i in range(len(tokens))
            if len("".join(tokens[: i + 1])) > hasta and tokens[i].strip() in ("true", "false")
        )
        body = completion_body({"logprobs": True, "top_logprobs": TOP_LOGPROBS}, contenido, 1)
        logprobs = body["choices"][0]["logprobs"]
        cortado = recortar_logprobs(logprobs, (RUTA_APROBADA,))
        return {
            "tokens": len(tokens),
            "token_del_veredicto": veredicto,
            "bytes_respuesta": len(json.dumps(body)),
            "bytes_logprobs": len(json.dumps(logprobs)),
            "bytes_logprobs_cortados": len(json.dumps(cortado)),
        }

    aprobacion, rechazo = medida("aprobar"), medida("rechazar")
    # evaluator calls per ficha of the mix, and published fichas per ficha
    aprobaciones = sum(p for clase, p in share.items() if CLASES[clase][0] is not None)
    rechazos = sum(
        p * ((CLASES[clase][0] or 4) - 1) for clase, p in share.items()
    )  # never: 3 rejections
    una = aprobaciones * aprobacion["tokens"] + rechazos * rechazo["tokens"]
    dos = aprobaciones * aprobacion["token_del_veredicto"] + rechazos * (
        rechazo["token_del_veredicto"] + rechazo["tokens"]
    )
    llamadas = aprobaciones + rechazos
    return {
        "aprobacion": aprobacion,
        "rechazo": rechazo,
        "una_llamada": {
            "tokens_por_llamada": round(una / llamadas, 1),
            "tokens_por_publicada": round(una / aprobaciones, 1),
            "llamadas_por_ficha": round(llamadas, 2),
        },
        "dos_llamadas": {
            "tokens_por_llamada": round(dos / (llamadas + rechazos), 1),
            "tokens_por_publicada": round(dos / aprobaciones, 1),
            "llamadas_por_ficha": round(llamadas + rechazos, 2),
        },
    }


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
        from grafo.agentes import Evaluacion

        veredicto = self._aprobado if self._llamadas[sku] >= 3 else self._rechazo
        return Evaluacion(veredicto, 0.9 if veredicto.aprobada else 0.1)


async def grafo_solo(n: int, warmup: int = CALENTAMIENTO) -> list[tuple[str, float]]:
    """The parent graph of a 3-attempt ficha with canned agents, per saver; CPU ms per ficha."""
    from langgraph.checkpoint.memory import InMemorySaver

    from esquemas import EventoCambio
    from grafo import Nodos, Procesador, construir_grafo, open_checkpointer

    feed = [EventoCambio.model_validate_json(e.valor) for e in make_feed(n + warmup, {"3": 1}, "g")]
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

        filas.append((label, await _cpu_ms(una, n, warmup)))

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


def _tabla(titulo: str, columna: str, filas: list[tuple[str, float]], decimales: int = 2) -> None:
    """Print one Markdown table as soon as it is measured."""
    print(f"| {titulo} | {columna} |")
    print("| --- | --: |")
    for label, ms in filas:
        print(f"| {label} | {ms:.{decimales}f} |")
    print(flush=True)


def main(argv: list[str] | None = None) -> int:
    """Print the tables; exit 1 if the two evaluator designs disagree."""
    from bench.feed import DEFAULT_SHARE, parse_share

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument(
        "--prueba",
        action="store_true",
        help="every table at its smallest (one warm-up call and --n calls per row, --n fichas "
        "per saver, one pass of the code checks): for the tool's test, not a measurement",
    )
    args = parser.parse_args(argv)
    warmup = 1 if args.prueba else CALENTAMIENTO
    _tabla(
        "parent graph of a 3-attempt ficha, agents canned",
        "CPU ms per ficha",
        asyncio.run(grafo_solo(args.n if args.prueba else max(args.n // 3, 50), warmup)),
    )
    with FakeLLM(fake_llm_config(0, 0)) as llm:
        _tabla(
            "layer (one generator call at a time, fake LLM at 0 ms)",
            "CPU ms per call",
            asyncio.run(capas_llm(llm.url, args.n, warmup)),
        )
        _tabla(
            "evaluator call (approval and rejection in turn, fake LLM at 0 ms)",
            "CPU ms per call",
            asyncio.run(capas_evaluador(llm.url, args.n, warmup)),
        )
        filas, medidas = asyncio.run(capas_dos_llamadas(llm.url, args.n, warmup))
        _tabla("evaluator design (fake LLM at 0 ms)", "CPU ms per evaluation", filas)
        print("two calls against one:", json.dumps(medidas), flush=True)
    criterios = capas_criterios(1 if args.prueba else 3)
    criterios.append(
        ("first comprobar of a process, resources cold (moved to start-up)", precarga_ms())
    )
    _tabla("code checks, every ficha of the labelled set", "CPU ms per ficha", criterios, 3)
    tokens = tokens_evaluador(parse_share(DEFAULT_SHARE))
    print("evaluator answers (fake LLM tokenization):", json.dumps(tokens))
    if not medidas["mismo_resultado"]:
        print("the two evaluator designs gave different scores or verdicts", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
