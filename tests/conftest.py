"""Shared fixtures: the project's fake LLM as a real HTTP process, data folders, services.

The fake LLM runs once per session (starting a process per test would dominate the run);
each test resets its records and per-SKU counters and sets its own script.

A test that uses a service's fixture gets that service's marker here (``kafka``, ``postgres``,
``navegador``, ``llm_local``, ``imagen``), so the README's fast loop (``-m "not kafka and not
postgres and not navegador and not llm_local and not caos and not lento"``) needs no marker
written by hand for them; tests that start a service themselves carry the marker in their file.
A test of the built image is also ``lento`` (a build takes minutes with no service running).
"""

from __future__ import annotations

import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness import forkserver
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics
from infra.network import free_port

# fixture -> the marker of the service it needs (pyproject.toml lists the markers).
MARCADORES_POR_FIXTURE = {
    "kafka": "kafka",
    "postgres_dsn": "postgres",
    "navegador": "navegador",
    "local_llm_url": "llm_local",
    "imagen": "imagen",
}


_FAULT_SUITE: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    """``python -m herramientas.cli`` processes are forks of a server that imported the
    third-party libraries once (``harness.forkserver``; ``FICHAS_TEST_FORK=0`` for real ones)."""
    forkserver.enable()


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the fault suite's summary lines (``tests/caos/conftest.py``), here where the
    controller of a pytest-xdist run sees every worker's reports."""
    for name, value in report.user_properties:
        if name == "fault suite" and value not in _FAULT_SUITE:
            _FAULT_SUITE.append(str(value))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """One line per fault scenario, at the end of the run."""
    if _FAULT_SUITE:
        terminalreporter.section("fault suite")
        for line in _FAULT_SUITE:
            terminalreporter.write_line(line)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark each test with the services its fixtures (direct or through others) start.

    Under pytest-xdist (``-n 2 --dist loadgroup``) the tests of the real small model share one
    group, so one worker runs them all: the model takes both cores, and two copies of it
    would only slow each other down.
    """
    for item in items:
        for fixture in getattr(item, "fixturenames", ()):
            marcador = MARCADORES_POR_FIXTURE.get(fixture)
            if marcador is not None:
                item.add_marker(marcador)
            if fixture == "local_llm_url":
                item.add_marker(pytest.mark.xdist_group("llm_local"))
            if fixture == "imagen":  # one pytest-xdist worker builds it and runs every container
                item.add_marker(pytest.mark.lento)
                item.add_marker(pytest.mark.xdist_group("imagen"))
    items.sort(key=_primero)


# The longest tests (``python -m harness.duraciones``, a fresh clone of 9e24521), slowest first.
# pytest-xdist hands tests out in collection order, so these start at once rather than in the
# last minutes, when a long one keeps one worker busy while the others have nothing left to run.
PRIMERO = (
    "tests/stream/test_kill.py",
    "tests/bench/test_bench_quick.py",
    "tests/caos/test_fallos.py",
    "tests/revision/certificador/test_certificador_replicas.py",
    "tests/revision/test_broker_caido.py",
    "tests/deploy/test_compose_topics.py",
    "tests/revision/certificador/test_apertura_puerta.py",
    "tests/revision/certificador/test_retencion_puerta.py",
    "tests/caos/test_zombi.py",
    "tests/bench/test_estado.py",
    "tests/revision/test_candidata_promocion.py",
    "tests/stream/flow/test_retraso.py",
    "tests/herramientas/test_puerta_cli.py",
    "tests/revision/test_caida.py",
    "tests/revision/certificador/test_cobertura_puerta.py",
    # Its containers, on one xdist worker (~90 s), after the longest: scripts/test.sh builds
    # the image beside the run's first minutes, and these wait for that build to end.
    "tests/deploy/test_imagen.py",
)


def _primero(item: pytest.Item) -> int:
    """A test's place in the run: the files of ``PRIMERO`` in its order, then the rest as
    collected (the sort is stable)."""
    archivo = item.nodeid.split("::", 1)[0]
    return PRIMERO.index(archivo) if archivo in PRIMERO else len(PRIMERO)


@pytest.fixture(scope="session")
def fake_llm_server() -> Iterator[FakeLLM]:
    """One fake LLM process for the whole session."""
    with FakeLLM() as llm:
        yield llm


@pytest.fixture
def fake_llm(fake_llm_server: FakeLLM) -> FakeLLM:
    """The session's fake LLM, reset and with the default script (approve everything)."""
    if not fake_llm_server.running:
        fake_llm_server.start()
    fake_llm_server.up()
    fake_llm_server.configure({})
    fake_llm_server.serve_identity()
    fake_llm_server.reset()
    return fake_llm_server


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    """A fresh FICHAS_DATA_DIR per test, so no checkpoint leaks between tests."""
    path = tmp_path / "datos"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def postgres_dsn() -> str:
    """A real PostgreSQL, started by the project's script (it installs it when missing)."""
    import os
    import subprocess

    dsn = os.environ.get("FICHAS_TEST_POSTGRES_DSN")
    if not dsn:
        script = Path(__file__).parents[1] / "scripts" / "postgres.sh"
        subprocess.run(["bash", str(script), "start"], check=True, timeout=600)
        out = subprocess.run(
            ["bash", str(script), "dsn"], check=True, capture_output=True, text=True, timeout=30
        )
        dsn = out.stdout.strip()
    return _database_of_this_worker(dsn)


