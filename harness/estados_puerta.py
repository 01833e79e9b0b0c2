"""Gate states for tests: the key a fake-LLM worker runs with, and open or closed gates on a topic.

A worker started by ``harness.worker.worker_env`` runs the model ``fake`` with the criteria in
the repository, against the fake LLM serving its default identity
(``harness.fake_llm.answers.DEFAULT_IDENTITY``), so its gate key is ``clave_fake()``
(``identidad=`` for the key of other weights the fake serves). ``abrir`` and ``cerrar`` write
one state to the gate topic with ``puerta.topico.escribir_estado``, as ``fichas calibrar`` and
the review app do; ``leer`` reads every state back, as a worker does at start-up;
``fichas_puerta`` and ``fichas_calibrar`` run those commands as an operator does.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from criterios import CRITERIOS_VERSION
from esquemas.constantes import (
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_CERTIFICADA,
    MOTIVO_PUERTA_COTA_BAJA,
    OBJETIVO_PUERTA,
    MotivoPuerta,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from grafo import (
    LLMSettings,
    Plantillas,
    build_chat_model,
    clave_puerta,
    modelo_servido,
    muestreos,
)
from harness import forkserver, topicos
from harness.entorno import entorno
from harness.fake_llm.answers import models_body
from harness.procesos import REPO
from harness.topicos import settings_for
from infra.kafka.topics import topic_configs
from puerta.topico import escribir_estado, leer_estados

MODELO_FAKE = "fake"  # FICHAS_LLM_MODELO of harness.worker.worker_env


def clave_fake(
    rubrica: bool = False,
    modelo: str = MODELO_FAKE,
    max_intentos: int = 3,
    identidad: Mapping[str, Any] | None = None,
    plantillas: Plantillas | None = None,
    ejemplos: bool = False,
) -> ClavePuerta:
    """The gate key of a worker of ``worker_env`` (model ``fake``, the repository's criteria,
    ``FICHAS_MAX_INTENTOS`` and ``FICHAS_GENERADOR_EJEMPLOS`` as given: both are part of the
    generator's side of the key) against
    the fake LLM serving ``identidad`` (its fields over the defaults; None: the defaults), with
    the request settings the default ``FICHAS_LLM_*`` make each side send, and the prompt
    texts of ``FICHAS_PROMPT_*_ARCHIVO`` (``plantillas``; None: the package's templates)."""
    servido = modelo_servido(models_body(dict(identidad or {}), 0), modelo)
    llm = LLMSettings(url="http://127.0.0.1:9/v1", model=modelo)
    generador, evaluador = muestreos(build_chat_model(llm, direct=False))
    return clave_puerta(
        modelo,
        rubrica,
        CRITERIOS_VERSION,
        ejemplos=ejemplos,
        max_intentos=max_intentos,
        modelo_servido=servido,
        muestreo_generador=generador,
        muestreo_evaluador=evaluador,
        plantillas=plantillas or Plantillas(),
    )


def estado(
    clave: ClavePuerta,
    umbral: float | None = 0.5,
    familia: str = FAMILIA_TODAS,
    abierta: bool = True,
    motivo: MotivoPuerta | None = None,
    n: int = 60,
    k: int = 1,
    actualizada_en: datetime | None = None,
    origen_datos: str = "harness.estados_puerta (test)",
) -> EstadoPuerta:
    """A gate state: open at ``umbral`` by default, or closed (``abierta=False``), written now
    unless ``actualizada_en`` says when."""
    if motivo is None:
        motivo = MOTIVO_PUERTA_CERTIFICADA if abierta else MOTIVO_PUERTA_COTA_BAJA
    return EstadoPuerta(
        familia=familia,
        clave=clave,
        abierta=abierta,
        umbral=umbral if abierta else None,
        objetivo=OBJETIVO_PUERTA,
        delta=DELTA_PUERTA,
        n=n,
        k=k,
        origen_datos=origen_datos,
        motivo=motivo,
        cota_inferior=None,
        actualizada_en=actualizada_en or datetime.now(UTC),
    )


async def crear_topic(bootstrap: str, topic: str, particiones: int = 1) -> None:
    """The gate topic, with the configuration the product creates it with
    (``infra.kafka.topics.topic_configs``: compacted); nothing if it exists already.

    The test broker creates no topic by itself, so a gate written before a worker started
    needs its topic first.
    """
    ajustes = settings_for(bootstrap).model_copy(update={"topic_puerta": topic})
    await topicos.crear_topic(bootstrap, topic, particiones, topic_configs(ajustes)[topic])


async def escribir(bootstrap: str, topic: str, nuevo: EstadoPuerta) -> EstadoPuerta:
    """Write one gate state to ``topic`` (created if missing); return it."""
    await crear_topic(bootstrap, topic)
    await escribir_estado(settings_for(bootstrap), nuevo, topic=topic)
    return nuevo


async def abrir(
    bootstrap: str,
    clave: ClavePuerta,
    topic: str,
    umbral: float = 0.5,
    familia: str = FAMILIA_TODAS,
) -> EstadoPuerta:
    """Write an open gate for ``clave`` (pooled by default) to ``topic``; return it.

    Since v1.5 a pooled record alone governs no family: for a family's fichas to publish,
    open that family's gate (``familia``) or write its covered record too.
    """
    return await escribir(bootstrap, topic, estado(clave, umbral, familia))


async def cerrar(
    bootstrap: str,
    clave: ClavePuerta,
    topic: str,
    familia: str = FAMILIA_TODAS,
    motivo: MotivoPuerta = MOTIVO_PUERTA_COTA_BAJA,
) -> EstadoPuerta:
    """Write the gate of ``clave`` and ``familia`` closed (by the online bound by default)."""
    return await escribir(bootstrap, topic, estado(clave, None, familia, False, motivo))


def leer(bootstrap: str, topic: str) -> dict[str, EstadoPuerta]:
    """Every gate's and hold's latest state on ``topic``, by id, read to its end as a worker
    reads it at start-up (from a test's thread: no event loop running)."""
    return asyncio.run(leer_estados(settings_for(bootstrap), topic, espera_s=30))


def fichas_puerta(
    args: list[str], env: Mapping[str, str], timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``fichas puerta ARGS`` as an operator runs it (``python -m herramientas.cli``, which the
    console script ``fichas`` calls: tests/herramientas/test_operacion_cli.py proves the two are
    the same command), forked from the suite's preloaded server (``harness.forkserver``), with
    the test's environment (``env``: its ``FICHAS_*``; nothing else of the caller's leaks in)."""
    return _fichas("puerta", args, env, timeout, REPO)


def fichas_calibrar(
    args: list[str], env: Mapping[str, str], cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """``fichas calibrar ARGS`` run as ``fichas_puerta`` runs its command, in ``cwd`` (where a
    relative ``--salida`` and its re-scoring cache go)."""
    return _fichas("calibrar", args, env, timeout, cwd)


def _fichas(
    comando: str, args: list[str], env: Mapping[str, str], timeout: float, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``python -m herramientas.cli COMANDO ARGS`` forked, with the test's ``FICHAS_*`` only."""
    base = entorno()
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", comando, *args],
        env=base | {"PYTHONPATH": str(REPO)} | dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )
