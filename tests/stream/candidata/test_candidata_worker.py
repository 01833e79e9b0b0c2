"""The candidate loop in a real worker, on a real broker, against the fake LLM over HTTP.

What a subscriber and a reviewer would see: the live loop publishes through its open gate as
before; the candidate's review items appear on the review topic marked ``candidata`` under the
candidate's key, for exactly the SKUs the hash routes, on every version; nothing of the
candidate reaches ``fichas.publicadas`` or the sample, even with a gate open under its key. The
candidate's model is told apart in the fake's request log by the name it sends, a candidate
prompt by the system prompt its generator requests carry.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from esquemas import FichaEnRevision, FichaPublicada
from grafo import Plantillas
from harness.contrato import validar_registros
from harness.estados_puerta import abrir, clave_fake
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce, read_all
from harness.worker import WorkerInProcess, worker_env
from stream.candidata.bucle import a_candidata

MODELO_CANDIDATA = "fake-candidata"
SKUS = [f"CAND-{i:03d}" for i in range(30)]


def _m(sku: str, version: int) -> tuple[bytes, bytes]:
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


async def _salidas(
    kafka: KafkaBroker,
    topics: Topics,
    vivas: int,
    candidatas: int,
    worker: WorkerInProcess,
    timeout: float = 180,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Poll until ``vivas`` live outcomes and ``candidatas`` candidate items are committed:
    (published, live review items, candidate items)."""
    deadline = time.monotonic() + timeout
    while True:
        publicadas = await read_all(kafka.bootstrap, topics.publicadas)
        revision = await read_all(kafka.bootstrap, topics.revision)
        cand = [r for r in revision if r["value"].get("candidata")]
        vivas_rev = [r for r in revision if not r["value"].get("candidata")]
        if len(publicadas) + len(vivas_rev) >= vivas and len(cand) >= candidatas:
            return publicadas, vivas_rev, cand
        assert time.monotonic() < deadline, (
            f"{len(publicadas)} published, {len(vivas_rev)} live to review, {len(cand)} "
            f"candidate items\n{worker.log_tail()}"
        )
        await asyncio.sleep(0.5)


