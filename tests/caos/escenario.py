"""A fault scenario's cast: workers sharing one PostgreSQL, the fake LLM, one input topic."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, worker_env
from tests.caos.contrato import (
    Resumen,
    esperar_completo,
    eventos,
    invalidos,
    leer,
    mensajes,
    revisar,
)


class Escenario:
    """Start, replace and stop worker processes; produce; wait; check the contract."""

    def __init__(
        self,
        nombre: str,
        kafka: KafkaBroker,
        llm: FakeLLM,
        tmp: Path,
        dsn: str,
        **env: str,
    ) -> None:
        self.nombre = nombre
        self.kafka = kafka
        self.llm = llm
        self.tmp = tmp
        self.dsn = dsn
        self.env = {"FICHAS_GRACIA_S": "5", "FICHAS_CONCURRENCIA": "8", **env}
        self.topics = Topics()
        self.tag = f"{uuid.uuid4().int % 10**6:06d}"
        self.workers: list[WorkerProcess] = []
        self.todos: list[WorkerProcess] = []
        self.validos: list[dict[str, Any]] = []
        self.n_invalidos = 0
        self.fallos = 0
        self.started = time.monotonic()

    def nuevo_worker(self) -> WorkerProcess:
        """Start one more worker (not waiting for it to join)."""
        n = len(self.todos)
        env = worker_env(
            self.kafka,
            self.llm,
            self.topics,
            self.tmp / f"d{n}",
            FICHAS_POSTGRES_DSN=self.dsn,
            **self.env,
        )
        worker = WorkerProcess(env, self.tmp / f"w{n}.log")
        worker.start()
        self.workers.append(worker)
        self.todos.append(worker)
        return worker

    async def arrancar(self, workers: int = 2, partitions: int = 4) -> None:
        """Create the input topic and start ``workers`` workers, ready."""
        await create_input_topic(self.kafka.bootstrap, self.topics.entrada, partitions=partitions)
        for _ in range(workers):
            self.nuevo_worker()
        for worker in self.workers:
            worker.wait_ready(timeout=90)

    async def producir(self, skus: int, versions: int, desde: int = 0) -> None:
        """``skus`` × ``versions`` valid events (SKU numbers from ``desde``) and the invalid set."""
        lote = [
            e
            for e in eventos(self.tag, skus + desde, versions)
            if int(e["sku"].rsplit("-", 1)[1]) >= desde
        ]
        self.validos += lote
        malos = [(k + f"-{desde}".encode() if k else k, v) for k, v in invalidos(self.tag)]
        self.n_invalidos += len(malos)
        await produce(self.kafka.bootstrap, self.topics.entrada, mensajes(lote) + malos)

    async def esperar_salidas(self, minimo: int, timeout: float = 60) -> None:
        """Until at least ``minimo`` outcomes exist (to inject a fault mid-run)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            por_topic = await leer(self.kafka.bootstrap, self.topics)
            if (
                len(por_topic[self.topics.publicadas]) + len(por_topic[self.topics.revision])
                >= minimo
            ):
                return
            await asyncio.sleep(0.5)
        raise AssertionError(f"fewer than {minimo} outcomes\n" + self.log_tail())

    def log_tail(self) -> str:
        return "\n----\n".join(w.log_tail(30) for w in self.workers)

    async def terminar(self, timeout: float = 240) -> Resumen:
        """Wait for every outcome, stop the workers, read the topics, build the summary."""
        await esperar_completo(
            self.kafka.bootstrap,
            self.topics,
            self.validos,
            self.n_invalidos,
            timeout,
            self.log_tail,
        )
        self.parar()
        por_topic = await leer(self.kafka.bootstrap, self.topics)
        resumen = revisar(
            self.nombre, por_topic, self.topics, self.validos, self.n_invalidos, self.fallos
        )
        resumen.segundos = time.monotonic() - self.started
        self.por_topic = por_topic
        return resumen

    def parar(self) -> None:
        """SIGTERM every worker still running (idempotent)."""
        for worker in self.todos:
            if worker.proc is not None and worker.proc.poll() is None:
                worker.terminate(timeout=60)
