"""``fichas revisor`` as a real process, and the review records the worker would send it.

Tests, the screenshots script and ``fichas demo`` start the app the way an operator does (the
console entry point, environment configuration), add a reviewer with ``fichas revisor
usuarios``, and wait for ``/health/ready``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from criterios import CRITERIOS_VERSION
from esquemas.constantes import MOTIVO_RECHAZADA
from harness.procesos import REPO, CommandProcess


class RevisorProcess(CommandProcess):
    """One ``fichas revisor`` process on 127.0.0.1 and a free port."""

    name = "revisor"

    def command(self) -> list[str]:
        """``fichas revisor --port PORT``."""
        return ["revisor", "--port", str(self.port)]

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

    def wait_exit(self, timeout: float = 30) -> int:
        """The exit code, once the process ends by itself."""
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stop(self) -> None:
        """SIGTERM, and SIGKILL if it does not end within 30 s; nothing if not running."""
        if not self.alive():
            return
        try:
            self.terminate(timeout=30)
        except subprocess.TimeoutExpired:
            self.kill()


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
