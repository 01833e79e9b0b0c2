"""The review app's side of the publication gate, end to end with a real broker, the app as a
process and a real Chromium: scores and the gate on the item page, sample verdicts that close
the gate on ``fichas.puerta`` in publication order (the Puertas page showing the one that holds
the rest back), the closing tests kept across a restart, recall on ``/metrics``."""

from __future__ import annotations

import asyncio
import re
import sys
import uuid

import pytest
from selenium.webdriver.common.by import By

from esquemas.constantes import MOTIVO_PUERTA_COTA_BAJA, MOTIVO_SIN_GARANTIA
from harness import forkserver
from harness.procesos import REPO
from harness.revisor import (
    RevisorProcess,
    estado_abierto,
    ficha_en_revision,
    muestra_publicada,
    puerta_aplicada,
    revisor_env,
)
from harness.secuencia import incorrectas_para_cerrar
from harness.topicos import settings_for
from infra.network import free_port
from puerta.topico import escribir_estado, leer_estados
from tests.revision.conftest import (
    CLAVE,
    USUARIO,
    abrir_item,
    confirmado,
    entrar,
    esperar,
    producir,
    topics_env,
)

pytestmark = pytest.mark.kafka

CIERRAN = incorrectas_para_cerrar()  # incorrect verdicts in a row that close a gate


@pytest.fixture(scope="module")
def revisor(kafka, revisor_topics, tmp_path_factory):
    """This module's app: every held-back ficha in the recall sample (share 1)."""
    data_dir = tmp_path_factory.mktemp("revisor-puerta")
    env = revisor_env(
        kafka.bootstrap, topics_env(revisor_topics), data_dir, FICHAS_MUESTRA_PROPORCION="1"
    )
    app = RevisorProcess(env, free_port(), data_dir / "revisor.log")
    app.add_user(USUARIO, CLAVE)
    app.start()
    app.wait_ready()
    yield app
    app.stop()


def _metric(texto: str, nombre: str, **labels: str) -> float | None:
    etiquetas = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    patron = re.escape(nombre + ("{" + etiquetas + "}" if labels else "")) + r" (\S+)"
    m = re.search("^" + patron + "$", texto, re.M)
    return float(m.group(1)) if m else None


def test_puntuacion_de_cada_intento_y_puerta_de_la_muestra(
    kafka, revisor, revisor_topics, navegador
):
    retenida = ficha_en_revision("ZAP-P-1", motivo=MOTIVO_SIN_GARANTIA, puntuaciones=(0.4213, None))
    abierto = estado_abierto(umbral=0.8125, n=57, k=2)
    publicada = muestra_publicada("ZAP-P-2", puerta=puerta_aplicada(abierto), puntuacion=0.93)
    sin_puerta = muestra_publicada("ZAP-P-3")
    producir(kafka, revisor_topics.revision, [retenida])
    producir(kafka, revisor_topics.muestra, [publicada, sin_puerta])
    entrar(navegador, revisor)

    abrir_item(navegador, revisor, retenida["event_id"])
    puntuaciones = {
        e.get_attribute("data-intento"): e.text
        for e in navegador.find_elements(By.CSS_SELECTOR, ".historial .puntuacion")
    }
    assert puntuaciones == {"1": "puntuación 0.421", "2": "sin puntuación"}
    assert "sin_garantia" in navegador.find_element(By.CSS_SELECTOR, ".meta .motivo").text

    abrir_item(navegador, revisor, publicada["event_id"])
    assert navegador.find_element(By.ID, "puntuacion-publicada").text == "puntuación 0.930"
    puerta = navegador.find_element(By.ID, "puerta-aplicada").text
    assert "λ = 0.812" in puerta and "n = 57" in puerta and "k = 2" in puerta
    assert abierto.clave.texto() in puerta

    abrir_item(navegador, revisor, sin_puerta["event_id"])
    assert navegador.find_element(By.ID, "puntuacion-publicada").text == "sin puntuación"
    assert "Sin puerta certificada" in navegador.find_element(By.ID, "puerta-aplicada").text

    # The queue shows the new reason among its filters.
    navegador.get(revisor.url + f"/?motivo={MOTIVO_SIN_GARANTIA}")
    esperar(lambda: navegador.find_elements(By.CSS_SELECTOR, "tr.fila"), "the held-back item")


def test_veredictos_incorrectos_cierran_la_puerta_y_sobreviven_un_reinicio(
    kafka, revisor, revisor_topics, navegador
):
    """The sampled publications are decided out of publication order: the Puertas page shows
    the first one nobody decided holding the later verdicts back (and /metrics the same); once
    it is decided, CIERRAN incorrect verdicts in publication order close the gate (the bound at
    δ/2), once; a restart rebuilds the closing tests from the store; a gate reopened under the
    same certification is closed again."""
    modelo = f"modelo-{uuid.uuid4().hex[:8]}"
    abierto = estado_abierto(familia="zapatillas", modelo=modelo)
    asyncio.run(
        escribir_estado(settings_for(kafka.bootstrap), abierto, topic=revisor_topics.puerta)
    )
    muestras = [
        muestra_publicada(f"ZAP-C-{i}", puerta=puerta_aplicada(abierto), puntuacion=0.9)
        for i in range(CIERRAN + 1)
    ]
    entrar(navegador, revisor)
    # Stored one by one: the app's arrival order of the sample is the order published.
    for m in muestras:
        producir(kafka, revisor_topics.muestra, [m])
        abrir_item(navegador, revisor, m["event_id"])

    def estado_en_topic():
        estados = asyncio.run(
            leer_estados(settings_for(kafka.bootstrap), revisor_topics.puerta, espera_s=30)
        )
        return estados[abierto.id]

    def veredicto(registro: dict, cual: str) -> None:
        abrir_item(navegador, revisor, registro["event_id"])
        if cual == "incorrecta":
            navegador.find_element(By.CSS_SELECTOR, 'input[value="C04"]').click()
        navegador.find_element(By.ID, cual).click()
        confirmado(navegador, f"{registro['sku']} v1: {cual}")

    # Decided last first: the first published, undecided, holds every later verdict back.
    for m in reversed(muestras[1:CIERRAN]):
        veredicto(m, "incorrecta")
    navegador.get(revisor.url + "/puertas")
    bloque = navegador.find_element(By.CSS_SELECTOR, f'section[data-puerta="{abierto.id}"]')
    pendiente = bloque.find_element(By.CSS_SELECTOR, ".muestra-pendiente")
    assert pendiente.find_element(By.CSS_SELECTOR, ".pendientes").text == "2"
    assert pendiente.find_element(By.CSS_SELECTOR, ".retenidos").text == str(CIERRAN - 1)
    enlace = pendiente.find_element(By.CSS_SELECTOR, "a.bloqueo-muestra").get_attribute("href")
    assert muestras[0]["event_id"] in enlace
    etiquetas = {"family": "zapatillas", "key": abierto.clave.texto()}
    metricas = revisor.metrics()
    assert _metric(metricas, "fichas_revision_puerta_muestra", **etiquetas) == 0
    assert _metric(metricas, "fichas_revision_puerta_muestra_retenidos", **etiquetas) == (
        CIERRAN - 1
    )
    bloqueo = {**etiquetas, "event_id": muestras[0]["event_id"]}
    assert _metric(metricas, "fichas_revision_puerta_muestra_bloqueo_segundos", **bloqueo) >= 0
    assert estado_en_topic().abierta  # nothing consumed yet

    veredicto(muestras[0], "incorrecta")

    def cerrada():
        estado = estado_en_topic()
        return None if estado.abierta else estado

    cerrado = esperar(cerrada, "the closed gate")
    assert cerrado.motivo == MOTIVO_PUERTA_COTA_BAJA and cerrado.umbral is None
    assert (cerrado.familia, cerrado.clave) == (abierto.familia, abierto.clave)
    assert (cerrado.n, cerrado.k) == (abierto.n, abierto.k)
    assert cerrado.cota_inferior is not None and cerrado.cota_inferior < abierto.objetivo

    metricas = revisor.metrics()
    assert _metric(metricas, "fichas_revision_puerta_muestra", **etiquetas) == CIERRAN
    assert _metric(metricas, "fichas_revision_puerta_errores", **etiquetas) == CIERRAN
    assert _metric(metricas, "fichas_revision_puerta_cota_superior", **etiquetas) < 0.9
    assert _metric(metricas, "fichas_revision_puerta_detector_log_r", **etiquetas) < (
        _metric(metricas, "fichas_revision_puerta_detector_umbral_log", **etiquetas)
    )
    cierres = {**etiquetas, "reason": MOTIVO_PUERTA_COTA_BAJA}
    assert _metric(metricas, "fichas_revision_puertas_cerradas_total", **cierres) == 1

    # One more bad verdict does not publish the closure again.
    veredicto(muestras[CIERRAN], "incorrecta")
    esperar(
        lambda: (
            _metric(revisor.metrics(), "fichas_revision_puerta_muestra", **etiquetas) == CIERRAN + 1
        ),
        "the last verdict on /metrics",
    )
    metricas = revisor.metrics()
    assert _metric(metricas, "fichas_revision_puertas_cerradas_total", **cierres) == 1

    # A restart rebuilds the sequence from the store, and publishes nothing: the topic
    # already shows the gate closed.
    revisor.stop()
    revisor.start()
    revisor.wait_ready()
    metricas = revisor.metrics()
    assert _metric(metricas, "fichas_revision_puerta_muestra", **etiquetas) == CIERRAN + 1
    assert _metric(metricas, "fichas_revision_puerta_errores", **etiquetas) == CIERRAN + 1
    assert _metric(metricas, "fichas_revision_puertas_cerradas_total", **cierres) is None
    assert estado_en_topic() == cerrado

    # The gate reopened under the same certification (an operator's mistake, say): the app,
    # restarted or not, closes it again from the stored verdicts.
    asyncio.run(
        escribir_estado(settings_for(kafka.bootstrap), abierto, topic=revisor_topics.puerta)
    )
    esperar(cerrada, "the gate closed again", timeout=30)

    informe = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "informe", "--revision"],
        env=revisor.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert f"zapatillas|{abierto.clave.texto()}" in informe
    assert f"{CIERRAN + 1} veredictos, {CIERRAN + 1} incorrectos" in informe
    assert "bajo el objetivo" in informe


def test_recall_de_la_puerta_en_metrics(kafka, revisor, revisor_topics, navegador):
    """A held-back sample item people approve as it is, against the correct publications
    (this module's other tests leave no correct verdict on zapatillas)."""
    modelo = f"modelo-{uuid.uuid4().hex[:8]}"
    abierto = estado_abierto(familia="zapatillas", modelo=modelo)
    publicada = muestra_publicada("ZAP-R-1", puerta=puerta_aplicada(abierto), puntuacion=0.95)
    retenida = ficha_en_revision("ZAP-R-2", motivo=MOTIVO_SIN_GARANTIA)
    producir(kafka, revisor_topics.muestra, [publicada])
    producir(kafka, revisor_topics.revision, [retenida])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, publicada["event_id"])
    navegador.find_element(By.ID, "correcta").click()
    confirmado(navegador, "ZAP-R-1 v1: correcta")
    abrir_item(navegador, revisor, retenida["event_id"])
    # FICHAS_MUESTRA_PROPORCION=1 in this module's app: every held-back ficha is in the draw.
    assert navegador.find_elements(By.ID, "muestra-retenidas")
    navegador.find_element(By.ID, "aprobar").click()
    confirmado(navegador, "ZAP-R-2 v1: aprobada")
    metricas = revisor.metrics()
    assert _metric(metricas, "fichas_revision_recall", family="zapatillas") == 0.5
    aprobadas = _metric(
        metricas, "fichas_revision_retenidas_muestra", family="zapatillas", state="aprobada"
    )
    assert aprobadas == 1
