"""The publication gate in real ``fichas worker`` processes, on a real broker, fake LLM scripted.

Each test writes the gate states it needs to its own gate topic (``harness.puerta``) and reads
the outcomes from the output topics: what subscribers and reviewers would see.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from esquemas import FichaEnRevision, FichaPublicada
from esquemas.puerta import ClavePuerta
from harness.contrato import validar_registros
from harness.eventos import evento_dict
from harness.fake_llm_client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.puerta import abrir, clave_fake
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, wait_outcomes, worker_env


def _m(sku: str, version: int = 1) -> tuple[bytes, bytes]:
    evento = evento_dict(sku, version, event_id=f"{sku}-v{version}")
    return sku.encode(), json.dumps(evento).encode()


def _worker(
    kafka: KafkaBroker, llm: FakeLLM, topics: Topics, data_dir: Path, log: Path, **extra: str
) -> WorkerProcess:
    env = worker_env(kafka, llm, topics, data_dir, **({"FICHAS_PUERTA": "certificada"} | extra))
    worker = WorkerProcess(env, log)
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
    assert len(fake_llm.requests(agent="evaluador")) == 2
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
