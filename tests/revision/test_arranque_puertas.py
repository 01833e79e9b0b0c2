"""The app's view of ``fichas.puerta`` exists before its first round (docs/revision.md, «La
vista existe antes de la primera vuelta»).

On a cluster without the project's topics the app creates them before its gate reader starts,
so the reader follows ``fichas.puerta`` from its first record: it never reports the topic
missing (which it did on the old order, every time, and then looked again only after
``puerta.topico.ESPERA_TOPIC_S``), and a gate written right after the app is ready shows on its
page. No bound on how soon, so a slow machine cannot fail it. A real app process on a real
broker, on topics nobody created.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest

from criterios import CRITERIOS_VERSION
from esquemas.estado_puerta import ClavePuerta, id_puerta
from harness.estados_puerta import abrir
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.revisor import RevisorProcess, revisor_env
from harness.revisor_http import RevisorHttp
from harness.topicos import Topics
from infra.network import free_port
from tests.revision.conftest import CLAVE, USUARIO, topics_env

pytestmark = pytest.mark.kafka


def test_la_app_crea_sus_topics_antes_de_leer_las_puertas(
    kafka: KafkaBroker, tmp_path: Path
) -> None:
    topics = Topics()
    env = revisor_env(kafka.bootstrap, topics_env(topics), tmp_path / "datos")
    app = RevisorProcess(env, free_port(), tmp_path / "revisor.log")
    app.add_user(USUARIO, CLAVE)
    app.start()
    app.wait_ready()
    try:
        clave = ClavePuerta(
            modelo=f"arranque-{uuid.uuid4().hex[:8]}",
            prompt_evaluador_sha256="e" * 64,
            criterios_version=CRITERIOS_VERSION,
            modo_evaluador="veredicto",
            prompt_generador_sha256="g" * 64,
        )
        asyncio.run(abrir(kafka.bootstrap, clave, topics.puerta, familia="zapatillas"))
        cliente = RevisorHttp(app.url)
        cliente.entrar(USUARIO, CLAVE)
        seccion = f'data-puerta="{id_puerta("zapatillas", clave)}"'

        def abierta_en_la_pagina() -> bool:
            estado, _, pagina = cliente.pedir("/puertas")
            assert estado == 200, estado
            inicio = pagina.find(seccion)
            return inicio >= 0 and "estado-puerta abierta" in pagina[inicio : inicio + 800]

        # The reader found the topic at its start (on the old order it was created later and
        # the reader said so, then looked again only after ESPERA_TOPIC_S)...
        assert "does not exist yet" not in app.log_path.read_text(), app.log_tail()
        # ...and follows it: the gate written after start-up shows on the app's page.
        asyncio.run(
            until(
                abierta_en_la_pagina,
                timeout=30,
                every=0.2,
                explain=lambda: (
                    "the gate written after start-up is not open in the app's "
                    "view:\n" + app.log_tail()
                ),
            )
        )
    finally:
        assert app.terminate(timeout=60) == 0, app.log_tail()
