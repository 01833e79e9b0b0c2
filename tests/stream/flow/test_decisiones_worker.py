"""People's decisions through the worker (stream.flow.decisiones), on the real broker.

The worker consumes ``fichas.decisiones`` co-partitioned with the input and is the one writer
of ``fichas.publicadas``: a person's approval is published by it, in the SKU's lane, unless a
newer version of the SKU was handled. The decisions are built by the reviewer app's own
functions (``harness.revisor.aprobacion``); the fake LLM sends a SKU's first version to review
(``FICHAS_MAX_INTENTOS=1``, the evaluator rejects the first ficha of each SKU) and publishes
the second.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from aiokafka.coordinator.assignors.roundrobin import RoundRobinPartitionAssignor

from esquemas import FichaPublicada
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.revisor import aprobacion
from harness.topicos import (
    Topics,
    committed_offsets,
    create_input_topic,
    end_offsets,
    partitions_of,
    produce,
    produce_with_headers,
    read_all,
)
from harness.worker import WorkerInProcess, WorkerProcess, settings_from_env, worker_env
from infra.kafka.topics import ParticionesDistintas, check_co_partitioned, ensure_topics

RONDAS = 24  # three ways of meeting the newer version, eight times each
LATENCIA_MS = 150


def _guion(prefijo: str) -> dict[str, Any]:
    """First ficha of a SKU rejected (to review, one attempt), every later one approved."""
    return {
        "rules": [
            {
                "sku": f"{prefijo}-.*",
                "evaluador": ["rechazar", "aprobar"],
                "latency_ms": LATENCIA_MS,
            }
        ]
    }


def _entorno(kafka: KafkaBroker, llm: FakeLLM, topics: Topics, data: Path) -> dict[str, str]:
    return worker_env(kafka, llm, topics, data, FICHAS_MAX_INTENTOS="1", FICHAS_CONCURRENCIA="8")


async def _de_sku(kafka: KafkaBroker, topic: str, sku: str) -> list[dict[str, Any]]:
    return [r for r in await read_all(kafka.bootstrap, topic) if r["value"]["sku"] == sku]


async def _evento(kafka: KafkaBroker, topics: Topics, sku: str, version: int) -> None:
    valor = json.dumps(evento_dict(sku, version, event_id=f"{sku}-v{version}")).encode()
    await produce(kafka.bootstrap, topics.entrada, [(sku.encode(), valor)])


async def _revision(kafka: KafkaBroker, topics: Topics, sku: str) -> dict[str, Any]:
    """The loop's review record of ``sku`` v1, once written."""

    async def hay() -> list[dict[str, Any]]:
        return await _de_sku(kafka, topics.revision, sku)

    (registro,) = await until(
        hay, 60, every=0.1, explain=lambda: f"not reached: the review record of {sku}"
    )
    return dict(registro["value"])


async def _decisiones_aplicadas(kafka: KafkaBroker, topics: Topics) -> None:
    """Until the group committed every written partition of fichas.decisiones to its end: the
    worker has handled every decision (published it, closed it as obsolete, or rejected it)."""
    fin = await end_offsets(kafka.bootstrap, topics.decisiones)
    grupo = topics.env()["FICHAS_GRUPO"]

    async def al_final() -> bool:
        hechos = await committed_offsets(kafka.bootstrap, grupo, topics.decisiones)
        return all(hechos.get(p) == f for p, f in fin.items() if f > 0)

    await until(al_final, 60, every=0.1, explain=lambda: "not reached: the decisions committed")


