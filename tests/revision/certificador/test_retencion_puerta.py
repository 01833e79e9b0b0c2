"""Issue 38, "Done when": a hold from the command line and from the Puertas page's button closes
a gate for a running worker within seconds, survives an app restart, the automatic opener leaves
it closed while the evidence certifies it, and releasing lets it publish again.

Everything real: the broker, ``fichas worker`` and ``fichas revisor --apertura automatica`` as
processes, the fake LLM as a server, a scripted reviewer deciding over HTTP through the app's
own forms (``harness.revisor_http``), ``fichas puerta`` as a command, and
Chromium on the Puertas page. The fake scores every ficha 0.97 and people approve them all, so
``SOMBRA`` decisions in shadow mode certify zapatillas' own gate (one more than the consecutive
approvals that open it, ``harness.secuencia.aprobaciones_para_abrir``).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from esquemas import FichaEnRevision, FichaPublicada
from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    MOTIVO_PUERTA_LIBERADA,
    MOTIVO_PUERTA_RETENIDA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta, id_retencion
from harness.estados_puerta import clave_fake, fichas_puerta
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, revisor_env
from harness.revisor_http import RevisorHttp
from harness.secuencia import aprobaciones_para_abrir
from harness.topicos import Topics, create_input_topic, produce, read_all, settings_for
from harness.worker import WorkerInProcess, worker_env
from infra.network import free_port
from puerta.topico import leer_estados
from tests.revision.conftest import CLAVE, USUARIO, entrar, esperar

pytestmark = pytest.mark.kafka

FAMILIA = "zapatillas"  # harness.eventos' family
SOMBRA = aprobaciones_para_abrir() + 1
PLAZO_S = 15.0  # "within seconds": the worker's reader polls the topic continuously


class Escena:
    """The broker's topics, the app and a worker, and what the test reads of them."""

    def __init__(self, kafka: KafkaBroker, fake_llm: FakeLLM, tmp_path: Path) -> None:
        self.kafka = kafka
        self.topics = Topics()
        self.clave: ClavePuerta = clave_fake()
        self.gate = {"family": FAMILIA, "key": self.clave.texto()}
        fake_llm.configure({"default": {"evaluador": [{"accion": "aprobar", "puntuacion": 0.97}]}})
        asyncio.run(create_input_topic(kafka.bootstrap, self.topics.entrada, partitions=2))
        self.app = RevisorProcess(
            revisor_env(kafka.bootstrap, self.topics.env(), tmp_path / "revisor"),
            free_port(),
            tmp_path / "revisor.log",
            apertura="automatica",
        )
        self.app.add_user(USUARIO, CLAVE)
        self.worker = WorkerInProcess(
            worker_env(kafka, fake_llm, self.topics, tmp_path / "w", FICHAS_PUERTA="certificada"),
            tmp_path / "w.log",
        )
        # What an operator's shell has: the workers' configuration (the key is computed from it
        # and from the server, exactly as the worker computes it).
        self.env = {
            **self.topics.env(),
            "FICHAS_KAFKA_BROKERS": kafka.bootstrap,
            "FICHAS_LLM_URL": fake_llm.url,
            "FICHAS_LLM_MODELO": "fake",
        }

    def arrancar(self) -> RevisorHttp:
        for proceso in (self.app, self.worker):
            proceso.start()
        self.app.wait_ready()
        self.worker.wait_ready()
        revisor = RevisorHttp(self.app.url)
        revisor.entrar(USUARIO, CLAVE)
        return revisor

    def parar(self) -> None:
        self.app.stop()
        if self.worker.alive():
            self.worker.terminate()

    def producir(self, *skus: str) -> None:
        mensajes = [
            (s.encode(), json.dumps(evento_dict(s, 1, event_id=f"{s}-v1")).encode()) for s in skus
        ]
        asyncio.run(produce(self.kafka.bootstrap, self.topics.entrada, mensajes))

    def salida(self, sku: str) -> tuple[str, dict[str, Any]] | None:
        """Where the loop sent ``sku`` (nobody decides these), or None yet."""
        for topic in (self.topics.revision, self.topics.publicadas):
            for r in asyncio.run(read_all(self.kafka.bootstrap, topic)):
                if r["value"]["sku"] == sku:
                    return topic, r["value"]
        return None

    def estados(self) -> dict[str, EstadoPuerta]:
        settings = settings_for(self.kafka.bootstrap)
        return asyncio.run(leer_estados(settings, self.topics.puerta, espera_s=30))

    def metrica(self, nombre: str) -> float:
        return self.worker.metric(nombre, **self.gate)

    def abrir_por_evidencia(self, revisor: RevisorHttp) -> None:
        """Shadow mode, people approve, the app opens zapatillas' own gate, the worker follows
        and publishes."""
        skus = [f"SO-{i:02d}" for i in range(SOMBRA)]
        self.producir(*skus)
        for sku in skus:
            esperar(lambda s=sku: revisor.formulario(f"{s}-v1", "form-aprobar"), sku, 120)
            assert revisor.aprobar(f"{sku}-v1") == 303
        propia = esperar(
            lambda: _abierta(self.estados().get(id_puerta(FAMILIA, self.clave))),
            "the automatic opening of zapatillas' own gate",
            90,
            explica=self.app.log_tail,
        )
        assert propia.abierta_por == ABIERTA_POR_AUTOMATICO
        esperar(lambda: self.metrica("fichas_puerta_abierta") == 1, "the worker following", 30)
        self.producir("PUB-1")
        topic, valor = esperar(lambda: self.salida("PUB-1"), "PUB-1's outcome", 120)
        assert topic == self.topics.publicadas
        assert FichaPublicada.model_validate(valor).puerta is not None

    def cerrada_en_segundos(self, desde: float) -> float:
        """Seconds from ``desde`` until the worker shows the family held and closed."""
        esperar(
            lambda: (
                self.metrica("fichas_puerta_retenida") == 1
                and self.metrica("fichas_puerta_abierta") == 0
            ),
            "the worker closing the held gate",
            PLAZO_S * 2,
            explica=self.worker.log_tail,
        )
        return time.monotonic() - desde

    def a_revision(self, sku: str) -> None:
        """A new ficha of the family goes to review, held back by the gate alone."""
        self.producir(sku)
        topic, valor = esperar(lambda: self.salida(sku), f"{sku}'s outcome", 120)
        assert topic == self.topics.revision, valor
        assert FichaEnRevision.model_validate(valor).motivo == "sin_garantia"

    def reiniciar_app(self) -> RevisorHttp:
        """Stop the app and start it again on the same store; wait until its certifier has
        certified the gate's evidence again (it would open it, were it not open already)."""
        self.app.stop()
        self.app.start()
        self.app.wait_ready()
        esperar(
            lambda: (
                _metrica_app(self.app, "fichas_revision_apertura_umbral_certificado", self.gate)
                is not None
            ),
            "the restarted app's certifier",
            60,
        )
        revisor = RevisorHttp(self.app.url)
        revisor.entrar(USUARIO, CLAVE)
        return revisor

    def publica_otra_vez(self, sku: str) -> None:
        esperar(lambda: self.metrica("fichas_puerta_abierta") == 1, "the gate open again", 30)
        assert self.metrica("fichas_puerta_retenida") == 0
        propia = self.estados()[id_puerta(FAMILIA, self.clave)]
        assert propia.abierta and propia.abierta_por == ABIERTA_POR_AUTOMATICO
        self.producir(sku)
        topic, valor = esperar(lambda: self.salida(sku), f"{sku}'s outcome", 120)
        assert topic == self.topics.publicadas
        publicada = FichaPublicada.model_validate(valor)
        assert publicada.puerta is not None and publicada.puerta.clave == self.clave


