"""The gate that opens itself, end to end with a real broker, the app as a process (with
``--apertura manual`` and ``automatica``) and a real Chromium: the Puertas page while shadowing
(decided prefix, what blocks it, evidence per λ; how many approvals are missing only in
``/metrics``), the one-click opening recorded with the reviewer's name on ``fichas.puerta``, the
automatic opening, the evidence on the decisions and the metrics."""

from __future__ import annotations

import asyncio
import re
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from criterios import CRITERIOS_VERSION
from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    FAMILIA_TODAS,
    MOTIVO_SIN_GARANTIA,
    ORIGEN_SECUENCIAL_SOMBRA,
)
from esquemas.estado_puerta import ClavePuerta, id_puerta
from harness.revisor import RevisorProcess, ficha_en_revision, revisor_env
from harness.revisor_http import RevisorHttp
from harness.secuencia import aprobaciones_para_abrir, aprobaciones_para_cubrir
from harness.topicos import Topics, settings_for
from infra.network import free_port
from puerta.topico import leer_estados
from tests.revision.conftest import (
    CLAVE,
    OTRO_USUARIO,
    USUARIO,
    decisiones_topic,
    en_juego,
    entrar,
    esperar,
    leer,
    producir,
    topics_env,
)

pytestmark = pytest.mark.kafka

FICHAS = aprobaciones_para_abrir() + 1  # approvals in a row that open a gate; a margin of one
CUBRE = aprobaciones_para_cubrir()  # own approvals at the pooled λ that cover a family


def _clave() -> ClavePuerta:
    return ClavePuerta(
        modelo=f"m-{uuid.uuid4().hex[:8]}",
        prompt_evaluador_sha256="e" * 64,
        criterios_version=CRITERIOS_VERSION,
        modo_evaluador="veredicto",
        prompt_generador_sha256="g" * 64,
    )


def _sombra(clave: ClavePuerta, n: int, familia: str = "zapatillas") -> list[dict[str, Any]]:
    """``n`` final fichas in shadow mode, as the worker sends them: code checks passed, a
    high score, the loop's key."""
    registros = []
    for i in range(n):
        r = ficha_en_revision(
            f"PU-{uuid.uuid4().hex[:6]}-{i}",
            familia=familia,
            motivo=MOTIVO_SIN_GARANTIA,
            puntuaciones=(0.97,),
        )
        r["clave"] = clave.model_dump(mode="json")
        registros.append(r)
    return registros


def _app(kafka: Any, tmp_path_factory: Any, apertura: str) -> tuple[RevisorProcess, Topics]:
    topics = Topics()
    data_dir = tmp_path_factory.mktemp(f"revisor-{apertura}")
    env = revisor_env(kafka.bootstrap, topics_env(topics), data_dir)
    app = RevisorProcess(env, free_port(), data_dir / "revisor.log", apertura=apertura)
    app.add_user(USUARIO, CLAVE)
    app.add_user(OTRO_USUARIO, CLAVE)
    app.start()
    app.wait_ready()
    return app, topics


def _decidir_todas(cliente: RevisorHttp, registros: list[dict[str, Any]]) -> None:
    """Approve each over HTTP, waiting for the consumer to have stored it."""
    for r in registros:
        esperar(lambda r=r: cliente.formulario(r["event_id"], "form-aprobar"), r["event_id"])
        assert cliente.aprobar(r["event_id"]) == 303


def _estado(kafka: Any, topics: Topics, puerta_id: str) -> Any:
    estados = asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta, espera_s=30))
    return estados.get(puerta_id)


def _bloque(navegador: Any, puerta_id: str) -> Any:
    return navegador.find_element(By.CSS_SELECTOR, f'section[data-puerta="{puerta_id}"]')


