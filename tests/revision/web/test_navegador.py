"""The reviewer app end to end: real broker, the app as a process, a real headless Chromium."""

from __future__ import annotations

import asyncio
import urllib.parse

import pytest
from selenium.common.exceptions import NoAlertPresentException
from selenium.webdriver.common.by import By

from harness.revisor import ficha_en_revision
from harness.topicos import read_all
from tests.revision.conftest import (
    OTRO_USUARIO,
    abrir_item,
    confirmado,
    decisiones_topic,
    entrar,
    esperar,
    leer,
    nuevo_navegador,
    pedir,
    producir,
)

pytestmark = pytest.mark.kafka


def _de(registros, event_id):
    return [r for r in registros if r["event_id"] == event_id]


def _a_publicar(kafka, topics, event_id):
    """The fichas the app's decisions on ``event_id`` ask to publish (``publicacion``): what a
    running worker publishes (the first test runs one); the app itself never writes them."""
    decisiones = _de(leer(kafka, decisiones_topic(topics)), event_id)
    return [d["publicacion"] for d in decisiones if d.get("publicacion")]


def test_editar_rompiendo_c01_corregir_y_aprobar(
    kafka, revisor, revisor_topics, navegador, worker_del_revisor
):
    """The whole road of a person's publication: the app writes the decision, the worker that
    owns the SKU's partition publishes the ficha it carries (stream.flow.decisiones)."""
    _editar_y_aprobar(kafka, revisor, revisor_topics, navegador)


def _editar_y_aprobar(kafka, revisor, revisor_topics, navegador):
    item = ficha_en_revision("ZAP-E2E-1")
    producir(kafka, revisor_topics.revision, [item])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, item["event_id"])
    # The origin and the ficha are both on the page, with the attempts and the code checks.
    assert (
        "RUNNER X2 black mesh sneaker men 42" in navegador.find_element(By.ID, "origen-titulo").text
    )
    assert "Intento 2" in navegador.page_source
    assert "Comprobaciones de código" in navegador.page_source

    titulo = navegador.find_element(By.ID, "titulo")
    titulo.clear()
    titulo.send_keys("Zapatillas " + "muy " * 25 + "ligeras")  # > 80 characters: C01 fails
    navegador.find_element(By.ID, "aprobar").click()
    error = esperar(
        lambda: navegador.find_elements(By.CSS_SELECTOR, '.error-campo[data-campo="titulo"]'),
        "the C01 error next to the title",
    )
    assert error[0].text.startswith("C01")
    assert "no se publica" in navegador.find_element(By.ID, "mensaje").text
    assert not _de(leer(kafka, revisor_topics.publicadas), item["event_id"])

    titulo = navegador.find_element(By.ID, "titulo")
    titulo.clear()
    titulo.send_keys("Zapatillas de running negras ligeras")
    navegador.find_element(By.ID, "aprobar").click()
    confirmado(navegador, "ZAP-E2E-1 v1: editada y aprobada")

    publicadas = esperar(
        lambda: _de(leer(kafka, revisor_topics.publicadas), item["event_id"]),
        "the worker's publication of the person's ficha",
    )
    assert len(publicadas) == 1
    (pub,) = publicadas
    assert pub["ficha"]["titulo"] == "Zapatillas de running negras ligeras"
    assert pub["revision"]["revisor"] == "ana"
    assert pub["revision"]["decision"] == "editada"
    assert pub["version"] == item["version"] and pub["sku"] == item["sku"]
    (decision,) = _de(leer(kafka, decisiones_topic(revisor_topics)), item["event_id"])
    assert decision["decision"] == "editada"
    # Headers as the worker's outcomes carry them (docs/contrato.md, "Headers").
    (con_cabeceras,) = [
        r
        for r in asyncio.run(read_all(kafka.bootstrap, revisor_topics.publicadas))
        if r["value"]["event_id"] == item["event_id"]
    ]
    cabeceras = {k: v.decode() for k, v in con_cabeceras["headers"]}
    assert cabeceras == {
        "sku": "ZAP-E2E-1",
        "version": "1",
        "event_id": item["event_id"],
        "esquema": "FichaPublicada",
        "esquema_version": "1.6",
    }
    assert con_cabeceras["key"] == b"ZAP-E2E-1"
    (con_cabeceras,) = [
        r
        for r in asyncio.run(read_all(kafka.bootstrap, decisiones_topic(revisor_topics)))
        if r["value"]["event_id"] == item["event_id"]
    ]
    assert dict(con_cabeceras["headers"])["esquema"] == b"DecisionRevision"
    assert decision["tipo"] == "revision"
    assert decision["campos_editados"] == ["titulo"]
    assert decision["revisor"] == "ana"


