"""The contract on a real broker: topic settings, headers, schemas, and the compacted catalogue.

The compaction test runs the real worker against a ``fichas.publicadas`` created with the
worker's own settings plus the smallest segments the broker allows, so that the broker's log
cleaner compacts within seconds instead of a day; the figures it prints go to docs/contrato.md.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from harness.contrato import cabeceras, validar_registros
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import Topics, create_input_topic, produce, read_all, settings_for
from harness.worker import WorkerInProcess, worker_env
from infra.config import Settings
from infra.kafka.clients import build_reader
from infra.kafka.topics import COMPACTED, ensure_topics, topic_configs, topic_partitions

pytestmark = pytest.mark.kafka

# The smallest segments Kafka 4.4 accepts (segment.bytes >= 1 MiB), a segment rolled every
# 200 ms, and a cleaner that compacts as soon as 1% of the log is dirty.
SEGMENTOS_PEQUENOS = {
    "segment.ms": "200",
    "segment.bytes": "1048576",
    "min.cleanable.dirty.ratio": "0.01",
}


async def _configuracion(bootstrap: str, topic: str, timeout: float = 15) -> dict[str, str]:
    """The topic's effective settings, as the broker reports them. A topic just created may
    be unknown for a moment (error 3, UNKNOWN_TOPIC_OR_PARTITION, seen on a loaded machine):
    asked again until known."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    limite = time.monotonic() + timeout
    try:
        while True:
            (respuesta,) = await admin.describe_configs(
                [ConfigResource(ConfigResourceType.TOPIC, topic)]
            )
            (recurso,) = respuesta.resources
            if recurso[0] != 3 or time.monotonic() > limite:
                break
            await asyncio.sleep(0.2)
    finally:
        await admin.close()
    assert recurso[0] == 0, recurso
    return {entrada[0]: entrada[1] for entrada in recurso[4]}