def test_apertura_manual_en_el_navegador(kafka, tmp_path_factory, navegador):
    app, topics = _app(kafka, tmp_path_factory, "manual")
    try:
        clave = _clave()
        conjunta = id_puerta(FAMILIA_TODAS, clave)
        registros = _sombra(clave, FICHAS)
        cliente = RevisorHttp(app.url)
        cliente.entrar(OTRO_USUARIO, CLAVE)
        # The first is stored before the others are produced: it is the first to arrive (the
        # topic has two partitions, so a batch's arrival order is not the order produced).
        producir(kafka, topics.revision, registros[:1])
        esperar(lambda: cliente.formulario(registros[0]["event_id"], "form-aprobar"), "first")
        producir(kafka, topics.revision, registros[1:])
        _decidir_todas(cliente, registros[1:])  # everything but the first to arrive

        entrar(navegador, app)
        navegador.find_element(By.ID, "enlace-puertas").click()
        esperar(lambda: "/puertas" in navegador.current_url, "the Puertas page")
        bloque = _bloque(navegador, conjunta)
        assert "cerrada" in bloque.find_element(By.CSS_SELECTOR, ".estado-puerta").text
        assert clave.texto() in bloque.find_element(By.CSS_SELECTOR, ".clave-id").text
        # Deciding the later ones first does not advance it: the first undecided blocks.
        assert bloque.find_element(By.CSS_SELECTOR, ".decididas").text == "0"
        assert bloque.find_element(By.CSS_SELECTOR, ".llegadas").text == str(FICHAS)
        enlace = bloque.find_element(By.CSS_SELECTOR, "a.bloqueo").get_attribute("href")
        assert registros[0]["event_id"] in enlace
        # How many approvals are missing is for operators (/metrics), never on the page of
        # the people whose approvals open the gate (issue 47, item 6).
        assert not bloque.find_elements(By.CSS_SELECTOR, ".faltan, .faltan-n")
        assert "faltan" not in navegador.find_element(By.TAG_NAME, "body").text.lower()
        etiquetas = f'family="{FAMILIA_TODAS}",key="{clave.texto()}"'
        faltan = re.search(
            rf"^fichas_revision_apertura_faltan\{{{re.escape(etiquetas)}\}} (\S+)$",
            app.metrics(),
            re.M,
        )
        assert faltan is not None and float(faltan.group(1)) > 0
        filas = bloque.find_elements(By.CSS_SELECTOR, "table.evidencia tbody tr")
        assert len(filas) == 10 and "0.95" in filas[0].text
        assert not bloque.find_elements(By.CSS_SELECTOR, "form.abrir-puerta")

        _decidir_todas(cliente, registros[:1])
        navegador.get(app.url + "/puertas")
        bloque = _bloque(navegador, conjunta)
        assert "lista para abrir" in bloque.find_element(By.CSS_SELECTOR, ".estado-puerta").text
        assert bloque.find_element(By.CSS_SELECTOR, ".decididas").text == str(FICHAS)
        assert _estado(kafka, topics, conjunta) is None  # manual: nothing opened by itself

        assert cliente.formulario_en("/puertas", f"form-abrir-{conjunta}")  # the helper's view
        bloque.find_element(By.CSS_SELECTOR, "form.abrir-puerta button").click()
        esperar(
            lambda: "Puerta abierta" in navegador.find_element(By.TAG_NAME, "body").text,
            "the opening's banner",
        )
        estado = _estado(kafka, topics, conjunta)
        assert estado is not None and estado.abierta and estado.clave == clave
        assert estado.abierta_por == USUARIO
        assert estado.origen_datos == ORIGEN_SECUENCIAL_SOMBRA
        assert (estado.n, estado.k) == (FICHAS, 0) and estado.umbral == 0.5

        def abierta_en_la_pagina() -> bool:
            navegador.get(app.url + "/puertas")
            texto = _bloque(navegador, conjunta).text
            return "abierta" in texto and f"abierta por {USUARIO}" in texto

        esperar(abierta_en_la_pagina, "the page showing the open gate")
        # The family's own gate, opened over HTTP by the other reviewer (the scripted helper).
        propia = id_puerta("zapatillas", clave)
        assert cliente.abrir_puerta(propia) == 303
        estado = _estado(kafka, topics, propia)
        assert estado is not None and estado.abierta and estado.abierta_por == OTRO_USUARIO

        decisiones = [
            d for d in leer(kafka, decisiones_topic(topics)) if d["evidencia"] is not None
        ]
        llegadas = sorted(d["evidencia"]["llegada"] for d in decisiones)
        assert llegadas == list(range(FICHAS))
        assert all(d["evidencia"]["clave"] == clave.model_dump(mode="json") for d in decisiones)
        # What the approvals ask the worker to publish carries the drafting loop's key.
        publicadas = [d["publicacion"] for d in decisiones if d.get("publicacion")]
        assert publicadas and all(p["clave"] == clave.model_dump(mode="json") for p in publicadas)

        metricas = app.metrics()
        etiquetas = f'family="{FAMILIA_TODAS}",key="{clave.texto()}"'
        assert re.search(
            rf"^fichas_revision_apertura_prefijo_decidido\{{{re.escape(etiquetas)}\}} {FICHAS}\.0$",
            metricas,
            re.M,
        )
        assert f"fichas_revision_puertas_abiertas_total{{{etiquetas}}} 1.0" in metricas
        assert 'fichas_revision_puertas_abiertas_total{family="zapatillas"' in metricas
    finally:
        app.stop()


