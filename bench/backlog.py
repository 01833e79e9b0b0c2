"""``python -m bench.backlog``: a worker's memory with 100,000 events waiting and a slow LLM.

One command starts what it needs: a local Kafka broker on free ports, the fake LLM answering
after ``--latencia-ms`` (1 s), an input topic holding ``--eventos`` events (100,000), then one
``fichas worker`` process (``FICHAS_CONCURRENCIA`` = ``--concurrencia``, 16). From the moment
the worker is ready it samples the process's peak RSS (``VmHWM``) every 2 s for
``--observar-s`` (40 s), and reads how many LLM calls were in flight at once from the LLM
server's side. Bounds: LLM calls at once <= the concurrency, RSS growth from ready < 64 MiB,
peak RSS < 600 MiB; it prints the figures and each bound met or MISSED, and exits 1 when one
is missed. The mechanism behind the bound (a full buffer pauses
every partition, each fetch asks for the room left) is tested in the suite
(``tests/stream/test_nucleo.py``); this is the figure, which takes tens of seconds to show a
worker that buffers: docs/rendimiento.md, "Memory on a backlog".
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from aiokafka import AIOKafkaProducer

from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic
from harness.worker import WorkerProcess, worker_env
from infra.network import free_port

# The bounds: growth from ready and the peak (MiB). A worker that buffered the backlog grew
# by hundreds of MiB (388 -> 979 MiB, docs/stream.md); one that keeps to its buffer, by a few.
CRECIMIENTO_MAX_MIB = 64.0
PICO_MAX_MIB = 600.0
MUESTRA_S = 2.0


@dataclass(frozen=True)
class Resultado:
    """What one run measured, and the bounds it was held to."""

    eventos: int
    concurrencia: int
    latencia_ms: float
    observar_s: float
    publicadas: int
    llm_a_la_vez: int
    rss_listo_mib: float
    rss_pico_mib: float

    @property
    def crecimiento_mib(self) -> float:
        """Peak RSS over the watch minus the peak when the worker became ready."""
        return round(self.rss_pico_mib - self.rss_listo_mib, 1)


def cotas(r: Resultado) -> dict[str, bool]:
    """Each bound, met or not: the LLM's calls at once, the growth and the peak."""
    return {
        f"LLM calls at once <= {r.concurrencia}": 0 < r.llm_a_la_vez <= r.concurrencia,
        f"RSS growth from ready < {CRECIMIENTO_MAX_MIB:.0f} MiB": (
            r.crecimiento_mib < CRECIMIENTO_MAX_MIB
        ),
        f"peak RSS < {PICO_MAX_MIB:.0f} MiB": r.rss_pico_mib < PICO_MAX_MIB,
        "some fichas published": r.publicadas > 0,
    }


def informe(r: Resultado) -> str:
    """The figures in one line, then one line per bound."""
    lineas = [
        f"backlog: {r.eventos} waiting, LLM {r.latencia_ms:.0f} ms, concurrency "
        f"{r.concurrencia}: published {r.publicadas} in {r.observar_s:.0f} s, LLM calls at "
        f"once max {r.llm_a_la_vez}, peak RSS {r.rss_pico_mib:.0f} MiB (when ready: "
        f"{r.rss_listo_mib:.0f} MiB, growth {r.crecimiento_mib:.1f} MiB)"
    ]
    lineas += [f"  {nombre}: {'met' if ok else 'MISSED'}" for nombre, ok in cotas(r).items()]
    return "\n".join(lineas)


async def producir_backlog(bootstrap: str, topic: str, eventos: int) -> None:
    """Write the backlog fast: one template, only event_id and sku change."""
    plantilla = json.dumps(evento_dict("SKU-PLACEHOLDER", 1, event_id="EID-PLACEHOLDER"))
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks=1, linger_ms=50)
    await producer.start()
    try:
        pendientes = []
        for n in range(eventos):
            sku = f"B{n:06d}"
            valor = plantilla.replace("SKU-PLACEHOLDER", sku).replace("EID-PLACEHOLDER", sku)
            pendientes.append(await producer.send(topic, valor.encode(), key=sku.encode()))
            if len(pendientes) >= 5000:
                await asyncio.gather(*pendientes)
                pendientes.clear()
        await asyncio.gather(*pendientes)
    finally:
        await producer.stop()


