"""Sample decisions in the browser become the evaluator's precision: /metrics and informe."""

from __future__ import annotations

import re
import sys

import pytest
from selenium.webdriver.common.by import By

from harness import forkserver
from harness.procesos import REPO
from harness.revisor import muestra_publicada
from tests.revision.conftest import (
    USUARIO,
    abrir_item,
    confirmado,
    decisiones_topic,
    entrar,
    esperar,
    leer,
    pedir,
    producir,
)

pytestmark = pytest.mark.kafka


def _metric(texto: str, nombre: str, **labels: str) -> float | None:
    etiquetas = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
    patron = re.escape(nombre + ("{" + etiquetas + "}" if labels else "")) + r" (\S+)"
    m = re.search("^" + patron + "$", texto, re.M)
    return float(m.group(1)) if m else None


def test_decisiones_de_muestra_dan_la_precision(kafka, revisor, revisor_topics, navegador):
    muestras = [muestra_publicada(f"ZAP-M-{i}") for i in range(4)]
    muestras.append(muestra_publicada("BOT-M-1", familia="botellas"))
    producir(kafka, revisor_topics.muestra, muestras)
    entrar(navegador, revisor)
    # Queue filter by reason shows the sample items with their count.
    navegador.get(revisor.url + "/?motivo=muestra")
    esperar(lambda: len(navegador.find_elements(By.CSS_SELECTOR, "tr.fila")) >= 5, "queue")
    veredictos = ["correcta", "correcta", "correcta", "incorrecta", "incorrecta"]
    for registro, veredicto in zip(muestras, veredictos, strict=True):
        abrir_item(navegador, revisor, registro["event_id"])
        if veredicto == "incorrecta":
            navegador.find_element(By.CSS_SELECTOR, 'input[value="C04"]').click()
        navegador.find_element(By.ID, veredicto).click()
        confirmado(navegador, f"{registro['sku']} v1: {veredicto}")
    ids = {m["event_id"] for m in muestras}

    def de_la_muestra() -> list[dict]:
        return [d for d in leer(kafka, decisiones_topic(revisor_topics)) if d["event_id"] in ids]

    esperar(lambda: len(de_la_muestra()) == 5, "five sample decisions")
    decisiones = de_la_muestra()
    assert {d["tipo"] for d in decisiones} == {"muestra"}
    assert sorted(d["decision"] for d in decisiones) == sorted(veredictos)
    assert not [
        r
        for r in leer(kafka, revisor_topics.publicadas)
        if r["event_id"] in {m["event_id"] for m in muestras}
    ]

    metricas = revisor.metrics()
    assert _metric(metricas, "fichas_revision_precision", family="todas") == pytest.approx(3 / 5)
    assert _metric(metricas, "fichas_revision_precision_samples", family="todas") == 5
    assert _metric(metricas, "fichas_revision_precision", family="botellas") == 0.0
    assert _metric(metricas, "fichas_revision_precision", family="zapatillas") == 0.75
    assert _metric(metricas, "fichas_revision_criterion_precision", criterion="C04") == 0.6
    assert _metric(metricas, "fichas_revision_criterion_precision", criterion="C01") == 1.0
    bajo = _metric(metricas, "fichas_revision_precision_lower_bound", family="todas")
    assert bajo is not None and 0.2 < bajo < 0.6  # Wilson 95 % of 3/5: [0.23, 0.88]
    assert (
        _metric(metricas, "fichas_revision_decisions_total", type="muestra", decision="correcta")
        == 3
    )
    assert _metric(metricas, "fichas_revision_queue_depth", kind="muestra") == 0

    informe = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "informe", "--revision"],
        env=revisor.env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "global:                 0.60 [0.23, 0.88] (n=5)" in informe
    assert "familia botellas" in informe and "criterio C04" in informe


def test_login_limitado_tras_cinco_fallos(revisor):
    def intento(clave: str) -> int:
        _, headers, cuerpo = pedir(revisor.url + "/login")
        cookie = headers["Set-Cookie"].split(";")[0].split("=", 1)[1]
        token = re.search(r'name="csrf" value="([^"]+)"', cuerpo).group(1)
        return pedir(
            revisor.url + "/login",
            data={"csrf": token, "usuario": "luis", "clave": clave},
            cookies={"fichas_csrf_login": cookie},
        )[0]

    assert [intento("mal") for _ in range(5)] == [401] * 5
    assert intento("clave-de-prueba-1") == 429  # even the right password, for a while
    assert USUARIO != "luis"
