"""A real local Kafka broker for tests, driven through scripts/kafka.sh.

Typical session fixture (tests/stream/conftest.py)::

    from harness.kafka_broker import KafkaBroker
    from infra.network import free_port

    @pytest.fixture(scope="session")
    def kafka(tmp_path_factory):
        broker = KafkaBroker(free_port(), tmp_path_factory.mktemp("kafka"))
        broker.start()
        yield broker
        broker.stop()

Each broker needs its own ``data_dir``: the KRaft metadata written at format
time records the controller's port, so a data folder is tied to its ports.

``SecuredKafkaBroker`` is the script's secured mode (SCRAM over TLS, mutual TLS, ACLs added in
one CreateAcls request); its PLAINTEXT listener stays the super user's, for the helpers.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import threading
from collections.abc import Coroutine, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

REPO_DIR = Path(__file__).resolve().parent.parent
SCRIPT = REPO_DIR / "scripts" / "kafka.sh"

T = TypeVar("T")


def _run_blocking(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to the end from sync code, even inside a running loop.

    asyncio.run() refuses to nest, and async tests call the sync helpers from
    inside pytest-asyncio's loop, so the coroutine gets a loop of its own in a
    short-lived thread.
    """
    result: list[T] = []
    error: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(coro))
        except BaseException as exc:
            error.append(exc)

    t = threading.Thread(target=target, name="kafka-broker-helper")
    t.start()
    t.join()
    if error:
        raise error[0]
    return result[0]