def test_rechazar_con_criterios_y_nota(kafka, revisor, revisor_topics, navegador):
    item = ficha_en_revision("ZAP-E2E-2")
    producir(kafka, revisor_topics.revision, [item])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, item["event_id"])
    navegador.find_element(By.CSS_SELECTOR, 'input[name="criterio"][value="C04"]').click()
    navegador.find_element(By.ID, "nota").send_keys("inventa el uso en competición")
    navegador.find_element(By.ID, "rechazar").click()
    confirmado(navegador, "ZAP-E2E-2 v1: rechazada")
    (decision,) = esperar(
        lambda: _de(leer(kafka, decisiones_topic(revisor_topics)), item["event_id"]), "the decision"
    )
    assert decision["decision"] == "rechazada"
    assert decision["criterios"] == ["C04"]
    assert decision["nota"] == "inventa el uso en competición"
    assert not _de(leer(kafka, revisor_topics.publicadas), item["event_id"])


def test_dos_sesiones_aprueban_el_mismo_item_una_publicacion(
    kafka, revisor, revisor_topics, navegador
):
    item = ficha_en_revision("ZAP-E2E-3")
    producir(kafka, revisor_topics.revision, [item])
    otro = nuevo_navegador()
    try:
        entrar(navegador, revisor)
        entrar(otro, revisor, usuario=OTRO_USUARIO)
        abrir_item(navegador, revisor, item["event_id"])
        abrir_item(otro, revisor, item["event_id"])
        navegador.find_element(By.ID, "aprobar").click()
        otro.find_element(By.ID, "aprobar").click()
        esperar(
            lambda: (
                "ya está cerrado" in otro.page_source or "ya está cerrado" in navegador.page_source
            ),
            "the loser's message",
        )
    finally:
        otro.quit()
    publicadas = _a_publicar(kafka, revisor_topics, item["event_id"])
    assert len(publicadas) == 1
    assert publicadas[0]["revision"]["decision"] == "aprobada"
    assert len(_de(leer(kafka, decisiones_topic(revisor_topics)), item["event_id"])) == 1


def test_titulo_con_script_se_ve_como_texto(kafka, revisor, revisor_topics, navegador):
    malicioso = '<script>alert("xss")</script> zapatilla <img src=x onerror=alert(1)>'
    item = ficha_en_revision("ZAP-E2E-4", titulo_proveedor=malicioso, titulo=malicioso[:80])
    producir(kafka, revisor_topics.revision, [item])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, item["event_id"])
    assert navegador.find_element(By.ID, "origen-titulo").text == malicioso
    assert navegador.find_element(By.ID, "titulo").get_attribute("value") == malicioso[:80]
    with pytest.raises(NoAlertPresentException):
        navegador.switch_to.alert.text  # noqa: B018
    assert "&lt;script&gt;" in pedir_html(revisor, navegador, item["event_id"])
    assert not navegador.find_elements(By.CSS_SELECTOR, "main img")
    navegador.get(revisor.url + "/")
    esperar(lambda: "ZAP-E2E-4" in navegador.page_source, "the queue row")
    with pytest.raises(NoAlertPresentException):
        navegador.switch_to.alert.text  # noqa: B018


def pedir_html(revisor, navegador, event_id: str) -> str:
    """The raw HTML the server sent (not the DOM), with the browser's session."""
    cookies = {c["name"]: c["value"] for c in navegador.get_cookies()}
    url = revisor.url + "/item?" + urllib.parse.urlencode({"id": event_id})
    status, _, cuerpo = pedir(url, cookies=cookies)
    assert status == 200
    return cuerpo


