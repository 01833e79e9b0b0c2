"""The broker is down when a reviewer approves: the decision is kept, the reviewer is told, and
the outbox publishes it once when Kafka is back (a broker of its own, stopped and restarted).

The app waits ``--envio-s`` for the broker's acknowledgement before it tells the reviewer (20 s
by default); this test gives it 3, which is the same wait, ended sooner."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By

from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, ficha_en_revision, revisor_env
from harness.topicos import Topics
from infra.network import free_port
from tests.revision.conftest import (
    CLAVE,
    USUARIO,
    abrir_item,
    confirmado,
    decisiones_topic,
    entrar,
    esperar,
    leer,
    producir,
    topics_env,
)

pytestmark = pytest.mark.kafka


def _broker_propio(tmp_path) -> KafkaBroker:
    """A broker for this test alone; on a loaded machine a first start may lose its port to
    another process, so a fresh port and folder are tried before giving up."""
    for intento in range(3):
        broker = KafkaBroker(free_port(), tmp_path / f"kafka-{intento}")
        try:
            broker.start()
            return broker
        except RuntimeError:
            if intento == 2:
                raise
    raise AssertionError("unreachable")


def test_broker_caido_al_aprobar_se_envia_una_vez_al_volver(tmp_path, navegador):
    broker = _broker_propio(tmp_path)
    topics = Topics()
    env = revisor_env(broker.bootstrap, topics_env(topics), tmp_path / "datos")
    app = RevisorProcess(env, free_port(), tmp_path / "revisor.log", argumentos=["--envio-s", "3"])
    app.add_user(USUARIO, CLAVE)
    item = ficha_en_revision("ZAP-CAIDO-1")
    try:
        app.start()
        app.wait_ready()
        producir(broker, topics.revision, [item])
        entrar(navegador, app)
        abrir_item(navegador, app, item["event_id"])
        broker.stop()
        navegador.find_element(By.ID, "aprobar").click()
        confirmado(navegador, "se enviará en cuanto Kafka responda")
        broker.start()
        decisiones = esperar(
            lambda: [
                r
                for r in leer(broker, decisiones_topic(topics))
                if r["event_id"] == item["event_id"]
            ],
            "the decision once the broker is back",
            timeout=120,
        )
        assert len(decisiones) == 1
        # The ficha to publish travels in the decision; the worker publishes it, never the app.
        assert decisiones[0]["publicacion"]["revision"]["revisor"] == USUARIO
        assert not leer(broker, topics.publicadas)
    finally:
        app.stop()
        broker.kill()  # a throwaway broker: a clean shutdown would test nothing