def _abierta(estado: EstadoPuerta | None) -> EstadoPuerta | None:
    return estado if estado is not None and estado.abierta else None


def _metrica_app(app: RevisorProcess, nombre: str, etiquetas: dict[str, str]) -> float | None:
    """One of the app's per-gate metrics; None while absent or NaN."""
    buscadas = {f'{k}="{v}"' for k, v in etiquetas.items()}
    for linea in app.metrics().splitlines():
        nombre_etiquetas, _, valor = linea.rpartition(" ")
        metrica, _, resto = nombre_etiquetas.partition("{")
        if metrica == nombre and set(resto.rstrip("}").split(",")) == buscadas:
            return None if valor == "NaN" else float(valor)
    return None


@pytest.fixture
def escena(kafka: KafkaBroker, fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Escena]:
    e = Escena(kafka, fake_llm, tmp_path)
    try:
        yield e
    finally:
        e.parar()


def test_retener_y_liberar_desde_la_linea_de_comandos(escena: Escena) -> None:
    revisor = escena.arrancar()
    escena.abrir_por_evidencia(revisor)
    hold_id = id_retencion(FAMILIA, escena.clave)

    # The key is the running configuration's, computed by the command as the worker does.
    proc = fichas_puerta(
        ["retener", FAMILIA, "--motivo", "reclamaciones de tallas", "--por", "ana"], escena.env
    )
    inicio = time.monotonic()  # the record is on the topic once the command returns
    assert proc.returncode == 0, proc.stderr
    assert escena.cerrada_en_segundos(inicio) < PLAZO_S
    hold = escena.estados()[hold_id]
    assert (hold.motivo, hold.retenida_por, hold.nota) == (
        MOTIVO_PUERTA_RETENIDA,
        "ana",
        "reclamaciones de tallas",
    )
    escena.a_revision("RET-1")
    assert _metrica_app(escena.app, "fichas_revision_puerta_retenida", escena.gate) == 1

    # The app restarts: the hold lives on the topic; the certifier still certifies the
    # evidence, and the gate stays closed for the worker.
    revisor = escena.reiniciar_app()
    assert escena.metrica("fichas_puerta_retenida") == 1
    escena.a_revision("RET-2")
    pagina = revisor.pedir("/puertas")[2]
    assert 'Retenida</strong> por <span class="retenida-por">ana</span>' in pagina

    proc = fichas_puerta(["liberar", FAMILIA, "--motivo", "tallas corregidas"], escena.env)
    assert proc.returncode == 0, proc.stderr
    assert escena.estados()[hold_id].motivo == MOTIVO_PUERTA_LIBERADA
    escena.publica_otra_vez("LIB-1")
    assert _metrica_app(escena.app, "fichas_revision_puerta_retenida", escena.gate) == 0


