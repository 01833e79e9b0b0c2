"""Decision pages for evidence are blind (issue 47, item 6), seen as a reviewer sees them: the app
as a process on a real broker, a real headless Chromium.

The family's gate is open under the test's key. An item of the blind shadow share
(``muestra_sombra``) and a shadow-mode item of a family whose gate is closed are evidence: their
pages show the origin, the ficha and the code checks, never the judge's score, verdicts or
problems, nor the attempt count; the queue shows their code checks' criteria only. An item the
open gate held back by score, and a sampled published ficha, are not evidence: their pages show
what they showed. The Puertas page shows, per gate, the countable items closed obsolete before
anyone decided them, as ``/metrics`` does, and never how many approvals are missing.
"""

from __future__ import annotations

import asyncio
import re
import urllib.parse
import uuid
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from esquemas.constantes import MOTIVO_SIN_GARANTIA
from esquemas.estado_puerta import ClavePuerta, id_puerta
from harness.estados_puerta import abrir, clave_fake
from harness.revisor import ficha_en_revision, muestra_publicada, puerta_aplicada
from harness.revisor_http import RevisorHttp
from tests.revision.conftest import CLAVE, USUARIO, abrir_item, entrar, esperar, producir

pytestmark = pytest.mark.kafka

JUEZ = "la descripción no dice para qué sirve"  # the judge's problem on every record below


def _clave() -> ClavePuerta:
    return clave_fake(modelo=f"ciega-{uuid.uuid4().hex[:8]}")  # a key of the test's own


def _registro(
    clave: ClavePuerta, familia: str, puntuaciones: tuple[float, float], **extra: Any
) -> dict[str, Any]:
    r = ficha_en_revision(
        f"CI-{uuid.uuid4().hex[:8]}",
        familia=familia,
        motivo=MOTIVO_SIN_GARANTIA,
        puntuaciones=puntuaciones,
    )
    return r | {"clave": clave.model_dump(mode="json")} | extra


def _abierta_en_la_app(navegador: Any, url: str, puerta: str) -> bool:
    navegador.get(url + "/puertas")
    bloques = navegador.find_elements(By.CSS_SELECTOR, f'section[data-puerta="{puerta}"]')
    return bool(bloques) and "abierta" in bloques[0].find_element(By.TAG_NAME, "h2").text


def _fila_de_la_cola(navegador: Any, url: str, event_id: str) -> str:
    navegador.get(url + "/")
    enlace = "/item?" + urllib.parse.urlencode({"id": event_id})
    filas = navegador.find_elements(By.CSS_SELECTOR, f'tr.fila[data-url="{enlace}"]')
    return filas[0].text if filas else ""


def _ciega(navegador: Any) -> None:
    """What an evidence page shows and never shows."""
    fuente = navegador.page_source
    assert navegador.find_elements(By.ID, "a-ciegas")
    assert "Comprobaciones de código" in fuente and navegador.find_element(By.ID, "origen-titulo")
    assert not navegador.find_elements(By.CSS_SELECTOR, ".puntuacion, #historial, #problemas")
    for oculto in (JUEZ, "0.310", "0.970", "0.640", "aprobado por el evaluador", "intento(s)"):
        assert oculto not in fuente, oculto
    assert navegador.find_element(By.ID, "form-aprobar")  # still decided as any review item


