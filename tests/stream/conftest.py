"""Fixtures for the worker against a real Kafka broker and the fake LLM, both real processes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from tests.fake_llm_client import FakeLLM
from tests.kafka_broker import KafkaBroker, free_port

REPO = Path(__file__).parents[2]
SALIDAS = ("fichas.publicadas", "fichas.revision_manual", "proveedor.cambios.dlq")


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One real single-node KRaft broker for the session (scripts/kafka.sh)."""
    broker = KafkaBroker(free_port(), tmp_path_factory.mktemp("kafka"))
    broker.start()
    yield broker
    broker.stop()


@dataclass
class Topics:
    """Unique topic names for one test, so tests never see each other's messages."""

    prefix: str = field(default_factory=lambda: f"t{uuid.uuid4().hex[:8]}")

    @property
    def entrada(self) -> str:
        return f"{self.prefix}.proveedor.cambios"

    @property
    def publicadas(self) -> str:
        return f"{self.prefix}.fichas.publicadas"

    @property
    def revision(self) -> str:
        return f"{self.prefix}.fichas.revision_manual"

    @property
    def dlq(self) -> str:
        return f"{self.prefix}.proveedor.cambios.dlq"

    @property
    def muestra(self) -> str:
        return f"{self.prefix}.fichas.muestra_revision"

    def env(self) -> dict[str, str]:
        return {
            "FICHAS_TOPIC_ENTRADA": self.entrada,
            "FICHAS_TOPIC_PUBLICADAS": self.publicadas,
            "FICHAS_TOPIC_REVISION": self.revision,
            "FICHAS_TOPIC_DLQ": self.dlq,
            "FICHAS_TOPIC_MUESTRA": self.muestra,
            "FICHAS_GRUPO": f"{self.prefix}-grupo",
        }


async def create_input_topic(bootstrap: str, topic: str, partitions: int = 4) -> None:
    """The input topic, allowing 2 MiB messages so a 1 MiB poison value reaches the worker."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics(
            [
                NewTopic(
                    topic,
                    num_partitions=partitions,
                    replication_factor=1,
                    topic_configs={"max.message.bytes": str(2 * 1024 * 1024)},
                )
            ]
        )
    finally:
        await admin.close()


async def produce(bootstrap: str, topic: str, messages: list[tuple[bytes | None, bytes]]) -> None:
    """Write (key, value) pairs in order, acknowledged by the broker."""
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap, acks="all", max_request_size=2 * 1024 * 1024, linger_ms=20
    )
    await producer.start()
    try:
        futures = [await producer.send(topic, value, key=key) for key, value in messages]
        await asyncio.gather(*futures)
    finally:
        await producer.stop()


async def partitions_of(bootstrap: str, topic: str) -> list[int]:
    """Partition numbers of a topic ([] if it does not exist), from the broker's metadata."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        (description,) = await admin.describe_topics([topic])
    finally:
        await admin.close()
    return [p["partition"] for p in description["partitions"]]


async def read_all(bootstrap: str, topic: str) -> list[dict[str, Any]]:
    """Every record of a topic from the beginning to its current end, with metadata."""
    partitions = await partitions_of(bootstrap, topic)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in sorted(partitions)]
        if not tps:
            return []
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        ends = await consumer.end_offsets(tps)
        out: list[dict[str, Any]] = []
        while [tp for tp in tps if await consumer.position(tp) < ends[tp]]:
            batch = await consumer.getmany(timeout_ms=500)
            for tp, records in batch.items():
                for r in records:
                    out.append(
                        {
                            "partition": tp.partition,
                            "offset": r.offset,
                            "timestamp": r.timestamp,
                            "key": r.key,
                            "raw": r.value,
                            "value": json.loads(r.value),
                        }
                    )
        return out
    finally:
        await consumer.stop()


class WorkerProcess:
    """``fichas worker`` as a real process, as an operator runs it."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.env = env
        self.log_path = log_path
        self.port = int(env["FICHAS_METRICAS_PUERTO"])
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stream.cli", "worker"],
            env=self.env,
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, self.log_tail()
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/health/ready", timeout=2
                ):
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("worker never became ready\n" + self.log_tail())

    def metrics(self) -> str:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as resp:
            return resp.read().decode()

    def metric(self, name: str, **labels: str) -> float:
        """Value of one sample of the worker's /metrics (0 if absent)."""
        wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        for line in self.metrics().splitlines():
            if line.startswith("#"):
                continue
            key, _, value = line.rpartition(" ")
            metric, _, rest = key.partition("{")
            got = ",".join(sorted(rest.rstrip("}").split(","))) if rest else ""
            if metric == name and got == wanted:
                return float(value)
        return 0.0

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def terminate(self, timeout: float = 120) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=timeout)

    def rss_peak_kib(self) -> int:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0

    def log_tail(self, lines: int = 60) -> str:
        if not self.log_path.exists():
            return ""
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])


def worker_env(
    kafka: KafkaBroker, llm: FakeLLM, topics: Topics, data_dir: Path, **extra: str
) -> dict[str, str]:
    """Environment of a worker process for one test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
    env.update(topics.env())
    env.update(
        FICHAS_KAFKA_BROKERS=kafka.bootstrap,
        FICHAS_LLM_URL=llm.url,
        FICHAS_LLM_MODELO="fake",
        FICHAS_LLM_TIMEOUT_S="10",
        FICHAS_DATA_DIR=str(data_dir),
        FICHAS_METRICAS_PUERTO=str(free_port()),
        FICHAS_CONCURRENCIA="16",
        FICHAS_GRACIA_S="20",
        FICHAS_LOG_NIVEL="INFO",
    )
    env.update(extra)
    return env


@pytest.fixture
def topics() -> Topics:
    return Topics()


async def wait_outcomes(
    kafka: KafkaBroker, topics: Topics, expected: int, worker: WorkerProcess, timeout: float
) -> list[dict[str, Any]]:
    """Poll the output topics until ``expected`` outcomes (any destination) are there."""
    deadline = time.monotonic() + timeout
    while True:
        found = []
        for topic in (topics.publicadas, topics.revision, topics.dlq):
            found += [dict(r, topic=topic) for r in await read_all(kafka.bootstrap, topic)]
        if len(found) >= expected:
            return found
        assert time.monotonic() < deadline, f"{len(found)}/{expected}\n{worker.log_tail()}"
        await asyncio.sleep(1)
