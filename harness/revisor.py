"""``fichas revisor`` as a real process, and the review records the worker would send it.

Tests, the screenshots script and ``fichas demo`` start the app the way an operator does (the
console entry point, environment configuration), add a reviewer with ``fichas revisor
usuarios``, and wait for ``/health/ready``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from criterios import CRITERIOS_VERSION
from esquemas.constantes import MOTIVO_RECHAZADA

REPO = Path(__file__).resolve().parents[1]


class RevisorProcess:
    """One ``fichas revisor`` process on 127.0.0.1 and a free port."""

    def __init__(self, env: dict[str, str], port: int, log_path: Path) -> None:
        self.env = env
        self.port = port
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def add_user(self, nombre: str, clave: str) -> None:
        """``fichas revisor usuarios NOMBRE`` with the password on stdin."""
        subprocess.run(
            [sys.executable, "-m", "herramientas.cli", "revisor", "usuarios", nombre],
            input=(clave + "\n").encode(),
            env=self.env,
            cwd=REPO,
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self, extra_env: dict[str, str] | None = None) -> None:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "herramientas.cli", "revisor", "--port", str(self.port)],
            env={**self.env, **(extra_env or {})},
            cwd=REPO,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )

    def wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        while time.monotonic() < deadline:
            assert self.proc is not None and self.proc.poll() is None, self.log_tail()
            try:
                with opener.open(f"{self.url}/health/ready", timeout=2):
                    return
            except OSError:
                time.sleep(0.2)
        raise AssertionError("revisor never became ready\n" + self.log_tail())

    def metrics(self) -> str:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{self.url}/metrics", timeout=10) as resp:
            return str(resp.read().decode())

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def wait_exit(self, timeout: float = 30) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def revisor_env(
    brokers: str, topics_env: dict[str, str], data_dir: Path, **extra: str
) -> dict[str, str]:
    """The app's environment: the caller's, this broker, these topics, this data directory."""
    env = dict(os.environ)
    env.update(topics_env)
    env.update(
        FICHAS_KAFKA_BROKERS=brokers,
        FICHAS_DATA_DIR=str(data_dir),
        FICHAS_PARTICIONES="2",
        FICHAS_LOG_NIVEL="INFO",
    )
    env.pop("FICHAS_POSTGRES_DSN", None)
    env.update(extra)
    return env


def ficha_en_revision(
    sku: str,
    version: int = 1,
    *,
    titulo: str = "Zapatillas de running negras de malla",
    titulo_proveedor: str = "RUNNER X2 black mesh sneaker men 42",
    familia: str = "zapatillas",
    motivo: str = MOTIVO_RECHAZADA,
    event_id: str | None = None,
) -> dict[str, Any]:
    """A ``FichaEnRevision`` as the worker writes it (v1.1, with ``origen``)."""
    ficha = {
        "titulo": titulo,
        "descripcion": "Zapatilla ligera para correr, con parte superior de malla y suela de "
        "goma. Pesa 280 g.",
        "atributos": {"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
    }
    problema = {"criterio": "C06", "detalle": "la descripción no dice para qué sirve"}
    return {
        "event_id": event_id or f"ev-{uuid.uuid4().hex[:12]}",
        "sku": sku,
        "version": version,
        "familia": familia,
        "ficha": ficha,
        "intentos": 2,
        "motivo": motivo,
        "problemas": [problema],
        "historial": [
            {"intento": 1, "ficha": ficha, "veredicto": {"aprobada": False,
                                                         "problemas": [problema]}},
            {"intento": 2, "ficha": ficha, "veredicto": {"aprobada": False,
                                                         "problemas": [problema]}},
        ],
        "criterios_version": CRITERIOS_VERSION,
        "enviada_en": "2026-12-01T04:00:00Z",
        "origen": {
            "ficha_proveedor": {
                "titulo": titulo_proveedor,
                "descripcion": "Lightweight running shoe, mesh upper, rubber sole. Weight 280 g.",
                "atributos": {"color": "negro", "talla": "42", "material": "malla",
                              "genero": "hombre"},
                "idioma": "en",
            },
            "cifras": {"peso_g": 280},
        },
    }


def muestra_publicada(sku: str, version: int = 1, familia: str = "zapatillas") -> dict[str, Any]:
    """A sampled ``FichaPublicada`` as the worker writes it on the sample topic."""
    revision = ficha_en_revision(sku, version, familia=familia)
    return {
        "event_id": revision["event_id"],
        "sku": sku,
        "version": version,
        "familia": familia,
        "ficha": revision["ficha"],
        "intentos": 1,
        "criterios_version": CRITERIOS_VERSION,
        "modelo": "qwen3-30b-a3b",
        "publicada_en": "2026-12-01T04:00:00Z",
        "revision": None,
        "origen": revision["origen"],
    }