async def medir(kafka: KafkaBroker, llm: FakeLLM, tmp: Path, args: argparse.Namespace) -> Resultado:
    """Fill the input topic, start the worker, watch its memory; stop it."""
    topics = Topics()
    await create_input_topic(kafka.bootstrap, topics.entrada)
    await producir_backlog(kafka.bootstrap, topics.entrada, args.eventos)
    env = worker_env(kafka, llm, topics, tmp / "datos", FICHAS_CONCURRENCIA=str(args.concurrencia))
    worker = WorkerProcess(env, tmp / "worker.log")
    worker.start()
    try:
        await asyncio.to_thread(worker.wait_ready, 300)
        listo_kib = worker.rss_peak_kib()  # before the backlog could be buffered
        # The start-up probe for log-probabilities is one request outside the graph runs: once
        # it has answered, the LLM's peak starts again from the graph runs alone.
        limite = time.monotonic() + 60
        while "grafo.logprobs_probe" not in worker.log_path.read_text(errors="replace"):
            if time.monotonic() > limite:
                raise RuntimeError(f"no start-up probe in 60 s\n{worker.log_tail()}")
            await asyncio.sleep(0.2)
        llm.reset()
        pico_kib = listo_kib
        inicio = time.monotonic()
        while time.monotonic() - inicio < args.observar_s:
            await asyncio.sleep(MUESTRA_S)
            pico_kib = max(pico_kib, worker.rss_peak_kib())
        publicadas = worker.metric("fichas_events_total", result="publicada")
        llm_a_la_vez = int(llm.stats()["peak_in_flight"])
        if worker.terminate(timeout=120) != 0:
            raise RuntimeError(f"the worker did not stop cleanly\n{worker.log_tail()}")
    finally:
        if worker.alive():
            worker.kill()
    return Resultado(
        eventos=args.eventos,
        concurrencia=args.concurrencia,
        latencia_ms=args.latencia_ms,
        observar_s=args.observar_s,
        publicadas=int(publicadas),
        llm_a_la_vez=llm_a_la_vez,
        rss_listo_mib=round(listo_kib / 1024, 1),
        rss_pico_mib=round(pico_kib / 1024, 1),
    )


async def correr(args: argparse.Namespace) -> Resultado:
    """Broker and fake LLM for this run only, then the measurement."""
    tmp = Path(tempfile.mkdtemp(prefix="fichas-backlog-"))
    kafka = KafkaBroker(free_port(), tmp / "kafka")
    await asyncio.to_thread(kafka.start)
    try:
        with FakeLLM({"latency_ms": args.latencia_ms}) as llm:
            llm.serve_identity()
            return await medir(kafka, llm, tmp, args)
    finally:
        await asyncio.to_thread(kafka.stop)
        shutil.rmtree(tmp, ignore_errors=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The run's size; the defaults are the figure's (docs/rendimiento.md)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.backlog", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("--eventos", type=int, default=100_000, help="events waiting (100000)")
    parser.add_argument("--concurrencia", type=int, default=16, help="FICHAS_CONCURRENCIA (16)")
    parser.add_argument("--latencia-ms", type=float, default=1000.0, help="per LLM call (1000)")
    parser.add_argument("--observar-s", type=float, default=40.0, help="memory watch (40)")
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run, print the figures and the bounds; 1 if a bound is missed."""
    args = parse_args(argv)
    resultado = asyncio.run(correr(args))
    print(informe(resultado))
    if args.out is not None:
        doc = {**asdict(resultado), "crecimiento_mib": resultado.crecimiento_mib}
        doc["cotas"] = cotas(resultado)
        args.out.write_text(json.dumps(doc, indent=2) + "\n")
    return 0 if all(cotas(resultado).values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
