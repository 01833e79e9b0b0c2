"""Hot path of the graph in-process: CPU per ficha and a pyinstrument profile.

``python -m bench.perfil [--n 200] [--clase 3] [--html perfil.html]`` runs the worker's own
``Procesador`` (``stream.gobierno.runtime.build_processor``, SQLite checkpointer, same settings)
over ``n`` events against the fake LLM with no latency, so the process does nothing but the
per-ficha work the worker pays: graph steps, checkpoints, HTTP client, pydantic. Kafka is left out
on purpose; ``bench.run --profile`` samples the real worker with py-spy instead, and ``python -m
bench.perfil --pyspy bench/perfil_worker.txt`` summarises that sample.

Every measured ficha must end as its class is scripted (attempts and destination), or the run
exits 1: a profile of fichas that stopped early measures nothing. ``--html``/``--texto`` need
``pyinstrument``, which the lock does not install (``pip install pyinstrument`` in the venv).
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from bench.feed import CLASES, fake_llm_config, make_feed
from esquemas import EventoCambio
from esquemas.constantes import DESTINO_PUBLICADAS, DESTINO_REVISION
from harness.fake_llm.client import FakeLLM

if TYPE_CHECKING:
    from grafo.ejecucion import Resultado


async def _run(
    url: str, data_dir: Path, n: int, clase: str, concurrencia: int
) -> tuple[float, list[str]]:
    """Process the events; CPU seconds of this process spent on them, and what went wrong
    (``_desvios``: each measured ficha that did not end as its class is scripted)."""
    from infra.config import Settings
    from stream.gobierno.clave import clave_de
    from stream.gobierno.runtime import build_processor

    # FICHAS_PUERTA=veredicto: the profile measures the loop's attempts as it did before the
    # gate (a closed gate would end every ficha after one attempt).
    settings = Settings(
        llm_url=url,
        llm_modelo="fake",
        data_dir=data_dir,
        concurrencia=concurrencia,
        puerta="veredicto",
    )
    feed = make_feed(n + 10, {clase: 1.0}, "perf")
    eventos = [EventoCambio.model_validate_json(e.valor) for e in feed]
    limite = asyncio.Semaphore(concurrencia)
    # The key only stamps outcomes here (veredicto mode): the served identity is not asked.
    async with build_processor(settings, clave_de(settings, None)) as procesador:

        async def one(evento: EventoCambio) -> Resultado:
            async with limite:
                return await procesador.procesar(evento)

        await asyncio.gather(*(one(e) for e in eventos[:10]))  # warm-up: imports, pools
        cpu = time.process_time()
        resultados = await asyncio.gather(*(one(e) for e in eventos[10:]))
        cpu = time.process_time() - cpu
    return cpu, _desvios(resultados, clase, settings.max_intentos)


def _desvios(resultados: list[Resultado], clase: str, max_intentos: int) -> list[str]:
    """Each ficha whose attempts or destination differ from its class's script (``CLASES``)."""
    aprobada_en = CLASES[clase][0]
    publica = aprobada_en is not None and aprobada_en <= max_intentos
    intentos = aprobada_en if aprobada_en is not None and publica else max_intentos
    destino = DESTINO_PUBLICADAS if publica else DESTINO_REVISION
    return [
        f"{r.sku}: {r.intentos} attempts to {r.destino}, expected {intentos} to {destino}"
        for r in resultados
        if r.intentos != intentos or r.destino != destino
    ]


