"""The publication gate in real ``fichas worker`` processes, on a real broker, fake LLM scripted.

Each test writes the gate states it needs to its own gate topic (``harness.estados_puerta``) and
reads the outcomes from the output topics: what subscribers and reviewers would see.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from esquemas import FichaEnRevision, FichaPublicada
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from grafo.logprobs_probe import PROBE_SKU
from harness.contrato import validar_registros
from harness.estados_puerta import abrir, cerrar, clave_fake, estado
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import Topics, create_input_topic, produce, read_all
from harness.version_siguiente import siguiente
from harness.worker import WorkerInProcess, wait_outcomes, worker_env


def _m(sku: str, version: int = 1) -> tuple[bytes, bytes]:
    evento = evento_dict(sku, version, event_id=f"{sku}-v{version}")
    return sku.encode(), json.dumps(evento).encode()


def _worker(
    kafka: KafkaBroker, llm: FakeLLM, topics: Topics, data_dir: Path, log: Path, **extra: str
) -> WorkerInProcess:
    env = worker_env(kafka, llm, topics, data_dir, **({"FICHAS_PUERTA": "certificada"} | extra))
    worker = WorkerInProcess(env, log)
    worker.start()
    worker.wait_ready()
    return worker


def _por_sku(salidas: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {s["value"]["sku"]: s for s in salidas}


async def test_clave_distinta_cierra_la_puerta(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    clave = clave_fake()
    otro_modelo = clave_fake(modelo="otro-modelo")
    otro_prompt = ClavePuerta(
        modelo=clave.modelo,
        prompt_evaluador_sha256="f" * 64,
        criterios_version=clave.criterios_version,
        modo_evaluador=clave.modo_evaluador,
    )
    # Open gates, pooled and per family, but measured on another model or another prompt.
    await abrir(kafka.bootstrap, otro_modelo, topics.puerta, umbral=0.0)
    await abrir(kafka.bootstrap, otro_prompt, topics.puerta, umbral=0.0, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await produce(kafka.bootstrap, topics.entrada, [_m("K1"), _m("K2")])
    log = tmp_path / "w.log"
    worker = _worker(kafka, fake_llm, topics, data_dir, log)
    try:
        salidas = await wait_outcomes(kafka, topics, 2, worker, timeout=120)
        abierta = worker.metric("fichas_puerta_abierta", family="zapatillas", key=clave.texto())
        sin_garantia = worker.metric(
            "fichas_sin_garantia_total", family="zapatillas", key=clave.texto()
        )
    finally:
        worker.terminate()
    assert [s["topic"] for s in salidas] == [topics.revision] * 2
    validar_registros(salidas, "FichaEnRevision")
    for salida in salidas:
        revision = FichaEnRevision.model_validate(salida["value"])
        # The judge said yes and the code checks passed: only the gate held it back, after
        # one attempt (another could not have been published either).
        assert revision.motivo == "sin_garantia"
        assert revision.intentos == 1
    evaluador = fake_llm.requests(agent="evaluador", bodies=False)
    assert len([r for r in evaluador if r["sku"] != PROBE_SKU]) == 2  # the start-up probe aside
    assert abierta == 0 and sin_garantia == 2
    texto = log.read_text()
    assert "gate of zapatillas closed: gate records only for other keys" in texto
    assert f"the running key is {clave.texto()}" in texto
    assert otro_modelo.texto() in texto and otro_prompt.texto() in texto


async def test_modo_veredicto_publica_con_el_si_del_juez_sin_certificar(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"rules": [{"sku": "V2", "evaluador": ["rechazar", "aprobar"]}]})
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await produce(kafka.bootstrap, topics.entrada, [_m("V1"), _m("V2")])
    log = tmp_path / "w.log"
    worker = _worker(kafka, fake_llm, topics, data_dir, log, FICHAS_PUERTA="veredicto")
    try:
        salidas = await wait_outcomes(kafka, topics, 2, worker, timeout=120)
        sin_certificar = worker.metric("fichas_puerta_sin_certificar")
    finally:
        worker.terminate()
    assert sorted(s["topic"] for s in salidas) == [topics.publicadas] * 2
    validar_registros(salidas, "FichaPublicada")
    publicadas = {
        k: FichaPublicada.model_validate(s["value"]) for k, s in _por_sku(salidas).items()
    }
    assert publicadas["V2"].intentos == 2  # today's rule: retry on the judge's no
    assert all(p.puerta is None for p in publicadas.values())  # no certified gate let it through
    assert sin_certificar == 1
    assert "automatic publications are NOT certified" in log.read_text()


def _paso(puntuacion: float | None, accion: str = "aprobar") -> dict[str, Any]:
    return {"accion": accion, "puntuacion": puntuacion}


UMBRAL = 0.8


async def test_la_puerta_nunca_publica_bajo_el_umbral(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    clave = clave_fake()
    fake_llm.configure(
        {
            "rules": [
                {"sku": "A1", "evaluador": [_paso(0.95)]},  # well above: attempt 1
                {"sku": "A2", "evaluador": [_paso(0.81)]},  # just above
                # just below: the judge approved, so the loop is done; the gate holds it back
                {"sku": "A3", "evaluador": [_paso(0.79)]},
                # rejected, then a new ficha approved above λ: retries follow the judge
                {"sku": "A4", "evaluador": [_paso(0.5, "rechazar"), _paso(0.85)]},
                {"sku": "A5", "evaluador": [_paso(None)]},  # no logprobs: never published
                # the code checks veto a high score: retried, then rejected by code
                {"sku": "A6", "generador": ["sin_atributos"], "evaluador": [_paso(0.99)]},
            ]
        }
    )
    await abrir(kafka.bootstrap, clave, topics.puerta, umbral=UMBRAL, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    skus = ["A1", "A2", "A3", "A4", "A5", "A6"]
    await produce(kafka.bootstrap, topics.entrada, [_m(s) for s in skus])
    worker = _worker(kafka, fake_llm, topics, data_dir, tmp_path / "w.log")
    try:
        salidas = await wait_outcomes(kafka, topics, len(skus), worker, timeout=180)
        sin_garantia = worker.metric(
            "fichas_sin_garantia_total", family="zapatillas", key=clave.texto()
        )
        umbral = worker.metric("fichas_puerta_umbral", family="zapatillas", key=clave.texto())
    finally:
        worker.terminate()
    publicadas = [s for s in salidas if s["topic"] == topics.publicadas]
    revision = [s for s in salidas if s["topic"] == topics.revision]
    validar_registros(publicadas, "FichaPublicada")
    validar_registros(revision, "FichaEnRevision")
    por_sku = _por_sku(salidas)
    assert {s["value"]["sku"] for s in publicadas} == {"A1", "A2", "A4"}
    for salida in publicadas:
        publicada = FichaPublicada.model_validate(salida["value"])
        assert publicada.puntuacion is not None and publicada.puntuacion >= UMBRAL
        assert publicada.puerta is not None
        assert publicada.puerta.clave == clave and publicada.puerta.umbral == UMBRAL
    assert por_sku["A4"]["value"]["intentos"] == 2
    esperado = {"A3": ("sin_garantia", 1), "A5": ("sin_garantia", 1), "A6": ("rechazada", 3)}
    for sku, (motivo, intentos) in esperado.items():
        enviada = FichaEnRevision.model_validate(por_sku[sku]["value"])
        assert (enviada.motivo, enviada.intentos) == (motivo, intentos), sku
        assert enviada.clave == clave, sku
    puntuaciones = {
        s["value"]["sku"]: [h["puntuacion"] for h in s["value"]["historial"]] for s in revision
    }
    assert puntuaciones["A5"] == [None]
    assert all(p is not None and abs(p - 0.79) < 1e-6 for p in puntuaciones["A3"])
    assert sin_garantia == 2 and umbral == UMBRAL


async def test_cerrada_en_el_topic_deja_de_publicar_y_un_worker_nuevo_arranca_cerrado(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    clave = clave_fake()
    gate = {"family": "zapatillas", "key": clave.texto()}
    await abrir(kafka.bootstrap, clave, topics.puerta, umbral=0.5, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await produce(kafka.bootstrap, topics.entrada, [_m("R1")])
    worker = _worker(kafka, fake_llm, topics, data_dir, tmp_path / "w1.log")
    try:
        primera = await wait_outcomes(kafka, topics, 1, worker, timeout=120)
        assert [s["topic"] for s in primera] == [topics.publicadas]
        assert worker.metric("fichas_puerta_abierta", **gate) == 1
        # The monitor closes the family's gate: the worker stops publishing within seconds.
        await cerrar(kafka.bootstrap, clave, topics.puerta, familia="zapatillas")
        inicio = time.monotonic()
        await until(
            lambda: worker.metric("fichas_puerta_abierta", **gate) == 0,
            15,
            every=0.2,
            explain=worker.log_tail,
        )
        segundos = time.monotonic() - inicio
        await produce(kafka.bootstrap, topics.entrada, [_m("R2")])
        segunda = await wait_outcomes(kafka, topics, 2, worker, timeout=120)
    finally:
        worker.terminate()
    r2 = _por_sku(segunda)["R2"]
    assert r2["topic"] == topics.revision
    assert (r2["value"]["motivo"], r2["value"]["intentos"]) == ("sin_garantia", 1)
    assert segundos < 10

    # A worker started now reads the topic first: closed before it consumes anything.
    await produce(kafka.bootstrap, topics.entrada, [_m("R3")])
    log = tmp_path / "w2.log"
    nuevo = _worker(kafka, fake_llm, topics, data_dir, log)
    try:
        assert nuevo.metric("fichas_puerta_abierta", **gate) == 0
        tercera = await wait_outcomes(kafka, topics, 3, nuevo, timeout=120)
    finally:
        nuevo.terminate()
    r3 = _por_sku(tercera)["R3"]
    assert r3["topic"] == topics.revision and r3["value"]["motivo"] == "sin_garantia"
    assert "motivo cota_en_linea_bajo_objetivo" in log.read_text()
    publicadas = await read_all(kafka.bootstrap, topics.publicadas)
    assert [p["value"]["sku"] for p in publicadas] == ["R1"]


async def test_un_cierre_de_la_version_siguiente_cierra_la_puerta_del_worker(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    """Issue 47, item 7: a running worker whose family's gate is open publishes; a closure
    written by a later contract version (a field at every level, a motivo this worker does not
    know) closes the gate: the next events of the family go to review, none is published.
    Before v1.6 the reader skipped that record and kept the gate open (3 of 3 published)."""
    clave = clave_fake()
    gate = {"family": "zapatillas", "key": clave.texto()}
    abierta = await abrir(kafka.bootstrap, clave, topics.puerta, umbral=0.5, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await produce(kafka.bootstrap, topics.entrada, [_m("N1")])
    log = tmp_path / "w.log"
    worker = _worker(kafka, fake_llm, topics, data_dir, log)
    try:
        primera = await wait_outcomes(kafka, topics, 1, worker, timeout=120)
        assert [s["topic"] for s in primera] == [topics.publicadas]
        assert worker.metric("fichas_puerta_abierta", **gate) == 1
        cierre = siguiente(
            EstadoPuerta,
            estado(clave, None, "zapatillas", abierta=False).model_dump(mode="json"),
            {"motivo": "cerrada_por_detector"},
        )
        await produce(
            kafka.bootstrap, topics.puerta, [(abierta.id.encode(), json.dumps(cierre).encode())]
        )
        await until(
            lambda: worker.metric("fichas_puerta_abierta", **gate) == 0,
            15,
            every=0.2,
            explain=worker.log_tail,
        )
        await produce(kafka.bootstrap, topics.entrada, [_m(s) for s in ("N2", "N3", "N4")])
        salidas = await wait_outcomes(kafka, topics, 4, worker, timeout=120)
    finally:
        worker.terminate()
    nuevas = [s for s in salidas if s["value"]["sku"] != "N1"]
    assert [s["topic"] for s in nuevas] == [topics.revision] * 3
    assert {s["value"]["motivo"] for s in nuevas} == {"sin_garantia"}
    publicadas = await read_all(kafka.bootstrap, topics.publicadas)
    assert [p["value"]["sku"] for p in publicadas] == ["N1"]
    texto = log.read_text()
    assert texto.count("cannot be read by this version") == 1
    assert "'cerrada_por_detector'" in texto and "gate changed: gate of zapatillas closed" in texto
