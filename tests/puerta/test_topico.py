"""``fichas.puerta`` through the real broker: readers follow it, restart from it, and a record they
cannot read closes the gate its key names (only one whose key names no gate is skipped)."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import UTC, datetime

import pytest
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta, id_retencion
from harness.kafka_broker import KafkaBroker
from harness.nucleo import until
from harness.topicos import produce, read_all, settings_for
from harness.version_siguiente import siguiente
from infra.kafka.topics import COMPACTED
from puerta.resolucion import resolver
from puerta.retencion import registro_retencion
from puerta.topico import LectorPuertas, escribir_estado, escribir_estados

pytestmark = pytest.mark.kafka

CLAVE = ClavePuerta(
    modelo="qwen",
    prompt_evaluador_sha256="b" * 64,
    criterios_version="3",
    modo_evaluador="veredicto",
)


def _estado(familia: str, abierta: bool, umbral: float | None = None, n: int = 30) -> EstadoPuerta:
    return EstadoPuerta(
        familia=familia,
        clave=CLAVE,
        abierta=abierta,
        umbral=umbral,
        objetivo=0.9,
        delta=0.05,
        n=n,
        k=0,
        origen_datos="prueba",
        motivo="certificada" if abierta else "cota_en_linea_bajo_objetivo",
        actualizada_en=datetime.now(UTC),
    )


async def _crear(bootstrap: str, topic: str, particiones: int = 3) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, particiones, 1, topic_configs=COMPACTED)])
    finally:
        await admin.close()


def _topic() -> str:
    return f"t{uuid.uuid4().hex[:8]}.fichas.puerta"


async def test_dos_lectores_ven_un_estado_escrito_en_segundos(kafka: KafkaBroker) -> None:
    topic = _topic()
    await _crear(kafka.bootstrap, topic)
    vistos: list[str] = []
    lectores = [LectorPuertas(topic, al_cambiar=vistos.append), LectorPuertas(topic)]
    for lector in lectores:
        await lector.start(settings_for(kafka.bootstrap))
    try:
        for lector in lectores:
            await asyncio.wait_for(lector.al_dia(), 30)
            assert lector.estados() == {}
        abierta = _estado("tv", True, 0.8)
        inicio = asyncio.get_running_loop().time()
        await escribir_estado(settings_for(kafka.bootstrap), abierta, topic)
        for lector in lectores:
            await until(
                lambda lector=lector: lector.estados().get(abierta.id) == abierta, 10, every=0.05
            )
        assert asyncio.get_running_loop().time() - inicio < 5
        cerrada = _estado("tv", False)
        await escribir_estado(settings_for(kafka.bootstrap), cerrada, topic)
        for lector in lectores:
            await until(
                lambda lector=lector: not lector.estados()[abierta.id].abierta, 10, every=0.05
            )
        assert vistos == [abierta.id, cerrada.id] == [abierta.id] * 2
    finally:
        for lector in lectores:
            await lector.stop()
    registros = await read_all(kafka.bootstrap, topic)
    assert [r["key"] for r in registros] == [abierta.id.encode()] * 2
    assert registros[0]["headers"] == [("esquema", b"EstadoPuerta"), ("esquema_version", b"1.6")]


async def test_un_lector_nuevo_arranca_del_estado_mas_reciente_por_clave(
    kafka: KafkaBroker,
) -> None:
    topic = _topic()
    await _crear(kafka.bootstrap, topic)
    historia = [
        _estado("tv", True, 0.9, n=30),
        _estado(FAMILIA_TODAS, True, 0.95, n=60),
        _estado("tv", True, 0.85, n=45),
        _estado("nevera", True, 0.7, n=31),
        _estado("tv", False),
        _estado("nevera", True, 0.75, n=50),
    ]
    await escribir_estados(settings_for(kafka.bootstrap), historia, topic)
    lector = LectorPuertas(topic)
    await lector.start(settings_for(kafka.bootstrap))
    try:
        await asyncio.wait_for(lector.al_dia(), 30)
        estados = lector.estados()
    finally:
        await lector.stop()
    assert estados == {e.id: e for e in (historia[1], historia[4], historia[5])}


async def test_lo_ilegible_cierra_su_puerta_y_solo_se_salta_lo_que_no_nombra_ninguna(
    kafka: KafkaBroker, caplog: pytest.LogCaptureFixture
) -> None:
    topic = _topic()
    await _crear(kafka.bootstrap, topic, particiones=1)
    bueno = _estado("tv", True, 0.8)
    otro = _estado("nevera", True, 0.7)
    clave, valor = bueno.id.encode(), bueno.model_dump_json().encode()
    siguiente_cierre = siguiente(
        EstadoPuerta, _estado("tv", False).model_dump(mode="json"), {"motivo": "deriva"}
    )
    await produce(
        kafka.bootstrap,
        topic,
        [
            (b"basura", b"{no es json"),  # names no gate: skipped
            (otro.id.encode(), otro.model_dump_json().encode()),
            (clave, b'{"familia": "tv"}'),  # not a whole EstadoPuerta: tv closed
            (otro.id.encode(), valor),  # a valid state under another gate's key: nevera closed
            (clave, valor),  # tv open again: the newest record per key decides
        ],  # (a record without a key the broker refuses on a compacted topic)
    )
    vistos: list[str] = []
    lector = LectorPuertas(topic, al_cambiar=vistos.append)
    await lector.start(settings_for(kafka.bootstrap))
    try:
        await asyncio.wait_for(lector.al_dia(), 30)
        assert lector.estados() == {bueno.id: bueno}
        assert lector.invalidos == 1 and set(lector.ilegibles()) == {otro.id}
        # still following: a closure of the next contract version closes tv at once
        await produce(kafka.bootstrap, topic, [(clave, json.dumps(siguiente_cierre).encode())])
        await until(lambda: lector.estados() == {}, 10, every=0.05)
        assert vistos[-1] == bueno.id
        await escribir_estado(settings_for(kafka.bootstrap), otro, topic)
        await until(lambda: otro.id in lector.estados(), 10, every=0.05)
    finally:
        await lector.stop()
    avisos = [r.getMessage() for r in caplog.records if "cannot be read" in r.getMessage()]
    assert len(avisos) == 3 and "'deriva'" in avisos[-1] and "closed until" in avisos[-1]


async def test_sin_topic_esta_al_dia_cerrado_y_lo_sigue_cuando_aparece(
    kafka: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("puerta.topico.ESPERA_TOPIC_S", 0.2)
    topic = _topic()
    lector = LectorPuertas(topic)
    await lector.start(settings_for(kafka.bootstrap))
    try:
        await asyncio.wait_for(lector.al_dia(), 30)
        assert lector.estados() == {}
        await _crear(kafka.bootstrap, topic)
        estado = _estado("tv", True, 0.8)
        await escribir_estado(settings_for(kafka.bootstrap), estado, topic)
        await until(lambda: lector.estados() == {estado.id: estado}, 20, every=0.05)
    finally:
        await lector.stop()


async def test_una_retencion_vive_en_su_clave_y_ninguna_apertura_la_pisa(
    kafka: KafkaBroker,
) -> None:
    """v1.5: a hold is written at the gate's hold id; an opening written after it (by a writer
    that had not read it yet) lands at the gate id and leaves it in force; a hold's value under
    the gate id is not that gate's state: it closes the gate (v1.6). Releasing is the hold id's
    newest record."""
    topic = _topic()
    await _crear(kafka.bootstrap, topic, particiones=1)
    retenida = registro_retencion("tv", CLAVE, True, "ana", "tallas nuevas", datetime.now(UTC))
    abierta = _estado("tv", True, 0.8)
    await escribir_estados(settings_for(kafka.bootstrap), [retenida, abierta], topic)
    await produce(
        kafka.bootstrap, topic, [(abierta.id.encode(), retenida.model_dump_json().encode())]
    )
    lector = LectorPuertas(topic)
    await lector.start(settings_for(kafka.bootstrap))
    try:
        await asyncio.wait_for(lector.al_dia(), 30)
        assert lector.estados() == {retenida.id: retenida}
        assert set(lector.ilegibles()) == {abierta.id} and lector.invalidos == 0
        assert resolver("tv", CLAVE, lector.estados()).razon == "retenida"
        liberada = registro_retencion("tv", CLAVE, False, "luis", None, datetime.now(UTC))
        await escribir_estado(settings_for(kafka.bootstrap), liberada, topic)
        await until(
            lambda: resolver("tv", CLAVE, lector.estados()).razon == "sin_registro",
            10,
            every=0.05,
        )
        await escribir_estado(settings_for(kafka.bootstrap), abierta, topic)
        await until(
            lambda: resolver("tv", CLAVE, lector.estados()).razon == "propia", 10, every=0.05
        )
    finally:
        await lector.stop()
    claves = [r["key"] for r in await read_all(kafka.bootstrap, topic)]
    assert claves == [
        id_retencion("tv", CLAVE).encode(),
        id_puerta("tv", CLAVE).encode(),
        id_puerta("tv", CLAVE).encode(),
        id_retencion("tv", CLAVE).encode(),
        id_puerta("tv", CLAVE).encode(),
    ]