def test_sin_sesion_todo_redirige_o_se_rechaza(kafka, revisor, revisor_topics):
    item = ficha_en_revision("ZAP-E2E-5")
    producir(kafka, revisor_topics.revision, [item])
    for ruta in ("/", "/item?id=" + item["event_id"], "/item?id=nada", "/?familia=zapatillas"):
        status, headers, _ = pedir(revisor.url + ruta)
        assert status == 302, ruta
        assert headers["Location"].startswith("/login?siguiente="), ruta
    for accion in ("/item/aprobar", "/item/rechazar", "/item/muestra", "/logout"):
        status, _, _ = pedir(revisor.url + accion, data={"event_id": item["event_id"]})
        assert status == 403, accion
    status, _, _ = pedir(revisor.url + "/", cookies={"fichas_sesion": "inventada"})
    assert status == 302
    # Health and metrics stay open for the orchestrator and Prometheus.
    assert pedir(revisor.url + "/health/live")[0] == 200
    assert pedir(revisor.url + "/metrics")[0] == 200


def test_formulario_falsificado_sin_csrf(kafka, revisor, revisor_topics, navegador):
    item = ficha_en_revision("ZAP-E2E-6")
    producir(kafka, revisor_topics.revision, [item])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, item["event_id"])
    cookies = {c["name"]: c["value"] for c in navegador.get_cookies()}
    sesion = next(c for c in navegador.get_cookies() if c["name"] == "fichas_sesion")
    assert sesion["httpOnly"] is True and sesion["sameSite"] == "Strict"
    datos = {"event_id": item["event_id"], "titulo": "Otra cosa", "descripcion": "x"}
    for csrf in (None, "", "token-inventado"):
        forma = dict(datos) if csrf is None else {**datos, "csrf": csrf}
        status, _, cuerpo = pedir(revisor.url + "/item/aprobar", data=forma, cookies=cookies)
        assert status == 403, cuerpo
    # The login form itself refuses a post without its token.
    status, _, _ = pedir(revisor.url + "/login", data={"usuario": "ana", "clave": "x"})
    assert status == 403
    abrir_item(navegador, revisor, item["event_id"])
    assert navegador.find_elements(By.ID, "aprobar"), "the item must still be open"
    assert not _de(leer(kafka, revisor_topics.publicadas), item["event_id"])


def test_una_version_nueva_cierra_el_item_abierto(kafka, revisor, revisor_topics, navegador):
    v1 = ficha_en_revision("ZAP-E2E-7", version=1)
    producir(kafka, revisor_topics.revision, [v1])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, v1["event_id"])
    assert navegador.find_elements(By.ID, "aprobar")
    v2 = ficha_en_revision("ZAP-E2E-7", version=2)
    producir(kafka, revisor_topics.revision, [v2])

    def cerrado() -> bool:
        abrir_item(navegador, revisor, v1["event_id"])
        return bool(navegador.find_elements(By.ID, "estado"))

    esperar(cerrado, "v1 closed")
    assert "obsoleta" in navegador.find_element(By.ID, "estado").text
    assert not navegador.find_elements(By.ID, "aprobar")
    (decision,) = esperar(
        lambda: _de(leer(kafka, decisiones_topic(revisor_topics)), v1["event_id"]),
        "the obsoleta decision",
    )
    assert decision["decision"] == "obsoleta" and decision["version"] == 1
    navegador.get(revisor.url + "/")
    filas = [
        f.text for f in navegador.find_elements(By.CSS_SELECTOR, "tr.fila") if "ZAP-E2E-7" in f.text
    ]
    assert len(filas) == 1 and " 2 " in f" {filas[0]} "
    # A version published by the loop closes the open one too.
    v3 = dict(ficha_en_revision("ZAP-E2E-7", version=3))
    publicada = {
        k: v3[k]
        for k in ("event_id", "sku", "version", "familia", "ficha", "intentos", "criterios_version")
    }
    publicada.update(modelo="m", publicada_en="2026-12-01T04:00:00Z", revision=None)
    producir(kafka, revisor_topics.publicadas, [publicada])
    esperar(
        lambda: _de(leer(kafka, decisiones_topic(revisor_topics)), v2["event_id"]),
        "v2 closed by the published v3",
    )


