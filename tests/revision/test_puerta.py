"""Issue 21, "Done when": a run of incorrect sample verdicts closes the gate across two workers
through ``fichas.puerta``.

Everything real: the broker, two ``fichas worker`` processes in one group (the scripted fake
LLM scores every ficha 0.95, above λ), the review app as a process, a person's verdicts in a
headless Chromium. The gate of the family is open at λ = 0.8 for the workers' running key;
the fichas are published through it and all of them sampled; ``incorrecta`` verdicts on the
first ``CIERRAN`` of the sample in publication order (the reviewer follows the Puertas page's
link to the first one undecided each time) make the app publish the gate closed; both workers
see it within seconds and send new events of the family to review with ``sin_garantia``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from esquemas import FichaPublicada
from esquemas.constantes import MOTIVO_PUERTA_COTA_BAJA, MOTIVO_SIN_GARANTIA
from harness.estados_puerta import abrir, clave_fake
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, revisor_env
from harness.secuencia import incorrectas_para_cerrar
from harness.topicos import Topics, create_input_topic, produce, read_all, settings_for
from harness.worker import WorkerInProcess, worker_env
from infra.network import free_port
from puerta.topico import leer_estados
from tests.revision.conftest import CLAVE, USUARIO, abrir_item, confirmado, entrar, esperar

pytestmark = pytest.mark.kafka

UMBRAL = 0.8
FAMILIA = "zapatillas"  # harness.eventos' family
LOTE_1 = [f"PU-{i:02d}" for i in range(8)]  # published through the gate, then sampled
CIERRAN = incorrectas_para_cerrar()  # incorrect verdicts in a row that close a gate
LOTE_2 = [f"PU-{i:02d}" for i in range(20, 30)]  # after the closure: to review


def _mensajes(skus: list[str]) -> list[tuple[bytes, bytes]]:
    return [
        (sku.encode(), json.dumps(evento_dict(sku, event_id=f"{sku}-v1")).encode()) for sku in skus
    ]


def _salidas(kafka: KafkaBroker, topics: Topics, skus: list[str]) -> dict[str, dict[str, Any]]:
    """The outcome of each of ``skus`` (published or sent to review), by SKU."""
    salidas: dict[str, dict[str, Any]] = {}
    for topic in (topics.publicadas, topics.revision):
        for r in asyncio.run(read_all(kafka.bootstrap, topic)):
            if r["value"]["sku"] in skus:
                salidas[r["value"]["sku"]] = {"topic": topic, **r["value"]}
    return salidas


def _todas(kafka: KafkaBroker, topics: Topics, skus: list[str]) -> dict[str, dict[str, Any]]:
    """The outcomes of ``skus`` once every one of them has one; empty before."""
    salidas = _salidas(kafka, topics, skus)
    return salidas if len(salidas) == len(skus) else {}


def test_veredictos_incorrectos_cierran_la_puerta_en_dos_workers(
    kafka: KafkaBroker, fake_llm: FakeLLM, tmp_path: Path, navegador: Any
) -> None:
    topics = Topics()
    clave = clave_fake()
    gate = {"family": FAMILIA, "key": clave.texto()}
    fake_llm.configure(
        {"default": {"evaluador": [{"accion": "aprobar", "puntuacion": 0.95}]}, "rules": []}
    )
    asyncio.run(abrir(kafka.bootstrap, clave, topics.puerta, umbral=UMBRAL, familia=FAMILIA))
    asyncio.run(create_input_topic(kafka.bootstrap, topics.entrada, partitions=2))

    app_dir = tmp_path / "revisor"
    app = RevisorProcess(
        revisor_env(
            kafka.bootstrap,
            {**topics.env(), "FICHAS_TOPIC_DECISIONES": f"{topics.prefix}.fichas.decisiones"},
            app_dir,
        ),
        free_port(),
        tmp_path / "revisor.log",
    )
    app.add_user(USUARIO, CLAVE)
    workers = [
        WorkerInProcess(
            worker_env(
                kafka,
                fake_llm,
                topics,
                tmp_path / f"d{i}",
                FICHAS_PUERTA="certificada",
                FICHAS_MUESTRA_PROPORCION="1",
            ),
            tmp_path / f"w{i}.log",
        )
        for i in (1, 2)
    ]
    try:
        app.start()
        for w in workers:
            w.start()
        app.wait_ready()
        for w in workers:
            w.wait_ready()
        esperar(
            lambda: all(w.metric("fichas_puerta_abierta", **gate) == 1 for w in workers),
            "both workers with the gate open",
        )
        asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes(LOTE_1)))
        primeras = esperar(
            lambda: _todas(kafka, topics, LOTE_1),
            "the first batch's outcomes",
            timeout=180,
        )
        # Published automatically, through the gate, by both workers.
        assert {s["topic"] for s in primeras.values()} == {topics.publicadas}
        for s in primeras.values():
            publicada = FichaPublicada.model_validate({k: v for k, v in s.items() if k != "topic"})
            assert publicada.puerta is not None and publicada.puerta.umbral == UMBRAL
            assert publicada.puntuacion is not None and publicada.puntuacion >= UMBRAL
        assert all(w.metric("fichas_events_total", result="publicada") > 0 for w in workers), (
            "each worker should own a partition with events"
        )

        # A reviewer finds the sampled publications wrong, in the order they were published:
        # the Puertas page links the first one undecided, which holds the later ones back.
        entrar(navegador, app)
        for sku in LOTE_1:
            abrir_item(navegador, app, f"{sku}-v1")  # every sampled one stored
        puerta_id = f"{FAMILIA}|{clave.texto()}"
        for _ in range(CIERRAN):
            navegador.get(app.url + "/puertas")
            bloque = navegador.find_element(By.CSS_SELECTOR, f'section[data-puerta="{puerta_id}"]')
            bloque.find_element(By.CSS_SELECTOR, "a.bloqueo-muestra").click()
            assert "λ = 0.800" in navegador.find_element(By.ID, "puerta-aplicada").text
            event_id = navegador.find_element(By.CSS_SELECTOR, ".meta .eid").text
            sku = event_id.removesuffix("-v1")
            navegador.find_element(By.CSS_SELECTOR, 'input[value="C04"]').click()
            navegador.find_element(By.ID, "incorrecta").click()
            confirmado(navegador, f"{sku} v1: incorrecta")
        inicio = time.monotonic()

        def cerrada() -> Any:
            estados = asyncio.run(
                leer_estados(settings_for(kafka.bootstrap), topics.puerta, espera_s=30)
            )
            estado = estados[f"{FAMILIA}|{clave.texto()}"]
            return None if estado.abierta else estado

        estado = esperar(cerrada, "the gate closed on fichas.puerta", timeout=30)
        assert estado.motivo == MOTIVO_PUERTA_COTA_BAJA and estado.umbral is None
        assert estado.cota_inferior is not None
        # Both workers follow the topic: closed within seconds of the verdict.
        esperar(
            lambda: all(w.metric("fichas_puerta_abierta", **gate) == 0 for w in workers),
            "both workers with the gate closed",
            timeout=15,
        )
        assert time.monotonic() - inicio < 15

        asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes(LOTE_2)))
        segundas = esperar(
            lambda: _todas(kafka, topics, LOTE_2),
            "the second batch's outcomes",
            timeout=180,
        )

        # A worker counts an outcome once its transaction committed, so the counter may trail
        # the record on the topic by a moment: wait for it (15 s at most).
        def contados() -> list[float] | None:
            valores = [w.metric("fichas_sin_garantia_total", **gate) for w in workers]
            return valores if sum(valores) >= len(LOTE_2) else None

        sin_garantia = esperar(contados, "both workers' sin_garantia counters", timeout=15)
    finally:
        for w in workers:
            w.terminate()
        app.stop()
    assert {s["topic"] for s in segundas.values()} == {topics.revision}
    assert {(s["motivo"], s["intentos"]) for s in segundas.values()} == {(MOTIVO_SIN_GARANTIA, 1)}
    # Each worker held back some of them: the closure reached both.
    assert all(n > 0 for n in sin_garantia), sin_garantia
    assert sum(sin_garantia) == len(LOTE_2)