async def test_una_aprobacion_publica_la_ficha_de_la_persona(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, tmp_path: Path
) -> None:
    """Approve (edited), reject, and a decision whose key is not its SKU: the worker publishes
    exactly the person's ficha with the outcome headers, nothing for the rejection, and sends
    the unreadable decision to the DLQ with its origin on fichas.decisiones."""
    fake_llm.configure(_guion("PER"))
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    worker = WorkerInProcess(_entorno(kafka, fake_llm, topics, tmp_path / "d"), tmp_path / "w.log")
    worker.start()
    try:
        worker.wait_ready()
        await _evento(kafka, topics, "PER-1", 1)
        await _evento(kafka, topics, "PER-2", 1)
        revision = await _revision(kafka, topics, "PER-1")
        otra = await _revision(kafka, topics, "PER-2")
        editada = dict(revision["ficha"], titulo="Zapatillas de running de la persona")
        clave, valor, cabeceras = aprobacion(revision, ficha=editada)
        rechazo = json.loads(valor) | {"decision": "rechazada", "publicacion": None}
        _, valor_otra, cabeceras_otra = aprobacion(otra)
        await produce_with_headers(
            kafka.bootstrap,
            topics.decisiones,
            [
                (clave, valor, cabeceras),
                (b"PER-2", json.dumps(rechazo | {"sku": "PER-2"}).encode(), cabeceras),
                (b"OTRO-SKU", valor_otra, cabeceras_otra),
            ],
        )
        await _decisiones_aplicadas(kafka, topics)
        dlq = await read_all(kafka.bootstrap, topics.dlq)
        cuentas = {
            r: worker.metric("fichas_decisiones_total", result=r)
            for r in ("publicada", "obsoleta", "sin_publicacion", "rechazada")
        }
    finally:
        assert worker.terminate() == 0, worker.log_tail()

    publicadas = await read_all(kafka.bootstrap, topics.publicadas)
    assert [r["key"] for r in publicadas] == [b"PER-1"], worker.log_tail()
    (registro,) = publicadas
    assert (
        registro["raw"]
        == json.dumps(
            json.loads(valor)["publicacion"], ensure_ascii=False, separators=(",", ":")
        ).encode()
    )
    publicada = FichaPublicada.model_validate(registro["value"])
    assert publicada.ficha.titulo == "Zapatillas de running de la persona"
    assert publicada.revision is not None and publicada.revision.decision == "editada"
    assert publicada.revision.revisor == "ana"
    assert (publicada.event_id, publicada.version) == (revision["event_id"], 1)
    assert {k: v.decode() for k, v in registro["headers"]} == {
        "sku": "PER-1",
        "version": "1",
        "event_id": revision["event_id"],
        "esquema": "FichaPublicada",
        "esquema_version": "1.6",
    }
    assert cuentas == {"publicada": 1, "obsoleta": 0, "sin_publicacion": 1, "rechazada": 1}
    (rechazada,) = dlq
    assert rechazada["value"]["error"]["codigo"] == "esquema_invalido"
    assert rechazada["value"]["error"]["campo"] == "key"
    assert rechazada["value"]["origen"]["topic"] == topics.decisiones


async def test_la_version_nueva_gana_siempre_a_la_aprobacion_de_la_anterior(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, tmp_path: Path
) -> None:
    """The issue's "Done when": a person approves v1 of a SKU while v2 is on its way or being
    processed, ``RONDAS`` times; after each round the compacted view of fichas.publicadas (the
    last record per key, read_committed) is v2.

    Each round meets v2 one of three ways: the decision written before v2, right after it, or
    once the loop is inside v2 (its generator request seen by the fake LLM), which is the old
    design's window: the app checked the version store, the loop published v2, the app
    published v1. The worker must publish v1 before v2 or not at all.
    """
    fake_llm.configure(_guion("RACE"))
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=4)
    worker = WorkerInProcess(_entorno(kafka, fake_llm, topics, tmp_path / "d"), tmp_path / "w.log")
    formas: dict[str, list[str]] = {"antes": [], "despues": [], "durante": []}
    worker.start()
    try:
        worker.wait_ready()
        skus = [f"RACE-{n:02d}" for n in range(RONDAS)]
        for sku in skus:
            await _evento(kafka, topics, sku, 1)
        revisiones = {sku: await _revision(kafka, topics, sku) for sku in skus}
        for n, sku in enumerate(skus):
            forma = list(formas)[n % 3]
            decision = [aprobacion(revisiones[sku])]
            if forma == "antes":
                await produce_with_headers(kafka.bootstrap, topics.decisiones, decision)
                await _evento(kafka, topics, sku, 2)
            elif forma == "despues":
                await _evento(kafka, topics, sku, 2)
                await produce_with_headers(kafka.bootstrap, topics.decisiones, decision)
            else:
                await _evento(kafka, topics, sku, 2)

                async def en_v2(sku: str = sku) -> bool:
                    pedidas = await fake_llm.arequests(sku=sku, agent="generador", bodies=False)
                    return len(pedidas) >= 2

                await until(
                    en_v2,
                    60,
                    every=0.1,
                    explain=lambda sku=sku: f"not reached: the loop generating {sku} v2",
                )
                await produce_with_headers(kafka.bootstrap, topics.decisiones, decision)

            async def v2_publicada(sku: str = sku) -> bool:
                registros = await _de_sku(kafka, topics.publicadas, sku)
                return any(r["value"]["version"] == 2 for r in registros)

            await until(
                v2_publicada,
                60,
                every=0.1,
                explain=lambda sku=sku: f"not reached: {sku} v2 published",
            )
            formas[forma].append(sku)
        await _decisiones_aplicadas(kafka, topics)
        publicadas = await read_all(kafka.bootstrap, topics.publicadas)
        publicadas_metrica = worker.metric("fichas_decisiones_total", result="publicada")
        obsoletas_metrica = worker.metric("fichas_decisiones_total", result="obsoleta")
    finally:
        assert worker.terminate() == 0, worker.log_tail()

    ultima: dict[bytes, dict[str, Any]] = {}
    historia: dict[str, list[tuple[int, str | None]]] = {}
    for r in sorted(publicadas, key=lambda r: (r["partition"], r["offset"])):
        ultima[r["key"]] = r["value"]
        revision = r["value"]["revision"]
        historia.setdefault(r["value"]["sku"], []).append(
            (r["value"]["version"], revision["revisor"] if revision else None)
        )
    assert {k.decode(): v["version"] for k, v in ultima.items()} == {s: 2 for s in skus}, historia
    assert all(v["revision"] is None for v in ultima.values())
    # The person's v1 was either published before v2 or not at all; never after it.
    for sku, pasos in historia.items():
        assert pasos in ([(1, "ana"), (2, None)], [(2, None)]), (sku, pasos)
    # Inside v2 the decision waits in the SKU's lane behind it, then finds v2 handled.
    assert all(historia[sku] == [(2, None)] for sku in formas["durante"]), historia
    aplicadas = sum(1 for pasos in historia.values() if len(pasos) == 2)
    assert (publicadas_metrica, obsoletas_metrica) == (aplicadas, RONDAS - aplicadas)
    print(
        f"\nrounds {RONDAS}: person's v1 published before v2 in {aplicadas}, "
        f"closed as obsolete in {RONDAS - aplicadas}"
    )