class KafkaBroker:
    """One single-node KRaft broker on 127.0.0.1:``port`` with data in ``data_dir``."""

    def __init__(
        self,
        port: int,
        data_dir: str | os.PathLike[str],
        *,
        controller_port: int | None = None,
        timeout_s: int = 60,
    ) -> None:
        self.port = port
        self.controller_port = controller_port if controller_port is not None else port + 1000
        self.data_dir = Path(data_dir)
        self.timeout_s = timeout_s

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def log_file(self) -> Path:
        """The broker's own output (stdout + log4j), handy in a failing test's message."""
        return self.data_dir / "kafka.out"

    # -- process control, all through the script so tests and humans share one path

    def _env(self) -> dict[str, str]:
        """The script's environment for this broker."""
        env = dict(os.environ)
        env["FICHAS_KAFKA_PORT"] = str(self.port)
        env["FICHAS_KAFKA_CONTROLLER_PORT"] = str(self.controller_port)
        env["FICHAS_KAFKA_DATA"] = str(self.data_dir)
        env["FICHAS_KAFKA_TIMEOUT"] = str(self.timeout_s)
        return env

    def _script(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        env = self._env()
        proc = subprocess.run(
            ["bash", str(SCRIPT), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            # The script has its own 60 s readiness limit; this only guards a hang,
            # and leaves room for a first-time Maven fetch.
            timeout=self.timeout_s + 600,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(
                f"scripts/kafka.sh {' '.join(args)} failed ({proc.returncode}):\n"
                f"{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def start(self) -> None:
        """Start (formatting storage the first time) and wait until it serves. Idempotent."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._script("start")

    def stop(self) -> None:
        """Clean shutdown (SIGTERM, SIGKILL after 20 s)."""
        self._script("stop")

    def kill(self) -> None:
        """SIGKILL the broker, as a crash would; start() brings it back on the same data."""
        self._script("kill")

    def dump_log(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Kafka's DumpLogSegments with ``args`` (``scripts/kafka.sh dump-log``), as the
        script runs its tools; its exit status is the caller's to read."""
        return self._script("dump-log", *args, check=False)

    def restart(self) -> None:
        self.stop()
        self.start()

    def is_running(self) -> bool:
        return self._script("status", check=False).returncode == 0

    def wait(self) -> None:
        """Wait until a running broker answers again (e.g. after a restart elsewhere)."""
        self._script("wait")

    # -- topics, with the product's admin client (harness.topicos)

    async def create_topic_async(
        self, name: str, partitions: int = 4, *, replication_factor: int = 1
    ) -> None:
        from harness.topicos import crear_topic

        await crear_topic(self.bootstrap, name, partitions, replicas=replication_factor)

    def create_topic(self, name: str, partitions: int = 4, *, replication_factor: int = 1) -> None:
        """Create a topic (no-op if it exists). Blocking; usable from sync or async code."""
        _run_blocking(
            self.create_topic_async(name, partitions, replication_factor=replication_factor)
        )

    async def list_topics_async(self) -> list[str]:
        from harness.topicos import settings_for
        from infra.kafka.clients import build_admin

        admin = build_admin(settings_for(self.bootstrap))
        await admin.start()
        try:
            return sorted(await admin.list_topics())
        finally:
            await admin.close()

    def list_topics(self) -> list[str]:
        return _run_blocking(self.list_topics_async())

    def __enter__(self) -> KafkaBroker:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class SecuredKafkaBroker(KafkaBroker):
    """A broker in the script's secured mode (``scripts/kafka.sh``, FICHAS_KAFKA_TLS_DIR).

    ``tls_dir`` holds ``ca.crt`` and ``broker.pem`` (``harness.pki``); ``scram_users`` maps user
    names to passwords, created for SCRAM-SHA-512 and SCRAM-SHA-256 when the storage is
    formatted. A client certificate ``CN=<name>`` logs in as ``User:<name>``, the same principal
    as the SCRAM user ``<name>`` (``ssl.principal.mapping.rules``), so one set of ACLs serves a
    component over either.
    """

    def __init__(
        self,
        port: int,
        data_dir: str | os.PathLike[str],
        tls_dir: Path,
        scram_users: Mapping[str, str],
        *,
        sasl_ssl_port: int,
        ssl_port: int,
        controller_port: int | None = None,
        timeout_s: int = 60,
    ) -> None:
        super().__init__(port, data_dir, controller_port=controller_port, timeout_s=timeout_s)
        self.tls_dir = tls_dir
        self.scram_users = dict(scram_users)
        self.sasl_ssl_port = sasl_ssl_port
        self.ssl_port = ssl_port

    @classmethod
    def con_usuarios(
        cls, carpeta: Path, pki_folder: Path, usuarios: Iterable[str]
    ) -> tuple[SecuredKafkaBroker, dict[str, Path]]:
        """A broker (not started) in ``carpeta/kafka`` with a fresh random password per user,
        each written to ``carpeta/<user>.clave`` (mode 0600), as a Secret's file would hold it."""
        import secrets

        claves = {}
        for usuario in usuarios:
            claves[usuario] = carpeta / f"{usuario}.clave"
            claves[usuario].write_text(secrets.token_urlsafe(18) + "\n")
            claves[usuario].chmod(0o600)
        from infra.network import free_port

        broker = cls(
            free_port(),
            carpeta / "kafka",
            pki_folder,
            {u: p.read_text().strip() for u, p in claves.items()},
            sasl_ssl_port=free_port(),
            ssl_port=free_port(),
        )
        return broker, claves

    @property
    def sasl_ssl_bootstrap(self) -> str:
        """The SASL_SSL listener (SCRAM over TLS)."""
        return f"127.0.0.1:{self.sasl_ssl_port}"

    @property
    def ssl_bootstrap(self) -> str:
        """The SSL listener that requires a client certificate (mutual TLS)."""
        return f"127.0.0.1:{self.ssl_port}"

    def _env(self) -> dict[str, str]:
        """The plain broker's environment plus the secured mode's."""
        env = super()._env()
        scram = Path(self.data_dir) / "scram-users"
        env["FICHAS_KAFKA_TLS_DIR"] = str(self.tls_dir)
        env["FICHAS_KAFKA_SASL_SSL_PORT"] = str(self.sasl_ssl_port)
        env["FICHAS_KAFKA_SSL_PORT"] = str(self.ssl_port)
        env["FICHAS_KAFKA_SCRAM_FILE"] = str(scram)
        env["FICHAS_KAFKA_PRINCIPAL_RULES"] = "RULE:^CN=(.*)$/$1/,DEFAULT"
        return env

    def start(self) -> None:
        """Write the SCRAM users' file (read at the first start's format), then start."""
        Path(self.data_dir).mkdir(parents=True, exist_ok=True)
        scram = Path(self.data_dir) / "scram-users"
        scram.write_text("".join(f"{u} {p}\n" for u, p in self.scram_users.items()))
        scram.chmod(0o600)
        super().start()

    def acls(self, *args: str) -> str:
        """``kafka-acls ARGS`` against this broker (as the super user); its output."""
        return self._script("acls", *args).stdout

    def add_acls(self, commands: Iterable[list[str]]) -> None:
        """Add what these ``kafka-acls --add ...`` argument lists say, in one CreateAcls
        request as the super user (``harness.acls.create_acls``): the same bindings the tool
        would add, without its JVM per command (about 2 s of CPU each, 39 per run)."""
        from harness.acls import create_acls

        _run_blocking(create_acls(self.bootstrap, commands))
