"""The key names the model that answers: real workers, a real broker, the fake LLM as a real
server whose ``/v1/models`` identity a test changes under the same name, as new weights served
by a restarted vLLM would. What is asserted is what subscribers, reviewers and on-call see: the
outcomes' topic and key, the worker's log lines and its ``/metrics``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import time
from pathlib import Path
from typing import Any

import pytest

from esquemas import FichaEnRevision, FichaPublicada
from grafo import Backoff, LLMSettings, LLMUnavailable
from grafo.identidad import leer_modelo_servido
from harness.estados_puerta import abrir, clave_fake
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import Topics, create_input_topic, produce, settings_for
from harness.worker import WorkerInProcess, WorkerProcess, wait_outcomes, worker_env
from stream.gobierno.identidad import ClaveEnUso, VigiaIdentidad, clave_servida

NUEVOS = {"root": "fichas/pesos-nuevos"}  # other weights, same served name, same length
ARRANQUE = "certified with the same loop on another served model"
CAMBIO = "now serves another model"


def _m(sku: str) -> tuple[bytes, bytes]:
    return sku.encode(), json.dumps(evento_dict(sku, 1, event_id=f"{sku}-1")).encode()


def _lineas(log: Path, texto: str) -> list[dict[str, Any]]:
    """The worker's log records whose message contains ``texto``: JSON lines of a process,
    ``time LEVEL logger: message`` lines of an in-process worker."""
    encontradas = []
    for linea in log.read_text(errors="replace").splitlines():
        try:
            registro = json.loads(linea)
        except ValueError:
            plano = re.match(r"^\S+ \S+ ([A-Z]+) ([\w.]+): (.*)$", linea)
            if plano is None:
                continue
            registro = dict(zip(("level", "logger", "message"), plano.groups(), strict=True))
        if isinstance(registro, dict) and texto in str(registro.get("message", "")):
            encontradas.append(registro)
    return encontradas


def _salida(salidas: list[dict[str, Any]], sku: str) -> dict[str, Any]:
    (salida,) = [s for s in salidas if s["value"]["sku"] == sku]
    return salida


async def test_un_worker_arrancado_contra_otro_modelo_servido_cierra_y_lo_dice(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    """Gate open for the weights served yesterday; the server restarted on new weights under
    the same name: a worker started now sends everything to review and says why in one line."""
    clave = clave_fake()
    await abrir(kafka.bootstrap, clave, topics.puerta, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await produce(kafka.bootstrap, topics.entrada, [_m("ID-1")])
    env = worker_env(kafka, fake_llm, topics, data_dir, FICHAS_PUERTA="certificada")
    antes = WorkerProcess(env, tmp_path / "antes.log")
    antes.start()
    try:
        antes.wait_ready()
        primera = await wait_outcomes(kafka, topics, 1, antes, timeout=120)
    finally:
        assert antes.terminate() == 0, antes.log_tail()
    assert _salida(primera, "ID-1")["topic"] == topics.publicadas
    assert not _lineas(tmp_path / "antes.log", ARRANQUE)

    fake_llm.serve_identity(NUEVOS)
    nueva = clave_fake(identidad=NUEVOS)
    assert nueva != clave and nueva.modelo == clave.modelo  # same name, other weights
    await produce(kafka.bootstrap, topics.entrada, [_m("ID-2")])
    log = tmp_path / "despues.log"
    despues = WorkerProcess(env, log)
    despues.start()
    try:
        despues.wait_ready()
        segunda = await wait_outcomes(kafka, topics, 2, despues, timeout=120)
        abierta = despues.metric("fichas_puerta_abierta", family="zapatillas", key=nueva.texto())
        info = despues.metric(
            "fichas_modelo_servido_info", key=nueva.texto(), modelo_servido=nueva.modelo_servido
        )
    finally:
        assert despues.terminate() == 0, despues.log_tail()
    enviada = FichaEnRevision.model_validate(_salida(segunda, "ID-2")["value"])
    assert enviada.motivo == "sin_garantia" and enviada.clave == nueva
    assert (abierta, info) == (0, 1)
    (linea,) = _lineas(log, ARRANQUE)
    assert linea["level"] == "WARNING"
    assert str(clave.modelo_servido) in linea["message"]
    assert str(nueva.modelo_servido) in linea["message"]


async def test_el_modelo_cambia_con_el_worker_en_marcha(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    """The server goes down and comes back with new weights under the same name: the ficha
    caught in the outage is not published, the worker switches its key (one WARNING line, the
    metric counts it), later fichas carry the new key and only the new key's gates apply."""
    clave, nueva = clave_fake(), clave_fake(identidad=NUEVOS)
    await abrir(kafka.bootstrap, clave, topics.puerta, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    log = tmp_path / "w.log"
    env = worker_env(kafka, fake_llm, topics, data_dir, FICHAS_PUERTA="certificada")
    worker = WorkerInProcess(env, log)
    worker.start()
    try:
        worker.wait_ready()
        await produce(kafka.bootstrap, topics.entrada, [_m("EN-1")])
        salidas = await wait_outcomes(kafka, topics, 1, worker, timeout=120)
        assert _salida(salidas, "EN-1")["topic"] == topics.publicadas

        fake_llm.down(300)
        fake_llm.serve_identity(NUEVOS)
        await produce(kafka.bootstrap, topics.entrada, [_m("EN-2")])
        await until(
            lambda: worker.metric("fichas_llm_paused") == 1, 60, every=0.2, explain=worker.log_tail
        )
        assert worker.metric("fichas_puerta_suspendida") == 1
        fake_llm.up()
        salidas = await wait_outcomes(kafka, topics, 2, worker, timeout=120)
        await until(
            lambda: worker.metric("fichas_modelo_servido_cambios_total") == 1,
            60,
            every=0.2,
            explain=worker.log_tail,
        )
        assert worker.metric("fichas_puerta_suspendida") == 0
        assert worker.metric("fichas_puerta_abierta", family="zapatillas", key=clave.texto()) == 0

        await produce(kafka.bootstrap, topics.entrada, [_m("EN-3")])
        salidas = await wait_outcomes(kafka, topics, 3, worker, timeout=120)
        # The new weights' own gate applies once certified for their key.
        await abrir(kafka.bootstrap, nueva, topics.puerta, familia="zapatillas")
        gate = {"family": "zapatillas", "key": nueva.texto()}
        await until(
            lambda: worker.metric("fichas_puerta_abierta", **gate) == 1,
            60,
            every=0.2,
            explain=worker.log_tail,
        )
        await produce(kafka.bootstrap, topics.entrada, [_m("EN-4")])
        salidas = await wait_outcomes(kafka, topics, 4, worker, timeout=120)
        info = worker.metric(
            "fichas_modelo_servido_info", key=nueva.texto(), modelo_servido=nueva.modelo_servido
        )
    finally:
        worker.terminate()
    en_la_caida = _salida(salidas, "EN-2")
    assert en_la_caida["topic"] == topics.revision  # judged while the server was unverified
    assert en_la_caida["value"]["motivo"] == "sin_garantia"
    tercera = FichaEnRevision.model_validate(_salida(salidas, "EN-3")["value"])
    assert tercera.clave == nueva and tercera.motivo == "sin_garantia"
    cuarta = FichaPublicada.model_validate(_salida(salidas, "EN-4")["value"])
    assert cuarta.clave == nueva and cuarta.puerta is not None and cuarta.puerta.clave == nueva
    assert info == 1
    (linea,) = _lineas(log, CAMBIO)
    assert linea["level"] == "WARNING"
    for texto in (clave.texto(), nueva.texto(), "fichas/pesos-nuevos", "every gate is closed"):
        assert texto in linea["message"]


async def test_la_relectura_periodica_cambia_la_clave_sin_caida(
    fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    """No outage seen: the periodic read finds the new weights, switches the key once and
    tells the followers (the nodes, the gate source, the metrics)."""
    settings = settings_for("127.0.0.1:9").model_copy(
        update={"llm_url": fake_llm.url, "llm_modelo": "fake"}
    )
    clave = ClaveEnUso(settings, "sin_leer", verificada=False)
    vistas: list[tuple[str, bool]] = []
    clave.seguir(lambda c: vistas.append((c.clave.texto(), c.verificada)))
    cambios: list[tuple[str, str, str, bool]] = []
    vigia = VigiaIdentidad(settings, clave, lambda *a: cambios.append(a), releer_s=0.2)
    assert await vigia.primera() is None
    assert clave.clave == clave_fake() and clave.verificada
    tarea = asyncio.create_task(vigia.vigilar())
    try:
        with caplog.at_level(logging.INFO, logger="stream.gobierno.identidad"):
            await asyncio.sleep(0.6)  # reads again, the same: nothing changes
            assert len(cambios) == 1 and cambios[0][3] is False  # the first reading
            fake_llm.serve_identity(NUEVOS)
            limite = time.monotonic() + 10
            while clave.clave != clave_fake(identidad=NUEVOS):
                assert time.monotonic() < limite
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.6)
    finally:
        tarea.cancel()
    nueva = clave_fake(identidad=NUEVOS).texto()
    assert cambios[1:] == [(clave_fake().texto(), nueva, str(clave.modelo_servido), True)]
    assert vistas[-1] == (nueva, True)
    avisos = [r for r in caplog.records if CAMBIO in r.getMessage()]
    assert len(avisos) == 1 and avisos[0].levelno == logging.WARNING


async def test_el_servidor_caido_y_el_que_no_dice_que_sirve(fake_llm: FakeLLM) -> None:
    """The one-shot commands' read: a server down past the budget is LLMUnavailable (exit 3);
    the read itself is the server's answer reduced to the key's text."""
    settings = settings_for("127.0.0.1:9").model_copy(
        update={"llm_url": fake_llm.url, "llm_modelo": "fake"}
    )
    llm = LLMSettings(url=fake_llm.url, model="fake")
    assert await leer_modelo_servido(llm) == clave_fake().modelo_servido
    assert await clave_servida(settings, Backoff(max_wait_s=5)) == clave_fake()
    fake_llm.down(300)
    with pytest.raises(LLMUnavailable, match="which model it serves"):
        await clave_servida(settings, Backoff(base_s=0.05, cap_s=0.2, max_wait_s=1))
