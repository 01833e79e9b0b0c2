"""One label semantics (issue 47, item 6), end to end: a sampled published ficha that needs a
change is ``incorrecta`` whether the reviewer marks it or corrects it, and a correction is
published by the worker that owns the SKU, as a person's approval is. Real broker, the app as a
process, a worker in process, a real headless Chromium."""

from __future__ import annotations

import uuid

import pytest
from selenium.webdriver.common.by import By

from harness.revisor import muestra_publicada, puerta_aplicada
from tests.revision.conftest import (
    abrir_item,
    confirmado,
    decisiones_topic,
    entrar,
    esperar,
    leer,
    producir,
)

pytestmark = pytest.mark.kafka


def _de(registros, event_id):
    return [r for r in registros if r["event_id"] == event_id]


def test_corregir_una_ficha_de_la_muestra_es_incorrecta_y_publica_la_correccion(
    kafka, revisor, revisor_topics, navegador, worker_del_revisor
):
    muestra = muestra_publicada(
        f"MC-{uuid.uuid4().hex[:8]}", puerta=puerta_aplicada(), puntuacion=0.93
    )
    producir(kafka, revisor_topics.muestra, [muestra])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, muestra["event_id"])

    # The page says what "correcta" means: publishable as generated, without any change.
    semantica = navegador.find_element(By.ID, "semantica-muestra").text
    assert "sin ningún cambio" in semantica and "incorrecta" in semantica
    assert "tal cual" in navegador.find_element(By.ID, "correcta").text

    # A "correction" that changes nothing is refused: that ficha is correcta.
    navegador.find_element(By.ID, "corregir").click()
    error = esperar(lambda: navegador.find_elements(By.CSS_SELECTOR, ".error-campo"), "refusal")
    assert "márquela correcta" in error[0].text
    assert not _de(leer(kafka, decisiones_topic(revisor_topics)), muestra["event_id"])

    titulo = navegador.find_element(By.ID, "titulo")
    titulo.clear()
    titulo.send_keys("Zapatillas de running negras de malla ligera")
    navegador.find_element(By.ID, "nota-correccion").send_keys("faltaba decir que es ligera")
    navegador.find_element(By.ID, "corregir").click()
    confirmado(navegador, f"{muestra['sku']} v1: incorrecta; se publica la corrección")

    (decision,) = esperar(
        lambda: _de(leer(kafka, decisiones_topic(revisor_topics)), muestra["event_id"]),
        "the decision",
    )
    assert (decision["tipo"], decision["decision"]) == ("muestra", "incorrecta")
    assert decision["campos_editados"] == ["titulo"]
    assert decision["nota"] == "faltaba decir que es ligera"
    publicacion = decision["publicacion"]
    assert publicacion["ficha"]["titulo"] == "Zapatillas de running negras de malla ligera"
    assert publicacion["revision"]["decision"] == "editada"
    assert publicacion["puerta"] is None and "muestreo" not in publicacion

    publicadas = esperar(
        lambda: _de(leer(kafka, revisor_topics.publicadas), muestra["event_id"]),
        "the worker's publication of the correction",
    )
    assert [p["ficha"]["titulo"] for p in publicadas] == [publicacion["ficha"]["titulo"]]
    assert publicadas[0]["revision"]["revisor"] == "ana"
    assert worker_del_revisor.metric("fichas_decisiones_total", result="publicada") >= 1