async def test_particiones_distintas_paran_el_arranque(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, tmp_path: Path
) -> None:
    """fichas.decisiones with another partition count than the input: the worker does not
    start, and its log says which topics, their counts and how to fix it."""
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    await create_input_topic(kafka.bootstrap, topics.decisiones, partitions=3)
    env = _entorno(kafka, fake_llm, topics, tmp_path / "d")
    await ensure_topics(settings_from_env(env))  # creates what is missing, checks nothing
    with pytest.raises(ParticionesDistintas) as error:
        await check_co_partitioned(settings_from_env(env))
    mensaje = str(error.value)
    assert f"{topics.decisiones} (FICHAS_TOPIC_DECISIONES) has 3 partitions" in mensaje
    assert f"{topics.entrada} (FICHAS_TOPIC_ENTRADA) has 2" in mensaje
    worker = WorkerInProcess(env, tmp_path / "w.log")
    worker.start()
    assert worker.terminate(timeout=90) == 1
    assert "has 3 partitions" in worker.log_tail(), worker.log_tail()


async def test_el_worker_crea_decisiones_con_las_particiones_de_la_entrada(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, tmp_path: Path
) -> None:
    """A missing fichas.decisiones is created with the input's count, not FICHAS_PARTICIONES."""
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=3)
    env = _entorno(kafka, fake_llm, topics, tmp_path / "d") | {"FICHAS_PARTICIONES": "5"}
    await ensure_topics(settings_from_env(env))

    async def tres() -> bool:
        return await partitions_of(kafka.bootstrap, topics.decisiones) == [0, 1, 2]

    await until(
        tres,
        10,
        every=0.1,
        explain=lambda: "not reached: fichas.decisiones with the input's 3 partitions",
    )


async def test_un_worker_anterior_en_round_robin_para_el_arranque_con_una_linea(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, tmp_path: Path
) -> None:
    """A member offering only round robin (a worker from before v1.4) holds the group. A v1.4
    worker offers range alone (``infra.kafka.clients.CO_PARTITIONING_ASSIGNORS``), so the broker
    refuses its join: ``fichas worker`` exits 2 with one CRITICAL line saying what to do,
    instead of running without co-partitioning or retrying for ever."""
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    env = _entorno(kafka, fake_llm, topics, tmp_path / "d")
    viejo = AIOKafkaConsumer(
        topics.entrada,
        bootstrap_servers=kafka.bootstrap,
        group_id=env["FICHAS_GRUPO"],
        partition_assignment_strategy=(RoundRobinPartitionAssignor,),
        enable_auto_commit=False,
    )
    await viejo.start()
    try:

        async def unido() -> bool:
            await viejo.getmany(timeout_ms=100)
            return bool(viejo.assignment())

        await until(
            unido, 60, every=0.1, explain=lambda: "not reached: the round-robin member joined"
        )
        worker = WorkerProcess(env, tmp_path / "w.log")
        worker.start()
        assert worker.proc is not None
        codigo = await asyncio.to_thread(worker.proc.wait, 120)
    finally:
        await viejo.stop()
    assert codigo == 2, worker.log_tail()
    criticas = [
        json.loads(linea)
        for linea in (tmp_path / "w.log").read_text().splitlines()
        if '"CRITICAL"' in linea
    ]
    assert len(criticas) == 1, worker.log_tail()
    assert "offer no range assignor" in criticas[0]["message"]
    assert "stop the old workers" in criticas[0]["message"]