async def test_candidata_al_30_en_sombra_con_la_puerta_viva_abierta(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    viva = clave_fake()
    cand = clave_fake(modelo=MODELO_CANDIDATA)
    assert viva != cand
    # The live gate is open; so is one under the candidate's key: it must never publish.
    await abrir(kafka.bootstrap, viva, topics.puerta, umbral=0.0, familia="zapatillas")
    await abrir(kafka.bootstrap, cand, topics.puerta, umbral=0.0, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    rutadas = [s for s in SKUS if a_candidata(s, 0.3)]
    assert 5 <= len(rutadas) <= 15
    worker = _worker(
        kafka,
        fake_llm,
        topics,
        data_dir,
        tmp_path / "w.log",
        FICHAS_CANDIDATA_PROPORCION="0.3",
        FICHAS_CANDIDATA_LLM_MODELO=MODELO_CANDIDATA,
        FICHAS_CANDIDATA_CONCURRENCIA="32",
        FICHAS_MUESTRA_PROPORCION="1",  # every live publication sampled: none of the candidate
    )
    try:
        await produce(kafka.bootstrap, topics.entrada, [_m(s, 1) for s in SKUS])
        await _salidas(kafka, topics, len(SKUS), len(rutadas), worker)
        await produce(kafka.bootstrap, topics.entrada, [_m(s, 2) for s in SKUS])
        publicadas, vivas_rev, candidatas = await _salidas(
            kafka, topics, 2 * len(SKUS), 2 * len(rutadas), worker
        )
        metricas = {
            nombre: worker.metric(nombre)
            for nombre in (
                "fichas_candidata_started_total",
                "fichas_candidata_written_total",
                "fichas_candidata_llm_calls_per_event_count",
                "fichas_candidata_llm_calls_per_event_sum",
            )
        }
        llamadas = worker.metric("fichas_candidata_llm_calls_total", agent="generador")
        perdidas = worker.metric_sum("fichas_candidata_lost_total")
        omitidas = worker.metric_sum("fichas_candidata_skipped_total")
        info = worker.metric(
            "fichas_candidata_key_info",
            key=cand.texto(),
            modelo_servido=cand.modelo_servido or "",
        )
    finally:
        worker.terminate()
    muestra = await read_all(kafka.bootstrap, topics.muestra)

    # Live: every event published as before, under the live key, none marked.
    assert vivas_rev == []
    assert sorted((p["value"]["sku"], p["value"]["version"]) for p in publicadas) == sorted(
        (s, v) for s in SKUS for v in (1, 2)
    )
    validar_registros(publicadas, "FichaPublicada")
    for p in publicadas:
        assert FichaPublicada.model_validate(p["value"]).clave == viva
    assert len(muestra) == len(publicadas)
    assert all(m["value"]["clave"] == publicadas[0]["value"]["clave"] for m in muestra)

    # Candidate: one item per routed event, the same SKUs on both versions, never published.
    validar_registros(candidatas, "FichaEnRevision")
    vistos = sorted((c["value"]["sku"], c["value"]["version"]) for c in candidatas)
    assert vistos == sorted((s, v) for s in rutadas for v in (1, 2))
    for c in candidatas:
        item = FichaEnRevision.model_validate(c["value"])
        assert item.candidata is True and item.clave == cand
        assert item.motivo == "sin_garantia"  # approved, code checks passed, gates closed
        assert item.event_id == f"{item.sku}-v{item.version}"  # the live event's id
        assert c["key"] == item.sku.encode()
    assert all("candidata" not in p["value"] for p in publicadas)  # v1.4 records unchanged

    # Cost: the candidate's calls, by the name its requests send.
    enviadas = [r for r in fake_llm.requests() if r["body"].get("model") == MODELO_CANDIDATA]
    assert {r["sku"] for r in enviadas} == set(rutadas)
    runs = 2 * len(rutadas)
    assert len(enviadas) == 2 * runs  # a generator and an evaluator call per run
    assert llamadas == runs
    assert metricas == {
        "fichas_candidata_started_total": runs,
        "fichas_candidata_written_total": runs,
        "fichas_candidata_llm_calls_per_event_count": runs,
        "fichas_candidata_llm_calls_per_event_sum": 2 * runs,
    }
    assert perdidas == 0 and omitidas == 0 and info == 1
    texto = (tmp_path / "w.log").read_text()
    assert f"candidate loop: 30 % of SKUs, at most 32 runs in flight; key {cand.texto()}" in texto


async def test_presupuesto_lleno_omite_la_candidata_y_lo_vivo_no_espera(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    """Budget 1 and a candidate LLM that hangs: one candidate run starts and stays stuck, every
    other routed event skips it (counted), and every live outcome is committed meanwhile."""
    viva = clave_fake()
    await abrir(kafka.bootstrap, viva, topics.puerta, umbral=0.0, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    skus = SKUS[:8]
    log = tmp_path / "w.log"
    with FakeLLM() as lenta:
        worker = _worker(
            kafka,
            fake_llm,
            topics,
            data_dir,
            log,
            FICHAS_CANDIDATA_PROPORCION="1",
            FICHAS_CANDIDATA_LLM_URL=lenta.url,
            FICHAS_CANDIDATA_LLM_MODELO=MODELO_CANDIDATA,
            FICHAS_CANDIDATA_CONCURRENCIA="1",
        )
        try:
            lenta.down(600, mode="hang")  # after start-up read its identity
            await produce(kafka.bootstrap, topics.entrada, [_m(s, 1) for s in skus])
            publicadas, vivas_rev, candidatas = await _salidas(kafka, topics, len(skus), 0, worker)
            iniciadas = worker.metric("fichas_candidata_started_total")
            omitidas = worker.metric("fichas_candidata_skipped_total", reason="budget")
            escritas = worker.metric("fichas_candidata_written_total")
            en_curso = worker.metric("fichas_candidata_in_flight")
        finally:
            worker.terminate()
            lenta.up()
    assert sorted(p["value"]["sku"] for p in publicadas) == sorted(skus) and vivas_rev == []
    assert candidatas == []
    assert (iniciadas, omitidas, escritas, en_curso) == (1, len(skus) - 1, 0, 1)
    # The live loop called only the live server, two calls per event.
    vivas = [r for r in fake_llm.requests() if r["sku"] in skus]
    assert len(vivas) == 2 * len(skus)
    assert all(r["body"]["model"] == "fake" for r in vivas)
    assert "stopping: 1 candidate runs in flight are cancelled (lost)" in log.read_text()


async def test_presupuesto_cero_y_misma_clave_no_corren_la_candidata(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    """Budget 0: every routed event skipped. Then a candidate whose only override is the same
    server under another URL spelling: its served model makes its key the live key, so it
    never runs (an ERROR line says why) and the live loop goes on."""
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    log = tmp_path / "w1.log"
    worker = _worker(
        kafka,
        fake_llm,
        topics,
        data_dir,
        log,
        FICHAS_PUERTA="veredicto",
        FICHAS_CANDIDATA_PROPORCION="1",
        FICHAS_CANDIDATA_LLM_MODELO=MODELO_CANDIDATA,
        FICHAS_CANDIDATA_CONCURRENCIA="0",
    )
    try:
        await produce(kafka.bootstrap, topics.entrada, [_m(s, 1) for s in SKUS[:4]])
        publicadas, _, candidatas = await _salidas(kafka, topics, 4, 0, worker)
        omitidas = worker.metric("fichas_candidata_skipped_total", reason="budget")
        iniciadas = worker.metric("fichas_candidata_started_total")
    finally:
        worker.terminate()
    assert len(publicadas) == 4 and candidatas == [] and (omitidas, iniciadas) == (4, 0)

    otra_url = fake_llm.url.replace("127.0.0.1", "localhost")
    assert otra_url != fake_llm.url
    log = tmp_path / "w2.log"
    worker = _worker(
        kafka,
        fake_llm,
        topics,
        data_dir,
        log,
        FICHAS_PUERTA="veredicto",
        FICHAS_CANDIDATA_PROPORCION="1",
        FICHAS_CANDIDATA_LLM_URL=otra_url,
    )
    try:
        await produce(kafka.bootstrap, topics.entrada, [_m(s, 1) for s in SKUS[4:8]])
        publicadas, _, candidatas = await _salidas(kafka, topics, 8, 0, worker)
        misma = worker.metric("fichas_candidata_skipped_total", reason="same_key")
        iniciadas = worker.metric("fichas_candidata_started_total")
    finally:
        worker.terminate()
    assert len(publicadas) == 8 and candidatas == [] and (misma, iniciadas) == (4, 0)
    assert "the candidate's gate key is the live key" in log.read_text()


def _sistema(request: dict[str, Any]) -> str:
    """The system prompt a recorded request sent."""
    mensaje = request["body"]["messages"][0]
    assert mensaje["role"] == "system"
    return str(mensaje["content"])


async def test_candidata_con_otro_prompt_del_generador(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    """A prompt change tried in shadow: the candidate differs from live only by the generator's
    prompt file (the same image, the same model). Its items come under a key other than the
    live one, exactly the key of that text; its generator requests carry the file's prompt and
    the live ones the package's; its evaluator never sees either generator prompt."""
    texto = (
        "Eres redactor de fichas. MARCA-CANDIDATA-41: frases cortas.\n\n"
        "Reglas de la casa:\n{criterios}\n\n"
        "Título de {max_titulo} caracteres como mucho; descripción de {max_descripcion}.\n"
    )
    archivo = tmp_path / "generador_candidata.md"
    archivo.write_text(texto, encoding="utf-8")
    viva = clave_fake()
    cand = clave_fake(plantillas=Plantillas(generador=texto))
    assert cand != viva and cand.prompt_evaluador_sha256 == viva.prompt_evaluador_sha256
    await abrir(kafka.bootstrap, viva, topics.puerta, umbral=0.0, familia="zapatillas")
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    skus = SKUS[:12]
    rutadas = [s for s in skus if a_candidata(s, 0.5)]
    assert 2 <= len(rutadas) <= 10
    worker = _worker(
        kafka,
        fake_llm,
        topics,
        data_dir,
        tmp_path / "w.log",
        FICHAS_CANDIDATA_PROPORCION="0.5",
        FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO=str(archivo),
        FICHAS_CANDIDATA_CONCURRENCIA="16",
    )
    try:
        await produce(kafka.bootstrap, topics.entrada, [_m(s, 1) for s in skus])
        publicadas, vivas_rev, candidatas = await _salidas(
            kafka, topics, len(skus), len(rutadas), worker
        )
    finally:
        worker.terminate()

    assert vivas_rev == [] and sorted(p["value"]["sku"] for p in publicadas) == sorted(skus)
    for p in publicadas:
        assert FichaPublicada.model_validate(p["value"]).clave == viva
    assert sorted(c["value"]["sku"] for c in candidatas) == sorted(rutadas)
    for c in candidatas:
        item = FichaEnRevision.model_validate(c["value"])
        assert item.candidata is True and item.clave == cand

    # Which run sent what: every routed SKU has two generator requests, one per loop.
    generador = fake_llm.requests(agent="generador")
    sistemas = {r["body"]["messages"][0]["content"] for r in generador}
    del_archivo = [
        r for r in generador if "MARCA-CANDIDATA-41" in r["body"]["messages"][0]["content"]
    ]
    assert sorted(r["sku"] for r in del_archivo) == sorted(rutadas)
    assert len(sistemas) == 2  # the package's prompt (live) and the file's (candidate)
    for r in del_archivo:
        assert _sistema(r).startswith(texto.split("{criterios}")[0])
        assert "\n- C01: " in _sistema(r)  # the placeholder filled
    assert len(generador) - len(del_archivo) == len(skus)  # the live runs: the package's
    for r in fake_llm.requests(agent="evaluador"):
        enviado = json.dumps(r["body"], ensure_ascii=False)
        assert "MARCA-CANDIDATA-41" not in enviado and "Eres redactor" not in enviado
