"""``fichas worker`` as a real process, as an operator runs it, with its metrics and logs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.procesos import CommandProcess
from harness.topicos import wait_records
from infra.network import free_port

if TYPE_CHECKING:
    from harness.fake_llm_client import FakeLLM
    from harness.kafka_broker import KafkaBroker
    from harness.topicos import Topics


class WorkerProcess(CommandProcess):
    """``fichas worker`` as a real process, as an operator runs it."""

    name = "worker"

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        super().__init__(env, int(env["FICHAS_METRICAS_PUERTO"]), log_path)

    def command(self) -> list[str]:
        """``fichas worker``."""
        return ["worker"]

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

    def metric_sum(self, name: str) -> float:
        """Sum of every sample of one metric, whatever its labels (0 if absent).

        For counters whose labels a test does not care about, e.g. every kind of LLM error.
        """
        total = 0.0
        for line in self.metrics().splitlines():
            if line.startswith("#"):
                continue
            key, _, value = line.rpartition(" ")
            if key.partition("{")[0] == name:
                total += float(value)
        return total

    def rss_peak_kib(self) -> int:
        assert self.proc is not None
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        return 0


def worker_env(
    kafka: KafkaBroker, llm: FakeLLM, topics: Topics, data_dir: Path, **extra: str
) -> dict[str, str]:
    """Environment of a worker process for one test.

    ``FICHAS_PUERTA=veredicto`` unless ``extra`` says otherwise: most worker tests are about
    plumbing (offsets, order, rebalances, faults) and keep the meaning they had before the
    publication gate; the tests about publication set ``FICHAS_PUERTA="certificada"`` and
    write the gate they need (``harness.puerta``).
    """
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
        FICHAS_PUERTA="veredicto",
    )
    env.update(extra)
    return env


async def wait_outcomes(
    kafka: KafkaBroker, topics: Topics, expected: int, worker: WorkerProcess, timeout: float
) -> list[dict[str, Any]]:
    """Poll the output topics until ``expected`` outcomes (any destination) are there."""
    return await wait_records(
        kafka.bootstrap,
        (topics.publicadas, topics.revision, topics.dlq),
        expected,
        timeout,
        worker.log_tail,
    )
