"""A candidate loop's review items in the app as reviewers and operators meet it (issue 41): a
real broker, the app as a process with ``--apertura automatica``, a real Chromium and the
scripted reviewer over HTTP. The candidate's items are a queue view of their own with a count
in its tab, never in the main queue; the item page says it is a candidate's ficha and that a
decision never publishes; approving them writes nothing to Kafka, yet opens the candidate key's
gates by the app's opener while the live key's gate is open; the Puertas page sets both keys
side by side; the metrics count the candidate's queue and labels apart."""

from __future__ import annotations

import asyncio
import urllib.parse
import uuid
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from criterios import CRITERIOS_VERSION
from esquemas.constantes import ABIERTA_POR_AUTOMATICO, FAMILIA_TODAS, MOTIVO_SIN_GARANTIA
from esquemas.estado_puerta import ClavePuerta, id_puerta
from harness.estados_puerta import abrir
from harness.revisor import RevisorProcess, ficha_en_revision, revisor_env
from harness.revisor_http import RevisorHttp
from harness.secuencia import aprobaciones_para_abrir
from harness.topicos import Topics, settings_for
from infra.network import free_port
from puerta.topico import leer_estados
from revision.almacen.item import id_item
from tests.revision.conftest import (
    CLAVE,
    OTRO_USUARIO,
    USUARIO,
    decisiones_topic,
    entrar,
    esperar,
    leer,
    producir,
    topics_env,
)

pytestmark = pytest.mark.kafka

FICHAS = aprobaciones_para_abrir() + 1  # approvals in a row that open a gate; a margin


def _clave(nombre: str) -> ClavePuerta:
    return ClavePuerta(
        modelo=f"{nombre}-{uuid.uuid4().hex[:8]}",
        prompt_evaluador_sha256="e" * 64,
        criterios_version=CRITERIOS_VERSION,
        modo_evaluador="veredicto",
        prompt_generador_sha256="g" * 64,
    )


def _par(viva: ClavePuerta, candidata: ClavePuerta) -> tuple[dict[str, Any], dict[str, Any]]:
    """One event's live review record and its candidate's (same event_id, the candidate's key,
    ``candidata`` true): code checks passed, a high score."""
    registro = ficha_en_revision(
        f"CA-{uuid.uuid4().hex[:6]}", motivo=MOTIVO_SIN_GARANTIA, puntuaciones=(0.97,)
    )
    vivo = registro | {"clave": viva.model_dump(mode="json")}
    return vivo, registro | {"clave": candidata.model_dump(mode="json"), "candidata": True}


def _estado(kafka: Any, topics: Topics, puerta_id: str) -> Any:
    estados = asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta, espera_s=30))
    return estados.get(puerta_id)