def test_atajos_de_teclado_abren_y_aprueban(kafka, revisor, revisor_topics, navegador):
    from selenium.webdriver.common.action_chains import ActionChains

    item = ficha_en_revision("ZAP-E2E-8")
    producir(kafka, revisor_topics.revision, [item])
    entrar(navegador, revisor)
    esperar(
        lambda: (
            navegador.get(revisor.url + "/?familia=zapatillas")
            or "ZAP-E2E-8" in navegador.page_source
        ),
        "the queue row",
    )
    filas = [f.text for f in navegador.find_elements(By.CSS_SELECTOR, "tr.fila")]
    posicion = next(i for i, texto in enumerate(filas) if "ZAP-E2E-8" in texto)
    teclas = ActionChains(navegador)
    for _ in range(posicion):
        teclas.send_keys("j")
    teclas.send_keys("o").perform()
    esperar(lambda: "ZAP-E2E-8" in navegador.title, "the item opened with o")
    ActionChains(navegador).send_keys("a").perform()
    esperar(
        lambda: _a_publicar(kafka, revisor_topics, item["event_id"]), "the approval made with a"
    )


def test_salida_invalida_se_escribe_a_mano_y_se_publica(kafka, revisor, revisor_topics, navegador):
    item = ficha_en_revision("BOT-E2E-9", familia="botellas", motivo="salida_invalida")
    item.update(
        ficha=None,
        historial=[],
        problemas=[{"criterio": "salida_invalida", "detalle": "la respuesta no era JSON"}],
    )
    item["origen"]["ficha_proveedor"].update(
        titulo="Sports bottle 750 ml mesh black",
        atributos={"capacidad_ml": "750", "material": "malla", "color": "negro"},
    )
    producir(kafka, revisor_topics.revision, [item])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, item["event_id"])
    assert navegador.find_element(By.ID, "titulo").get_attribute("value") == ""
    navegador.find_element(By.ID, "aprobar").click()  # empty: C01, C02, C03 fail
    esperar(lambda: navegador.find_elements(By.CSS_SELECTOR, ".error-campo"), "errors")
    campos = {
        e.get_attribute("data-campo")
        for e in navegador.find_elements(By.CSS_SELECTOR, ".error-campo")
    }
    assert {"titulo", "descripcion", "atributos"} <= campos
    valores = {
        "titulo": "Botella de malla negra",
        "descripcion": "Botella de malla negra para llevar agua a cada entrenamiento.",
        "atributo__capacidad_ml": "750",
        "atributo__material": "malla",
        "atributo__color": "negro",
    }
    for campo, valor in valores.items():
        navegador.find_element(By.ID, campo).clear()
        navegador.find_element(By.ID, campo).send_keys(valor)
    navegador.find_element(By.ID, "aprobar").click()
    (pub,) = esperar(
        lambda: _a_publicar(kafka, revisor_topics, item["event_id"]),
        "the approval",
        explica=lambda: navegador.find_element(By.TAG_NAME, "main").text[:1500],
    )
    assert pub["ficha"]["atributos"]["capacidad_ml"] == "750"
    assert pub["revision"]["decision"] == "editada"


def test_no_se_aprueba_una_version_anterior_a_la_del_worker(
    kafka, revisor, revisor_topics, navegador
):
    import asyncio
    from pathlib import Path

    from versiones.almacen import open_version_store

    item = ficha_en_revision("ZAP-E2E-10", version=2)
    producir(kafka, revisor_topics.revision, [item])
    entrar(navegador, revisor)
    abrir_item(navegador, revisor, item["event_id"])

    async def el_worker_trato_la_v3() -> None:
        async with open_version_store(None, Path(revisor.env["FICHAS_DATA_DIR"])) as versiones:
            await versiones.record("ZAP-E2E-10", 3)

    asyncio.run(el_worker_trato_la_v3())
    navegador.find_element(By.ID, "aprobar").click()
    mensaje = esperar(lambda: navegador.find_elements(By.ID, "mensaje"), "the refusal")
    assert "versión más nueva" in mensaje[0].text and "v3" in mensaje[0].text
    assert "obsoleta" in navegador.find_element(By.ID, "estado").text
    assert not _de(leer(kafka, revisor_topics.publicadas), item["event_id"])
    (decision,) = esperar(
        lambda: _de(leer(kafka, decisiones_topic(revisor_topics)), item["event_id"]),
        "the obsoleta decision",
    )
    assert decision["decision"] == "obsoleta"
