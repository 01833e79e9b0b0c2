"""kill -9 between the committed decision and its send: after restart, sent once, with the ficha."""

from __future__ import annotations

import signal
import time

import pytest
from selenium.webdriver.common.by import By

from harness.revisor import RevisorProcess, ficha_en_revision, revisor_env
from harness.topicos import Topics
from infra.fault_points import ALLOWANCE, REVISOR_CAIDA_TRAS_DECISION, SWITCH
from infra.network import free_port
from tests.revision.conftest import (
    CLAVE,
    USUARIO,
    abrir_item,
    decisiones_topic,
    entrar,
    esperar,
    leer,
    producir,
    topics_env,
)

pytestmark = pytest.mark.kafka


def test_kill_9_tras_la_decision_la_envia_una_vez_al_volver(kafka, tmp_path, navegador):
    topics = Topics()
    env = revisor_env(kafka.bootstrap, topics_env(topics), tmp_path / "datos")
    app = RevisorProcess(env, free_port(), tmp_path / "revisor.log")
    app.add_user(USUARIO, CLAVE)
    item = ficha_en_revision("ZAP-KILL-1")
    # The fault point makes the app SIGKILL itself right after the decision row is committed.
    app.start({SWITCH: REVISOR_CAIDA_TRAS_DECISION, ALLOWANCE: "1"})
    try:
        app.wait_ready()
        producir(kafka, topics.revision, [item])
        entrar(navegador, app)
        abrir_item(navegador, app, item["event_id"])
        navegador.set_page_load_timeout(10)
        try:
            navegador.find_element(By.ID, "aprobar").click()
        except Exception:  # the page never loads: the server died mid-request
            pass
        assert app.wait_exit(timeout=30) == -signal.SIGKILL, app.log_tail()
        time.sleep(2)
        assert not [
            r for r in leer(kafka, decisiones_topic(topics)) if r["event_id"] == item["event_id"]
        ]

        app.start()  # same data directory, the fault point not armed
        app.wait_ready()
        decisiones = esperar(
            lambda: [
                r
                for r in leer(kafka, decisiones_topic(topics))
                if r["event_id"] == item["event_id"]
            ],
            "the decision after restart",
        )
        assert len(decisiones) == 1 and decisiones[0]["decision"] == "aprobada"
        # The decision carries the ficha to publish; the worker publishes it, never the app.
        assert decisiones[0]["publicacion"]["revision"]["revisor"] == USUARIO
        assert not leer(kafka, topics.publicadas)
        # The decision is kept: the item shows as decided, and a second click changes nothing.
        navegador.set_page_load_timeout(30)
        abrir_item(navegador, app, item["event_id"])
        assert "aprobada" in navegador.find_element(By.ID, "estado").text
        assert not navegador.find_elements(By.ID, "aprobar")
        time.sleep(6)  # one period of the outbox's resend loop
        assert (
            len(
                [
                    r
                    for r in leer(kafka, decisiones_topic(topics))
                    if r["event_id"] == item["event_id"]
                ]
            )
            == 1
        )
    finally:
        app.stop()