def test_la_cola_candidata_etiqueta_sin_publicar_y_abre_su_clave(
    kafka, tmp_path_factory, navegador
):
    topics = Topics()
    data_dir = tmp_path_factory.mktemp("revisor-candidata")
    env = revisor_env(kafka.bootstrap, topics_env(topics), data_dir)
    app = RevisorProcess(env, free_port(), data_dir / "revisor.log", apertura="automatica")
    app.add_user(USUARIO, CLAVE)
    app.add_user(OTRO_USUARIO, CLAVE)  # the scripted reviewer: a session of its own
    app.start()
    app.wait_ready()
    try:
        viva, candidata = _clave("viva"), _clave("candidata")
        # The live key's family gate is open and publishing: its held-back items are not
        # shadow; the candidate's always are.
        asyncio.run(abrir(kafka.bootstrap, viva, topics.puerta, familia="zapatillas"))
        pares = [_par(viva, candidata) for _ in range(FICHAS)]
        producir(kafka, topics.revision, [pares[0][0]])
        cliente = RevisorHttp(app.url)
        cliente.entrar(OTRO_USUARIO, CLAVE)
        esperar(lambda: cliente.formulario(pares[0][0]["event_id"], "form-aprobar"), "live")
        producir(kafka, topics.revision, [c for _, c in pares])
        ids = [id_item(c["event_id"], True, candidata.texto()) for _, c in pares]
        for id_ in ids:
            esperar(lambda i=id_: cliente.formulario(i, "form-aprobar"), id_)

        # The main queue has the live item only; the tab counts the candidate's.
        entrar(navegador, app)
        navegador.get(app.url + "/")
        cuerpo = navegador.find_element(By.ID, "cola").text
        assert pares[0][0]["sku"] in cuerpo and pares[1][0]["sku"] not in cuerpo
        assert navegador.find_element(By.ID, "cuenta-candidata").text == str(FICHAS)
        navegador.find_element(By.ID, "vista-candidata").click()
        esperar(lambda: "vista=candidata" in navegador.current_url, "the candidate view")
        filas = navegador.find_elements(By.CSS_SELECTOR, "#cola tbody tr")
        assert len(filas) == FICHAS
        aviso = navegador.find_element(By.ID, "candidata-aviso").text
        assert "solo una etiqueta" in aviso and candidata.texto() in aviso
        # One candidate item, as a reviewer opens it from the view.
        filas[0].find_element(By.CSS_SELECTOR, "a.abrir").click()
        esperar(lambda: "/item" in navegador.current_url, "the item page")
        banner = navegador.find_element(By.ID, "candidata-aviso").text
        assert "Ficha de la candidata" in banner and "nunca publica" in banner
        assert navegador.find_element(By.ID, "clave-candidata").text == candidata.texto()
        assert "no se publica" in navegador.find_element(By.ID, "aprobar").text
        # The live item of the same event is its own, and publishes as ever.
        navegador.get(app.url + "/item?" + urllib.parse.urlencode({"id": pares[0][0]["event_id"]}))
        assert not navegador.find_elements(By.ID, "candidata-aviso")
        assert "Aprobar y publicar" in navegador.find_element(By.ID, "aprobar").text

        # Approving the candidate's items: labels, never a record on fichas.decisiones.
        campos = cliente.formulario(ids[0], "form-aprobar")
        assert campos is not None
        status, cabeceras, _ = cliente.pedir("/item/aprobar", dict(campos))
        assert status == 303 and "aviso=etiqueta" in cabeceras["Location"]
        siguiente = urllib.parse.parse_qs(urllib.parse.urlparse(cabeceras["Location"]).query)
        assert siguiente["id"][0] in ids[1:]  # "next" stays in the candidate's view
        for id_ in ids[1:]:
            assert cliente.aprobar(id_) == 303
        for familia in (FAMILIA_TODAS, "zapatillas"):
            estado = esperar(
                lambda f=familia: _estado(kafka, topics, id_puerta(f, candidata)),
                f"the opener opening {familia} under the candidate key",
            )
            assert estado.abierta and estado.abierta_por == ABIERTA_POR_AUTOMATICO
            assert estado.n >= aprobaciones_para_abrir() and estado.k == 0  # once it certified
        assert cliente.aprobar(pares[0][0]["event_id"]) == 303
        decisiones = esperar(lambda: leer(kafka, decisiones_topic(topics)), "the live decision")
        assert [d["event_id"] for d in decisiones] == [pares[0][0]["event_id"]]
        assert decisiones[0]["publicacion"]["clave"] == viva.model_dump(mode="json")

        # The Puertas page: both keys side by side, the candidate marked.
        navegador.get(app.url + "/puertas")
        tabla = navegador.find_element(
            By.CSS_SELECTOR, f'table.comparacion-tabla[data-candidata="{candidata.texto()}"]'
        )
        assert viva.texto() in tabla.find_element(By.CSS_SELECTOR, ".clave-viva").text
        fila = tabla.find_element(By.CSS_SELECTOR, 'tr[data-familia="zapatillas"]')
        assert fila.find_element(By.CSS_SELECTOR, ".viva-estado").text.startswith("abierta")
        assert fila.find_element(By.CSS_SELECTOR, ".candidata-estado").text.startswith("abierta")
        conjunta = tabla.find_element(By.CSS_SELECTOR, 'tr[data-familia="*"]')
        assert conjunta.find_element(By.CSS_SELECTOR, ".candidata-estado").text.startswith(
            "abierta"
        )
        bloque = navegador.find_element(
            By.CSS_SELECTOR, f'section[data-puerta="{id_puerta("zapatillas", candidata)}"]'
        )
        assert "candidata" in bloque.find_element(By.CSS_SELECTOR, ".etiqueta-candidata").text

        metricas = app.metrics()
        etiquetas = f'decision="aprobada",family="zapatillas",key="{candidata.texto()}"'
        assert f"fichas_revision_candidata_decisions_total{{{etiquetas}}} {FICHAS}.0" in metricas
        assert 'fichas_revision_queue_depth{kind="sin_garantia"} 0.0' in metricas
        assert 'fichas_revision_decisions_total{decision="aprobada",type="revision"} 1.0' in (
            metricas
        )
    finally:
        app.stop()