# Inclusive buckets: a sample counts for the first marker found walking from the leaf up, so
# each sample lands in exactly one bucket and the shares add up to 100 %.
MARCADORES: tuple[tuple[str, str], ...] = (
    ("openai/_utils/_transform.py", "openai: request body transform (TypedDict walk)"),
    ("openai/_models.py", "openai: response model construction"),
    ("langgraph/checkpoint/sqlite", "checkpointer: SqliteSaver (serialise + SQL)"),
    ("sqlite3", "checkpointer/version store: sqlite3"),
    ("langgraph/checkpoint/serde", "checkpointer: msgpack serde"),
    ("httpx/", "HTTP client: httpx/httpcore/h11"),
    ("httpcore/", "HTTP client: httpx/httpcore/h11"),
    ("h11/", "HTTP client: httpx/httpcore/h11"),
    ("langchain_openai/", "langchain_openai: payload and result conversion"),
    ("langchain/agents/", "create_agent graph (per LLM call)"),
    ("langchain_core/", "langchain_core: callbacks, messages, runnables"),
    ("aiokafka/", "aiokafka: fetch, produce, commit"),
    ("langgraph/", "LangGraph Pregel loop (parent graph and the six agent graphs)"),
    ("pydantic", "pydantic"),
    ("grafo/", "fichas: grafo"),
    ("stream/", "fichas: stream"),
    ("criterios/", "fichas: criterios"),
    ("asyncio/", "asyncio event loop (incl. cross-thread wake-ups)"),
    ("concurrent/futures", "thread pool: run_in_executor hand-offs"),
    ("threading.py", "thread pool: run_in_executor hand-offs"),
    ("logging/", "logging"),
)
# Leaves where a thread waits rather than works; py-spy --nonblocking cannot always tell.
IDLE_LEAVES = (
    "EpollSelector.select (selectors.py",
    "_worker (concurrent/futures/thread.py:81)",
    "Condition.wait (threading.py",
    "Thread._wait_for_tstate_lock",
)
_FRAME = re.compile(r"^(?P<func>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def resumir_pyspy(path: Path, top: int = 20) -> list[tuple[str, int, float]]:
    """Bucket a py-spy ``--format raw`` file (collapsed stacks): (bucket, samples, share %).

    Samples whose leaf is a known wait (epoll, an idle pool thread) are dropped, so the
    shares are of CPU-busy samples.
    """
    buckets: Counter[str] = Counter()
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        frames = stack.split(";")
        if any(frames[-1].startswith(idle) for idle in IDLE_LEAVES):
            continue
        if frames and (frames[0].startswith("process ") or "thread" in frames[0]):
            frames = frames[1:]  # --threads prefixes a thread frame
        bucket = "other"
        for frame in reversed(frames):
            match = _FRAME.match(frame)
            where = match.group("file") if match else frame
            name = next((label for marker, label in MARCADORES if marker in where), None)
            if name is not None:
                bucket = name
                break
        buckets[bucket] += int(count)
    total = sum(buckets.values()) or 1
    return [(b, c, round(100 * c / total, 1)) for b, c in buckets.most_common(top)]


def main(argv: list[str] | None = None) -> int:
    """Entry point: print CPU ms per ficha, optionally write a pyinstrument report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--clase", default="3", choices=["1", "2", "3", "never"])
    parser.add_argument("--concurrencia", type=int, default=32)
    parser.add_argument("--html", type=Path, help="write a pyinstrument HTML report here")
    parser.add_argument("--texto", action="store_true", help="print the pyinstrument tree")
    parser.add_argument("--pyspy", type=Path, help="summarise a py-spy raw file and exit")
    args = parser.parse_args(argv)
    if args.pyspy:
        for bucket, samples, share in resumir_pyspy(args.pyspy):
            print(f"{share:5.1f}%  {samples:7d}  {bucket}")
        return 0
    if (args.html or args.texto) and importlib.util.find_spec("pyinstrument") is None:
        parser.error("--html and --texto need pyinstrument: pip install pyinstrument")
    os.environ.setdefault("FICHAS_LOG_NIVEL", "WARNING")
    with FakeLLM(fake_llm_config(0, 0)) as llm, tempfile.TemporaryDirectory() as tmp:
        coro = _run(llm.url, Path(tmp), args.n, args.clase, args.concurrencia)
        if args.html or args.texto:
            from pyinstrument import Profiler

            profiler = Profiler(async_mode="disabled", interval=0.0005)
            profiler.start()
            cpu, desvios = asyncio.run(coro)
            profiler.stop()
            if args.html:
                args.html.write_text(profiler.output_html())
            if args.texto:
                print(profiler.output_text(unicode=False, color=False, show_all=False))
        else:
            cpu, desvios = asyncio.run(coro)
    print(f"clase {args.clase}: {cpu * 1000 / args.n:.2f} ms CPU per ficha over {args.n}")
    for desvio in desvios:
        print(desvio, file=sys.stderr)
    return 1 if desvios else 0


if __name__ == "__main__":
    raise SystemExit(main())