def test_apertura_automatica(kafka, tmp_path_factory):
    app, topics = _app(kafka, tmp_path_factory, "automatica")
    try:
        clave = _clave()
        registros = _sombra(clave, FICHAS)
        producir(kafka, topics.revision, registros)
        cliente = RevisorHttp(app.url)
        cliente.entrar(USUARIO, CLAVE)
        conjunta = id_puerta(FAMILIA_TODAS, clave)
        campos = esperar(
            lambda: cliente.formulario(registros[0]["event_id"], "form-aprobar"), "the item"
        )
        csrf = campos["csrf"]
        _decidir_todas(cliente, registros)
        for familia in (FAMILIA_TODAS, "zapatillas"):
            estado = esperar(
                lambda f=familia: _estado(kafka, topics, id_puerta(f, clave)),
                f"the automatic opening of {familia}",
            )
            assert estado.abierta and estado.abierta_por == ABIERTA_POR_AUTOMATICO
            assert estado.clave == clave and estado.umbral == 0.5
        anonimo = RevisorHttp(app.url)  # no session: the page sends to the login, a post fails
        status, cabeceras, _ = anonimo.pedir("/puertas")
        assert status == 302 and cabeceras["Location"].startswith("/login")
        assert anonimo.pedir("/puertas/abrir", {"puerta": conjunta})[0] == 403
        # Not in this mode: the page offers no button, and a forged post is refused.
        assert cliente.formulario_en("/puertas", f"form-abrir-{conjunta}") is None
        status, _, _ = cliente.pedir("/puertas/abrir", {"csrf": csrf, "puerta": conjunta})
        assert status == 400
    finally:
        app.stop()


