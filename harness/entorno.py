"""The harness's one environment builder: the variables of a process a test starts.

The test process's own environment without any ``FICHAS_*`` variable (nothing of a shell's or
CI's settings leaks into a test), then, when given, the broker, the fake LLM (model ``fake``),
the test's topics and group (``harness.topicos.Topics.env``) and data folder, then the test's
own variables, which win. ``harness.worker.worker_env``, ``harness.revisor.revisor_env``, the
commands' tests and ``bench.run`` build on it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.fake_llm.client import FakeLLM
    from harness.kafka_broker import KafkaBroker
    from harness.topicos import Topics


def entorno(
    *,
    kafka: KafkaBroker | str | None = None,
    llm: FakeLLM | None = None,
    topics: Topics | None = None,
    data_dir: Path | None = None,
    **variables: str,
) -> dict[str, str]:
    """A process's environment for one test (``kafka``: a broker or its bootstrap address)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FICHAS_")}
    if topics is not None:
        env.update(topics.env())
    if kafka is not None:
        env["FICHAS_KAFKA_BROKERS"] = kafka if isinstance(kafka, str) else kafka.bootstrap
    if llm is not None:
        env.update(FICHAS_LLM_URL=llm.url, FICHAS_LLM_MODELO="fake")
    if data_dir is not None:
        env["FICHAS_DATA_DIR"] = str(data_dir)
    env.update(variables)
    return env