def test_retener_y_liberar_con_el_boton(escena: Escena, navegador: Any) -> None:
    revisor = escena.arrancar()
    escena.abrir_por_evidencia(revisor)
    puerta = id_puerta(FAMILIA, escena.clave)
    hold_id = id_retencion(FAMILIA, escena.clave)

    def bloque() -> Any:
        return navegador.find_element(By.CSS_SELECTOR, f'section[data-puerta="{puerta}"]')

    def aviso() -> str:
        return str(navegador.find_element(By.CSS_SELECTOR, ".aviso").text)

    def pulsar(motivo: str, boton: str) -> float:
        navegador.get(escena.app.url + "/puertas")
        formulario = bloque().find_element(By.CSS_SELECTOR, "form.retener-puerta")
        formulario.find_element(By.CSS_SELECTOR, "input.motivo").send_keys(motivo)
        assert formulario.find_element(By.CSS_SELECTOR, "button").text == boton
        inicio = time.monotonic()
        formulario.find_element(By.CSS_SELECTOR, "button").click()
        return inicio

    entrar(navegador, escena.app)
    navegador.get(escena.app.url + "/puertas")
    assert bloque().find_element(By.CSS_SELECTOR, ".estado-puerta").text == "abierta"
    inicio = pulsar("fotos cambiadas por el proveedor", "Retener la puerta")
    esperar(
        lambda: (
            f"Puerta {puerta} retenida" in navegador.find_element(By.CSS_SELECTOR, ".aviso").text
        ),
        "the confirmation",
    )
    assert escena.cerrada_en_segundos(inicio) < PLAZO_S
    assert bloque().find_element(By.CSS_SELECTOR, ".estado-puerta").text == "retenida"
    assert bloque().find_element(By.CSS_SELECTOR, ".retenida-por").text == USUARIO
    hold = escena.estados()[hold_id]
    assert hold.motivo == MOTIVO_PUERTA_RETENIDA and hold.retenida_por == USUARIO
    assert hold.nota == "fotos cambiadas por el proveedor"
    escena.a_revision("BOT-1")

    escena.reiniciar_app()
    entrar(navegador, escena.app)
    navegador.get(escena.app.url + "/puertas")
    assert bloque().find_element(By.CSS_SELECTOR, ".estado-puerta").text == "retenida"
    escena.a_revision("BOT-2")

    pulsar("fotos revisadas", "Liberar la puerta")
    esperar(
        lambda: (
            f"Puerta {puerta} liberada" in navegador.find_element(By.CSS_SELECTOR, ".aviso").text
        ),
        "the release's confirmation",
    )
    liberada = escena.estados()[hold_id]
    assert liberada.motivo == MOTIVO_PUERTA_LIBERADA and liberada.retenida_por == USUARIO
    escena.publica_otra_vez("BOT-3")
    navegador.get(escena.app.url + "/puertas")
    assert bloque().find_element(By.CSS_SELECTOR, ".estado-puerta").text == "abierta"
    assert "Liberada por" in bloque().find_element(By.CSS_SELECTOR, ".retencion").text