def test_que_puerta_rige_cada_familia_en_el_navegador(kafka, tmp_path_factory, navegador):
    """The section «Qué puerta rige cada familia», as a catalogue editor reads it (families the
    criteria tables do not know, so a ficha of any of them passes the app's checks): with the
    pooled gate open (and seen by the certifier), a family whose own approvals since then
    certify the pooled λ is covered (the app writes its record), one decided 5 approved / 5
    rejected is excluded by its own evidence, one with 5 approvals is not certified yet (its n,
    k and e-value), a held one names who held it and why, one outside --apertura-familias says
    so, one closed by the online bound and one with its own gate say theirs; the scope, the
    certifier and the gates in play, with what holds for them together, are on the page."""
    from esquemas.constantes import MOTIVO_PUERTA_COTA_BAJA
    from harness import estados_puerta as harness_puerta
    from puerta.retencion import registro_retencion

    topics = Topics()
    data_dir = tmp_path_factory.mktemp("revisor-rige")
    env = revisor_env(kafka.bootstrap, topics_env(topics), data_dir)
    alcance = "zapatillas,mochilas,relojes,gorras,gafas,bolsos"
    app = RevisorProcess(
        env,
        free_port(),
        data_dir / "revisor.log",
        argumentos=["--apertura-familias", alcance, "--ronda-s", "1"],
    )
    app.add_user(USUARIO, CLAVE)
    app.start()
    app.wait_ready()
    try:
        clave = _clave()
        ahora = datetime.now(UTC)
        for estado in (
            harness_puerta.estado(clave, 0.5, FAMILIA_TODAS, actualizada_en=ahora),
            harness_puerta.estado(clave, 0.8, "gafas", n=80, k=2),
            harness_puerta.estado(clave, None, "bolsos", False, MOTIVO_PUERTA_COTA_BAJA),
            registro_retencion("zapatillas", clave, True, "marta", "revisión de tallas", ahora),
        ):
            asyncio.run(harness_puerta.escribir(kafka.bootstrap, topics.puerta, estado))
        por_familia = {
            "mochilas": _sombra(clave, CUBRE, "mochilas"),
            "relojes": _sombra(clave, 10, "relojes"),
            "gorras": _sombra(clave, 5, "gorras"),
            "zapatillas": _sombra(clave, 2, "zapatillas"),
            "cinturones": _sombra(clave, 2, "cinturones"),
        }
        # zapatillas' fichas first; then the others once the certifier has seen the pooled
        # gate (coverage counts only what arrives after it did).
        producir(kafka, topics.revision, por_familia["zapatillas"])
        esperar(lambda: en_juego(app, "cobertura") >= 1, "the certifier seeing the pooled gate")
        producir(
            kafka,
            topics.revision,
            [r for f, rs in por_familia.items() if f != "zapatillas" for r in rs],
        )
        cliente = RevisorHttp(app.url)
        cliente.entrar(USUARIO, CLAVE)
        _decidir_todas(cliente, por_familia["mochilas"] + por_familia["gorras"])
        _decidir_todas(cliente, por_familia["relojes"][:5])
        for r in por_familia["relojes"][5:]:
            esperar(lambda r=r: cliente.formulario(r["event_id"], "form-rechazar"), r["event_id"])
            assert cliente.rechazar(r["event_id"]) == 303
        cubierta = esperar(
            lambda: _estado(kafka, topics, id_puerta("mochilas", clave)),
            "the covered record of mochilas",
        )
        assert cubierta.motivo == "cubierta_por_conjunta" and cubierta.umbral == 0.5

        entrar(navegador, app)
        navegador.get(app.url + "/puertas")

        def filas() -> dict[str, Any]:
            navegador.get(app.url + "/puertas")
            tabla = navegador.find_elements(
                By.CSS_SELECTOR, f'table.rige-tabla[data-clave="{clave.texto()}"] tr.rige-fila'
            )
            return {f.get_attribute("data-familia"): f for f in tabla}

        def razones() -> dict[str, str]:
            return {k: f.get_attribute("data-razon") for k, f in filas().items()}

        esperado = {
            "mochilas": "conjunta",
            "relojes": "excluida",
            "gorras": "sin_certificar",
            "zapatillas": "retenida",
            "cinturones": "fuera_de_alcance",
            "bolsos": "cerrada_por_vigilancia",
            "gafas": "propia",
        }
        esperar(
            lambda: razones() == esperado, "every family's reason", explica=lambda: str(razones())
        )
        textos = {k: f.text for k, f in filas().items()}
        assert (
            "la conjunta (*)" in textos["mochilas"]
            and f"{CUBRE} aprobaciones propias" in textos["mochilas"]
        )
        assert "Excluida" in textos["relojes"] and "5 rechazadas" in textos["relojes"]
        assert "ninguna: todo a revisión" in textos["relojes"]
        assert "Sin certificar" in textos["gorras"] and "5 fichas a ese λ" in textos["gorras"]
        assert "marta" in textos["zapatillas"] and "revisión de tallas" in textos["zapatillas"]
        assert "--apertura-familias" in textos["cinturones"]
        assert "cota en línea" in textos["bolsos"]
        assert "su propia puerta" in textos["gafas"] and "λ = 0.8" in textos["gafas"]
        linea = navegador.find_element(By.ID, "alcance").text
        assert "familias: bolsos, gafas, gorras, mochilas, relojes, zapatillas" in linea
        assert "puerta conjunta: sí" in linea and "esta réplica" in linea
        # The gates in play: 5 families with a sequence, the pooled one, and the coverage
        # sequences of the 4 in the scope (cinturones is outside it).
        juego = navegador.find_element(By.ID, "en-juego")
        assert juego.get_attribute("data-total") == "10"
        assert "Hay 10 puertas en juego" in juego.text and "10 · δ = 0.50" in juego.text

        metricas = app.metrics()
        for familia, razon in esperado.items():
            puerta_ = {"mochilas": "conjunta", "gafas": "propia"}.get(familia, "ninguna")
            etiquetas = (
                f'family="{familia}",gate="{puerta_}",key="{clave.texto()}",reason="{razon}"'
            )
            assert f"fichas_revision_familia_gobierno{{{etiquetas}}} 1.0" in metricas, familia
        assert "fichas_revision_certificador_titular 1.0" in metricas
    finally:
        app.stop()