def test_la_evidencia_se_decide_a_ciegas(kafka, revisor, revisor_topics, navegador):
    clave = _clave()
    asyncio.run(abrir(kafka.bootstrap, clave, revisor_topics.puerta, 0.8, "zapatillas"))
    entrar(navegador, revisor)
    puerta = id_puerta("zapatillas", clave)
    esperar(lambda: _abierta_en_la_app(navegador, revisor.url, puerta), "the app's open gate")

    parte = _registro(clave, "zapatillas", (0.31, 0.97), muestra_sombra=True)
    retenida = _registro(clave, "zapatillas", (0.31, 0.64))
    cerrada = _registro(clave, "botellas", (0.31, 0.97))
    muestra = muestra_publicada(
        f"CI-{uuid.uuid4().hex[:8]}", puerta=puerta_aplicada(), puntuacion=0.91
    ) | {"clave": clave.model_dump(mode="json")}
    producir(kafka, revisor_topics.revision, [parte, retenida, cerrada])
    producir(kafka, revisor_topics.muestra, [muestra])

    # Evidence: the share under an open gate, and a family whose gate is closed.
    for registro in (parte, cerrada):
        abrir_item(navegador, revisor, registro["event_id"])
        _ciega(navegador)
        fila = _fila_de_la_cola(navegador, revisor.url, registro["event_id"])
        assert fila and "sin_garantia" in fila and "C06" not in fila

    # Not evidence: held back by score under the open gate: everything it showed.
    abrir_item(navegador, revisor, retenida["event_id"])
    assert not navegador.find_elements(By.ID, "a-ciegas")
    puntuaciones = [e.text for e in navegador.find_elements(By.CSS_SELECTOR, ".puntuacion")]
    assert puntuaciones == ["puntuación 0.310", "puntuación 0.640"]
    assert JUEZ in navegador.find_element(By.ID, "problemas").text
    assert navegador.find_element(By.ID, "historial")
    assert "C06" in _fila_de_la_cola(navegador, revisor.url, retenida["event_id"])

    # Not evidence: a sampled published ficha shows how it was published.
    abrir_item(navegador, revisor, muestra["event_id"])
    assert not navegador.find_elements(By.ID, "a-ciegas")
    assert navegador.find_element(By.ID, "puntuacion-publicada").text == "puntuación 0.910"
    assert "λ = 0.800" in navegador.find_element(By.ID, "puerta-aplicada").text


def test_puertas_muestra_las_obsoletas_y_no_cuantas_faltan(
    kafka, revisor, revisor_topics, navegador
):
    """Two countable shadow items of a closed gate: one decided, one superseded by version 2
    before anyone decided it. The gate's block says 1 of 2 (50.0 %); so does /metrics."""
    clave = _clave()
    decidida = _registro(clave, "zapatillas", (0.31, 0.97))
    superada = _registro(clave, "zapatillas", (0.31, 0.97))
    producir(kafka, revisor_topics.revision, [decidida, superada])
    cliente = RevisorHttp(revisor.url)
    cliente.entrar(USUARIO, CLAVE)
    esperar(lambda: cliente.formulario(decidida["event_id"], "form-aprobar"), "the item")
    assert cliente.aprobar(decidida["event_id"]) == 303
    nueva = _registro(clave, "zapatillas", (0.31, 0.97))
    nueva.update(sku=superada["sku"], version=2)
    producir(kafka, revisor_topics.revision, [nueva])
    esperar(lambda: cliente.formulario(nueva["event_id"], "form-aprobar"), "version 2")

    puerta = id_puerta("zapatillas", clave)
    entrar(navegador, revisor)
    navegador.get(revisor.url + "/puertas")
    bloque = navegador.find_element(By.CSS_SELECTOR, f'section[data-puerta="{puerta}"]')
    obsoletas = bloque.find_element(By.CSS_SELECTOR, ".obsoletas")
    assert (
        obsoletas.get_attribute("data-obsoletas"),
        obsoletas.get_attribute("data-cerradas"),
    ) == (
        "1",
        "2",
    )
    assert "50.0 %" in obsoletas.text
    assert "faltan" not in navegador.find_element(By.TAG_NAME, "body").text.lower()

    metricas = revisor.metrics()
    etiquetas = f'family="zapatillas",key="{clave.texto()}"'
    assert re.search(
        rf"^fichas_revision_obsoletas_proporcion\{{{re.escape(etiquetas)}\}} 0\.5$", metricas, re.M
    )
    for estado, n in (("decidida", 1), ("obsoleta", 1)):
        serie = f'fichas_revision_sombra_cerradas{{{etiquetas},state="{estado}"}} {n}.0'
        assert serie in metricas
