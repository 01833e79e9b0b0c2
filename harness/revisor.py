"""``fichas revisor`` as a real process, and the review records the worker would send it.

Tests, the screenshots script and ``fichas demo`` start the app the way an operator does (the
console entry point, environment configuration), add a reviewer with ``fichas revisor
usuarios``, and wait for ``/health/ready``.
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from criterios import CRITERIOS_VERSION
from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_EDITADA,
    FAMILIA_TODAS,
    MOTIVO_RECHAZADA,
    TIPO_REVISION,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from esquemas.wire import cabeceras_decision, encode_value
from harness.entorno import entorno
from harness.estados_puerta import estado as estado_puerta
from harness.procesos import CommandProcess
from harness.worker import settings_from_env
from puerta.resolucion import umbral_aplicable
from revision.almacen import decisiones as dec
from revision.almacen.flujo import registro_a_enviar
from revision.almacen.item import Item
from revision.web.app import guardar_usuario
from revision.web.seguridad import hash_clave


class RevisorProcess(CommandProcess):
    """One ``fichas revisor`` process on 127.0.0.1 and a free port.

    ``apertura`` passes ``--apertura automatica|manual`` (None: the command's default);
    ``argumentos`` any other options (``--apertura-familias``, ``--ronda-s``, ...).
    """

    name = "revisor"

    def __init__(
        self,
        env: dict[str, str],
        port: int,
        log_path: Path,
        apertura: str | None = None,
        argumentos: Sequence[str] = (),
    ) -> None:
        super().__init__(env, port, log_path)
        self.apertura = apertura
        self.argumentos = list(argumentos)

    def command(self) -> list[str]:
        """``fichas revisor --port PORT [--apertura MODO] [ARGUMENTOS...]``."""
        extra = ["--apertura", self.apertura] if self.apertura else []
        return ["revisor", "--port", str(self.port), *extra, *self.argumentos]

    def add_user(self, nombre: str, clave: str) -> None:
        """Save a reviewer as ``fichas revisor usuarios NOMBRE`` does, in this process.

        The same function the command runs after reading the password, on this app's settings
        (``FICHAS_DATA_DIR`` or ``FICHAS_POSTGRES_DSN``), on a thread of its own so that an
        async test's running loop is no obstacle. Tests add a reviewer about sixty times; as a
        process each spent a second of CPU importing the app. The command itself, stdin and
        prompt and exit codes, is tested through its entry point in tests/revision/web/test_app.py
        and test_seguridad.py.
        """
        settings = settings_from_env(self.env)
        hilo = threading.Thread(
            target=asyncio.run, args=(guardar_usuario(settings, nombre, hash_clave(clave)),)
        )
        hilo.start()
        hilo.join(60)
        assert not hilo.is_alive(), f"saving reviewer {nombre} did not end in 60 s"

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
    """The app's environment (``harness.entorno``): this broker, these topics, this data
    directory, SQLite unless ``extra`` names a PostgreSQL; no blind shadow share (as
    ``harness.worker.worker_env``'s workers: the recall's held-back sample then draws from
    every event)."""
    env = entorno(
        kafka=brokers,
        data_dir=data_dir,
        FICHAS_PARTICIONES="2",
        FICHAS_LOG_NIVEL="INFO",
        FICHAS_SOMBRA_PROPORCION="0",
    )
    return env | topics_env | extra


def ficha_en_revision(
    sku: str,
    version: int = 1,
    *,
    titulo: str = "Zapatillas de running negras de malla",
    titulo_proveedor: str = "RUNNER X2 black mesh sneaker men 42",
    familia: str = "zapatillas",
    motivo: str = MOTIVO_RECHAZADA,
    event_id: str | None = None,
    puntuaciones: tuple[float | None, float | None] = (None, None),
) -> dict[str, Any]:
    """A ``FichaEnRevision`` as the worker writes it (with ``origen``; with each attempt's
    ``puntuacion``, contract v1.2)."""
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
            {
                "intento": i + 1,
                "ficha": ficha,
                "veredicto": {"aprobada": False, "problemas": [problema]},
                "puntuacion": puntuacion,
            }
            for i, puntuacion in enumerate(puntuaciones)
        ],
        "criterios_version": CRITERIOS_VERSION,
        "enviada_en": "2026-12-01T04:00:00Z",
        "origen": {
            "ficha_proveedor": {
                "titulo": titulo_proveedor,
                "descripcion": "Lightweight running shoe, mesh upper, rubber sole. Weight 280 g.",
                "atributos": {
                    "color": "negro",
                    "talla": "42",
                    "material": "malla",
                    "genero": "hombre",
                },
                "idioma": "en",
            },
            "cifras": {"peso_g": 280},
        },
    }


def puerta_aplicada(
    estado: EstadoPuerta | None = None, *, modelo: str = "qwen3-30b-a3b"
) -> dict[str, Any]:
    """The ``puerta`` a published ficha carries: of ``estado`` (an open gate), or of a pooled
    gate open at λ = 0.8 for ``modelo``, certified on 40 approvals with one error."""
    aplicada = umbral_aplicable(estado if estado is not None else estado_abierto(modelo=modelo))
    assert aplicada is not None, "a published ficha carries an open gate"
    return aplicada.model_dump(mode="json")


def estado_abierto(
    *,
    familia: str = FAMILIA_TODAS,
    modelo: str = "qwen3-30b-a3b",
    umbral: float = 0.8,
    n: int = 40,
    k: int = 1,
    actualizada_en: datetime | None = None,
) -> EstadoPuerta:
    """An open gate state as ``fichas calibrar`` writes it (``modelo`` makes a test's key its
    own on a shared topic)."""
    clave = ClavePuerta(
        modelo=modelo,
        prompt_evaluador_sha256="0" * 64,
        criterios_version=CRITERIOS_VERSION,
        modo_evaluador="veredicto",
    )
    return estado_puerta(
        clave,
        umbral,
        familia,
        n=n,
        k=k,
        actualizada_en=actualizada_en or datetime(2026, 12, 1, 3, 0, tzinfo=UTC),
        origen_datos="prueba: conjunto etiquetado",
    )


def muestra_publicada(
    sku: str,
    version: int = 1,
    familia: str = "zapatillas",
    *,
    puerta: dict[str, Any] | None = None,
    puntuacion: float | None = None,
) -> dict[str, Any]:
    """A sampled ``FichaPublicada`` as the worker writes it on the sample topic (with the gate
    that let it through and its score, contract v1.2, when given)."""
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
        "puerta": puerta,
        "puntuacion": puntuacion,
    }


def aprobacion(
    revision: dict[str, Any],
    revisor: str = "ana",
    instante: float = 1_796_000_000.0,
    ficha: dict[str, Any] | None = None,
    modelo: str = "fake",
) -> tuple[bytes, bytes, list[tuple[str, bytes]]]:
    """(key, value, headers) of the ``fichas.decisiones`` record the reviewer app sends when a
    person approves the ``FichaEnRevision`` ``revision`` (edited to ``ficha`` when given),
    built by the app's own functions (``revision.almacen.decisiones``,
    ``revision.almacen.flujo``)."""
    item = Item(
        event_id=revision["event_id"],
        tipo=TIPO_REVISION,
        motivo=revision["motivo"],
        sku=revision["sku"],
        version=int(revision["version"]),
        familia=revision["familia"],
        criterios=sorted({p["criterio"] for p in revision["problemas"]}),
        datos=revision,
        recibido_en=instante,
        estado="abierta",
        cerrado_en=None,
    )
    aprobada = ficha if ficha is not None else dict(revision["ficha"])
    editados = dec.campos_editados(dec.ficha_de(item), aprobada)
    decision = DECISION_EDITADA if editados else DECISION_APROBADA
    registro = registro_a_enviar(
        dec.decision_de(item, decision, revisor, instante, editados=editados),
        dec.publicacion(item, aprobada, revisor, bool(editados), instante, modelo),
    )
    return item.sku.encode(), encode_value(registro), cabeceras_decision(registro)
