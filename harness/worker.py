"""The worker for tests: as a real process (``WorkerProcess``) or in the test's own process
(``WorkerInProcess``), both on the real broker, with the same handle (start, ready, metrics,
log, stop).

A process is what a kill, a signal, a stop (SIGSTOP), the process's memory or its start-up is
about. Everything else drives the worker in process, the way quix-streams' tests build an
``Application`` with ``app_factory``: the same ``stream.serving.main.serve`` the command runs, on a
thread and event loop of its own, without the seconds a process spends importing the graph,
LangChain and aiokafka before it can join the group.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic_settings import BaseSettings, PydanticBaseSettingsSource

from harness.entorno import entorno
from harness.procesos import CommandProcess
from harness.topicos import wait_records
from infra.config import Settings
from infra.network import free_port

if TYPE_CHECKING:
    from harness.fake_llm.client import FakeLLM
    from harness.kafka_broker import KafkaBroker
    from harness.topicos import Topics
    from stream.flow.worker import Worker


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


class _OnlyGiven(Settings):
    """``Settings`` from the mapping given, not from this process's environment."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """The init values alone: the test process's own ``FICHAS_*`` must not leak in."""
        return (init_settings,)


def settings_from_env(env: dict[str, str]) -> Settings:
    """The worker's ``Settings`` from a ``worker_env`` mapping, as ``fichas worker`` reads them."""
    prefix = "FICHAS_"
    values: dict[str, Any] = {
        k[len(prefix) :].lower(): v for k, v in env.items() if k.startswith(prefix)
    }
    return _OnlyGiven(**values)


class _ThreadLog(logging.Handler):
    """The records logged on one thread (one in-process worker), to its log file."""

    def __init__(self, path: Path, thread: threading.Thread) -> None:
        super().__init__(logging.INFO)
        self._file = path.open("a", encoding="utf-8")
        self._thread = thread
        self.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        """Write the record if it comes from the worker's thread."""
        if record.thread == self._thread.ident:
            self._file.write(self.format(record) + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file with the handler."""
        self._file.close()
        super().close()


class WorkerInProcess(WorkerProcess):
    """``stream.serving.main.serve`` on a thread of the test process, with the handle of a process.

    ``terminate`` asks the worker to stop as SIGTERM does (its ``stop``) and returns 0 after a
    clean stop, 1 if ``serve`` raised (the traceback is in the log). No ``kill``: a test about a
    kill runs a ``WorkerProcess``. The thread logs at INFO to ``log_path`` (``log_tail``).
    """

    name = "worker (in process)"

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        super().__init__(env, log_path)
        self._thread: threading.Thread | None = None
        self._worker: Worker | None = None
        self._loop: Any = None
        self._handler: _ThreadLog | None = None
        self._exit: int | None = None

    def start(self, extra_env: dict[str, str] | None = None, barrera: Path | None = None) -> None:
        """Build the settings from the environment given and run ``serve`` on a new thread."""
        assert barrera is None, "a start-up race needs processes (WorkerProcess)"
        settings = settings_from_env({**self.env, **(extra_env or {})})
        self._exit = None
        self._worker = None
        self._thread = threading.Thread(
            target=self._run, args=(settings,), name=f"worker-{self.port}", daemon=True
        )
        self._handler = _ThreadLog(self.log_path, self._thread)
        _logging_on(self._handler)
        self._thread.start()

    def _run(self, settings: Settings) -> None:
        """The thread: the worker's own event loop until ``serve`` returns."""
        import asyncio

        from infra import eventloop
        from stream.serving.main import serve

        def started(worker: Worker) -> None:
            self._loop = asyncio.get_running_loop()
            self._worker = worker

        try:
            eventloop.run(serve(settings, on_started=started))
            logging.getLogger("stream.serving.main").info("worker stopped")
            self._exit = 0
        except BaseException:
            logging.getLogger("stream.serving.main").exception("worker failed")
            self._exit = 1

    def alive(self) -> bool:
        """Started and ``serve`` not returned."""
        return self._thread is not None and self._thread.is_alive()

    def terminate(self, timeout: float = 120) -> int:
        """Stop as SIGTERM does, wait for ``serve`` to return; 0 after a clean stop."""
        assert self._thread is not None
        if self._thread.is_alive() and self._worker is not None:
            self._loop.call_soon_threadsafe(self._worker.stop)
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise TimeoutError(f"{self.name} did not stop in {timeout} s\n{self.log_tail()}")
        if self._handler is not None:
            _logging_off(self._handler)
            self._handler = None
        assert self._exit is not None
        return self._exit

    def kill(self) -> None:
        """Not for a thread: a kill test runs a ``WorkerProcess``."""
        raise NotImplementedError("kill needs a WorkerProcess")

    def rss_peak_kib(self) -> int:
        """Not for a thread: a memory test runs a ``WorkerProcess``."""
        raise NotImplementedError("the memory of one worker needs a WorkerProcess")


_LEVELS: list[int] = []  # the root logger's level before the first in-process worker


def _logging_on(handler: logging.Handler) -> None:
    """Root at INFO while in-process workers run (their log lines are what tests read)."""
    root = logging.getLogger()
    if not _LEVELS:
        _LEVELS.append(root.level)
        for name in ("httpx", "httpcore"):  # one line per LLM request, as infra.logs does
            logging.getLogger(name).setLevel(logging.WARNING)
    root.setLevel(min(root.level or logging.WARNING, logging.INFO))
    root.addHandler(handler)


def _logging_off(handler: logging.Handler) -> None:
    """Remove the worker's handler; the root's level back once none is left."""
    root = logging.getLogger()
    root.removeHandler(handler)
    handler.close()
    if _LEVELS and not any(isinstance(h, _ThreadLog) for h in root.handlers):
        root.setLevel(_LEVELS.pop())


def worker_env(
    kafka: KafkaBroker | str, llm: FakeLLM, topics: Topics, data_dir: Path, **extra: str
) -> dict[str, str]:
    """Environment of a worker process for one test, on a broker or a bootstrap address.

    ``FICHAS_PUERTA=veredicto`` unless ``extra`` says otherwise: most worker tests are about
    plumbing (offsets, order, rebalances, faults) and keep the meaning they had before the
    publication gate; the tests about publication set ``FICHAS_PUERTA="certificada"`` and
    write the gate they need (``harness.estados_puerta``). For the same reason the v1.6 draws
    are off unless a test sets them: no blind shadow share (an open gate publishes every ficha
    above λ, whatever its random event_id) and no daily minimum in the sample.
    """
    variables = {
        "FICHAS_LLM_TIMEOUT_S": "10",
        "FICHAS_METRICAS_PUERTO": str(free_port()),
        "FICHAS_CONCURRENCIA": "16",
        "FICHAS_GRACIA_S": "20",
        "FICHAS_LOG_NIVEL": "INFO",
        "FICHAS_PUERTA": "veredicto",
        "FICHAS_SOMBRA_PROPORCION": "0",
        "FICHAS_MUESTRA_MINIMA_DIA": "0",
    }
    return entorno(kafka=kafka, llm=llm, topics=topics, data_dir=data_dir, **variables | extra)


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