def _database_of_this_worker(dsn: str) -> str:
    """The DSN itself, or under pytest-xdist a database of this worker's own on that server.

    The tests share tables by design within one run (unique keys per test); two runs side by
    side must not, so each xdist worker (``PYTEST_XDIST_WORKER``, e.g. ``gw0``) gets
    ``<database>_gw0``, created on first use.
    """
    import os
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return dsn
    parts = urlsplit(dsn)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{worker}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        if conn.execute("select 1 from pg_database where datname = %s", (name,)).fetchone() is None:
            conn.execute(f'create database "{name}"')
    return urlunsplit(parts._replace(path=f"/{name}"))


def _read_ready_line(proc: subprocess.Popen[str], timeout: float) -> str:
    """The URL ``llm_local serve`` prints once the model answers."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line = proc.stdout.readline()
            if line.startswith("ready "):
                return line.split()[1]
            if line == "" and proc.poll() is not None:
                break
    raise AssertionError(f"local LLM did not print its URL in {timeout} s (exit {proc.poll()})")


@pytest.fixture(scope="session")
def local_llm_url() -> Iterator[str]:
    """The real small model, served as ``fichas llm-local serve`` runs it, once per session."""
    from herramientas import llm_local

    llm_local.ensure_model(llm_local.DEFAULT_CACHE_DIR)  # join once, outside the start timeout
    proc = subprocess.Popen(
        [sys.executable, "-m", "herramientas.llm_local", "serve", "--port", "0"],
        cwd=Path(__file__).parents[1],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        yield _read_ready_line(proc, timeout=120)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=30) == 0
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise


@pytest.fixture(scope="session")
def imagen() -> str:
    """The production image, built by ``scripts/imagen.sh`` once per session (a build whose
    context has not changed is skipped): its reference, for ``harness.contenedor``."""
    from harness.contenedor import imagen as construida

    return construida()


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One real single-node KRaft broker for the session (scripts/kafka.sh); killed at the end:
    its data is thrown away, and a clean shutdown (about 3 s) would test nothing."""
    broker = KafkaBroker(free_port(), tmp_path_factory.mktemp("kafka"))
    broker.start()
    yield broker
    broker.kill()


@pytest.fixture
def topics() -> Topics:
    """Unique topic names and group for one test."""
    return Topics()