async def _crear(bootstrap: str, topic: str, config: dict[str, str]) -> None:
    """Create one single-partition topic and fail on any error the broker answers."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        respuesta = await admin.create_topics([NewTopic(topic, 1, 1, topic_configs=config)])
    finally:
        await admin.close()
    assert all(error[1] == 0 for error in respuesta.topic_errors), respuesta


async def test_el_worker_crea_cada_topic_con_su_configuracion(kafka: KafkaBroker) -> None:
    topics = Topics()
    settings = Settings(
        kafka_brokers=kafka.bootstrap,
        topic_entrada=topics.entrada,
        topic_publicadas=topics.publicadas,
        topic_revision=topics.revision,
        topic_dlq=topics.dlq,
        topic_muestra=topics.muestra,
        topic_decisiones=topics.decisiones,
        particiones=2,
    )
    await ensure_topics(settings)
    esperado = topic_configs(settings)
    for topic, config in esperado.items():
        real = await _configuracion(kafka.bootstrap, topic)
        assert {k: real[k] for k in config} == config, topic
    publicadas = await _configuracion(kafka.bootstrap, topics.publicadas)
    assert publicadas["cleanup.policy"] == "compact"
    for topic in (topics.revision, topics.dlq, topics.muestra):
        real = await _configuracion(kafka.bootstrap, topic)
        assert real["cleanup.policy"] == "delete"
        assert real["retention.ms"] == str(30 * 24 * 3600 * 1000)


async def test_un_topic_existente_sin_compactar_se_avisa_y_un_rechazo_para_el_arranque(
    kafka: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    topics = Topics()
    await _crear(kafka.bootstrap, topics.publicadas, {"cleanup.policy": "delete"})
    settings = Settings(
        kafka_brokers=kafka.bootstrap,
        topic_publicadas=topics.publicadas,
        topic_entrada=topics.entrada,
        topic_decisiones=topics.decisiones,
    )
    with caplog.at_level(logging.WARNING, logger="infra.kafka.topics"):
        await ensure_topics(settings.model_copy(update={"particiones": 1}))
    aviso = [r.getMessage() for r in caplog.records if topics.publicadas in r.getMessage()]
    assert aviso and "cleanup.policy=delete; the contract says compact" in aviso[0]
    assert (await _configuracion(kafka.bootstrap, topics.publicadas))["cleanup.policy"] == "delete"
    otro = Topics()
    imposible = Settings(
        kafka_brokers=kafka.bootstrap,
        topic_entrada=otro.entrada,
        topic_publicadas=otro.publicadas,
        topic_revision=otro.revision,
        topic_dlq=otro.dlq,
        topic_muestra=otro.muestra,
        replicacion=3,
        topic_decisiones=otro.decisiones,
    )
    with pytest.raises(RuntimeError, match=r"refused to create topics.*replication"):
        await ensure_topics(imposible)


async def _escritos(bootstrap: str, topic: str, worker: WorkerInProcess) -> int:
    """Records ever written to a topic, from its end offsets (compaction never lowers them).

    The worker writes each record of a partition in its own transaction, which adds one commit
    marker after it, and each claim of its input partition aborts a sweep transaction that
    leaves one abort marker in every output partition (``Producers.sweep``): a partition's end
    offset is twice the records the worker wrote to it plus the claims.
    """
    particiones, _ = await topic_partitions(settings_for(bootstrap), [topic])
    lector = build_reader(settings_for(bootstrap))
    await lector.start()
    try:
        offsets = sum((await lector.end_offsets(particiones)).values())
    finally:
        await lector.stop()
    reclamos = worker.log_path.read_text(encoding="utf-8").count("claimed [")
    datos = offsets - reclamos * len(particiones)
    assert datos >= 0 and datos % 2 == 0, (
        f"{topic}: {offsets} offsets is not records plus their markers ({reclamos} claims)"
    )
    return datos // 2


async def _esperar(bootstrap: str, topic: str, cuantos: int, worker: WorkerInProcess) -> None:
    """Until ``cuantos`` records are committed on ``topic``."""

    async def escritos() -> bool:
        return await _escritos(bootstrap, topic, worker) >= cuantos

    await until(escritos, 90, every=0.5, explain=worker.log_tail)


async def test_catalogo_compactado_cabeceras_y_esquemas(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"rules": [{"sku": "KREV", "evaluador": ["rechazar"]}]})
    skus = [f"K{n:02d}" for n in range(8)]
    versiones = 3
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    await _crear(kafka.bootstrap, topics.publicadas, COMPACTED | SEGMENTOS_PEQUENOS)
    env = worker_env(kafka, fake_llm, topics, data_dir, FICHAS_MUESTRA_PROPORCION="1")
    worker = WorkerInProcess(env, tmp_path / "w.log")
    worker.start()
    try:
        worker.wait_ready()
        for version in range(1, versiones + 1):
            ronda = [
                (sku.encode(), json.dumps(evento_dict(sku, version, event_id=f"{sku}-v{version}")))
                for sku in skus
            ]
            await produce(kafka.bootstrap, topics.entrada, [(k, v.encode()) for k, v in ronda])
            await _esperar(kafka.bootstrap, topics.publicadas, version * len(skus), worker)
            await asyncio.sleep(0.5)  # past segment.ms: the next round starts a new segment
        # One more SKU rolls the segment that holds the last round, so the cleaner can reach it.
        otros: list[tuple[bytes | None, bytes]] = [
            (b"KZZ", json.dumps(evento_dict("KZZ", 1, event_id="KZZ-v1")).encode()),
            (b"KREV", json.dumps(evento_dict("KREV", 4, event_id="KREV-v4")).encode()),
            (b"KMAL", b"{no es json"),
        ]
        await produce(kafka.bootstrap, topics.entrada, otros[:2])
        await _produce_con_cabecera(kafka.bootstrap, topics.entrada, otros[2])
        await _esperar(kafka.bootstrap, topics.publicadas, versiones * len(skus) + 1, worker)
        await _esperar(kafka.bootstrap, topics.dlq, 1, worker)
        await _esperar(kafka.bootstrap, topics.revision, 1, worker)
    finally:
        assert worker.terminate() == 0, worker.log_tail()

    fin = await _escritos(kafka.bootstrap, topics.publicadas, worker)
    antes = len(await read_all(kafka.bootstrap, topics.publicadas))
    inicio = time.monotonic()
    while True:
        leidos = await read_all(kafka.bootstrap, topics.publicadas)
        if len(leidos) == len(skus) + 1 or time.monotonic() - inicio > 120:
            break
        await asyncio.sleep(1)
    espera = time.monotonic() - inicio
    print(
        f"\ncompaction: {fin} records written (offsets 0..{fin - 1}), {antes} readable when the "
        f"worker stopped, {len(leidos)} after {espera:.0f} s of cleaning; "
        f"{len(skus)} SKUs x {versiones} versions + 1 SKU x 1 version"
    )
    assert fin == versiones * len(skus) + 1
    # A fresh consumer reads exactly the newest ficha of every SKU, once.
    por_sku = {r["value"]["sku"]: r["value"]["version"] for r in leidos}
    assert len(leidos) == len(por_sku) == len(skus) + 1, [r["key"] for r in leidos]
    assert por_sku == {sku: versiones for sku in skus} | {"KZZ": 1}
    assert all(r["key"].decode() == r["value"]["sku"] for r in leidos)
    # Every outcome, published, sampled, sent to review or rejected, matches its schema and
    # carries the routing headers; the DLQ forwards the original headers.
    assert validar_registros(leidos, "FichaPublicada") == len(leidos)
    muestra = await read_all(kafka.bootstrap, topics.muestra)
    assert validar_registros(muestra, "FichaPublicada") == versiones * len(skus) + 1
    assert all(r["value"]["origen"] for r in muestra)
    revision = await read_all(kafka.bootstrap, topics.revision)
    assert validar_registros(revision, "FichaEnRevision") == 1
    assert cabeceras(revision[0])["sku"] == "KREV" and cabeceras(revision[0])["version"] == "4"
    dlq = await read_all(kafka.bootstrap, topics.dlq)
    assert validar_registros(dlq, "EventoRechazado") == 1
    assert cabeceras(dlq[0])["traza"] == "abc-123"
    assert cabeceras(dlq[0])["esquema"] == "EventoRechazado"


async def _produce_con_cabecera(
    bootstrap: str, topic: str, mensaje: tuple[bytes | None, bytes]
) -> None:
    """One record with a tracing header and a header that pretends to name a schema."""
    from aiokafka import AIOKafkaProducer

    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        originales = [("traza", b"abc-123"), ("esquema", b"EventoCambio")]
        await producer.send_and_wait(topic, mensaje[1], key=mensaje[0], headers=originales)
    finally:
        await producer.stop()
