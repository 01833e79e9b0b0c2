"""Issue 38, "Done when": two app replicas on one PostgreSQL, one certifier.

Two ``fichas revisor`` processes share a brand-new PostgreSQL database, the topics and the
consumer group, as the review Deployment's two pods do. A scripted reviewer decides the
shadow-mode fichas of two families over HTTP, alternating replicas. Over 20 rounds of each
(``--ronda-s``), ``fichas.puerta`` holds exactly one opening record per certified gate, and
exactly one replica says it holds the certifier's lease. Then the holder is killed (SIGKILL,
no release): the other takes the lease within its expiry, and opens a third family's gate,
once.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import id_puerta
from harness.basedatos import base_nueva
from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, revisor_env
from harness.revisor_http import RevisorHttp
from harness.secuencia import aprobaciones_para_abrir
from harness.topicos import Topics, read_all
from infra.network import free_port
from revision.certificador.lease import DURATION_S, RENEW_S
from tests.revision.conftest import (
    CLAVE,
    OTRO_USUARIO,
    USUARIO,
    esperar,
    producir,
    topics_env,
)
from tests.revision.web.test_pagina_puertas import _clave, _decidir_todas, _sombra

pytestmark = [pytest.mark.kafka, pytest.mark.postgres]

# No required attributes: any ficha passes the checks. Two families and `*` are three gates that
# both replicas could open twice; a third family would add 45 more decisions and no new path.
FAMILIAS = ("mochilas", "relojes")
FICHAS = aprobaciones_para_abrir() + 1  # per family: approvals in a row that open; a margin
RONDA_S = "0.25"  # 20 rounds in 5 s: the rounds are the unit of the check, not their pace


def _metrica(app: RevisorProcess, nombre: str) -> float | None:
    """A sample without labels of the app's /metrics; None while absent or unreachable."""
    try:
        texto = app.metrics()
    except OSError:
        return None
    for linea in texto.splitlines():
        if linea.startswith(nombre + " "):
            return float(linea.split()[1])
    return None


def _aperturas(kafka: KafkaBroker, topics: Topics) -> list[dict[str, Any]]:
    """Every open record ever written to the gate topic (read from the start, uncompacted)."""
    return [
        r["value"]
        for r in asyncio.run(read_all(kafka.bootstrap, topics.puerta))
        if r["value"] is not None and r["value"]["abierta"]
    ]


def _titulares(apps: list[RevisorProcess]) -> list[float | None]:
    return [_metrica(a, "fichas_revision_certificador_titular") for a in apps]


def test_dos_replicas_un_certificador(kafka: KafkaBroker, postgres_dsn: str, tmp_path: Path):
    topics = Topics()
    clave = _clave()
    with base_nueva(postgres_dsn) as dsn:
        apps = [
            RevisorProcess(
                revisor_env(
                    kafka.bootstrap,
                    topics_env(topics),
                    tmp_path / f"r{i}",
                    FICHAS_POSTGRES_DSN=dsn,
                ),
                free_port(),
                tmp_path / f"r{i}.log",
                apertura="automatica",
                argumentos=["--ronda-s", RONDA_S],
            )
            for i in range(2)
        ]
        apps[0].add_user(USUARIO, CLAVE)  # one database: both replicas know them
        apps[0].add_user(OTRO_USUARIO, CLAVE)
        try:
            for app in apps:
                app.start()
            for app in apps:
                app.wait_ready()
            esperar(
                lambda: sorted(_titulares(apps)) == [0.0, 1.0],
                "exactly one replica holding the lease",
                explica=lambda: str(_titulares(apps)),
            )
            clientes = [RevisorHttp(a.url) for a in apps]
            # One reviewer per replica: a new login ends the reviewer's other session.
            for cliente, usuario in zip(clientes, (USUARIO, OTRO_USUARIO), strict=True):
                cliente.entrar(usuario, CLAVE)
            registros = [r for f in FAMILIAS for r in _sombra(clave, FICHAS, f)]
            producir(kafka, topics.revision, registros)
            for i, r in enumerate(registros):
                _decidir_todas(clientes[i % 2], [r])
            puertas = {id_puerta(f, clave) for f in (*FAMILIAS, FAMILIA_TODAS)}

            def abiertas() -> Counter[str]:
                """Opening records (own certification) per gate; and no covered record twice
                for one gate and pooled certification."""
                registros = [
                    e for e in _aperturas(kafka, topics) if e["clave"]["modelo"] == clave.modelo
                ]
                cubiertas = Counter(
                    (e["familia"], e["conjunta_actualizada_en"])
                    for e in registros
                    if e["motivo"] == "cubierta_por_conjunta"
                )
                assert all(n == 1 for n in cubiertas.values()), cubiertas
                return Counter(
                    f"{e['familia']}|{clave.texto()}"
                    for e in registros
                    if e["motivo"] == "certificada"
                )

            esperar(lambda: set(abiertas()) == puertas, "every gate open", 120)
            rondas = [_metrica(a, "fichas_revision_certificador_rondas_total") or 0 for a in apps]
            esperar(
                lambda: all(
                    (_metrica(a, "fichas_revision_certificador_rondas_total") or 0) >= r + 20
                    for a, r in zip(apps, rondas, strict=True)
                ),
                "20 more rounds on each replica",
                120,
            )
            assert abiertas() == Counter({p: 1 for p in puertas})
            assert sorted(_titulares(apps)) == [0.0, 1.0]

            # Failover: the holder dies without releasing; the other takes over in time.
            titular = next(a for a in apps if _metrica(a, "fichas_revision_certificador_titular"))
            otra = next(a for a in apps if a is not titular)
            muerta = time.monotonic()
            titular.kill()
            esperar(
                lambda: _metrica(otra, "fichas_revision_certificador_titular") == 1.0,
                "the other replica holding the lease",
                DURATION_S + 2 * RENEW_S + 10,
            )
            assert time.monotonic() - muerta <= DURATION_S + 2 * RENEW_S + 5
            nueva = _sombra(clave, FICHAS, "bolsos")
            producir(kafka, topics.revision, nueva)
            cliente = clientes[apps.index(otra)]
            _decidir_todas(cliente, nueva)
            puertas.add(id_puerta("bolsos", clave))
            esperar(lambda: set(abiertas()) == puertas, "the third family's gate open", 120)
            ronda = _metrica(otra, "fichas_revision_certificador_rondas_total") or 0
            esperar(
                lambda: (
                    (_metrica(otra, "fichas_revision_certificador_rondas_total") or 0) >= ronda + 20
                ),
                "20 more rounds",
                120,
            )
            assert abiertas() == Counter({p: 1 for p in puertas})
        finally:
            for app in apps:
                if app.alive():
                    app.stop()
