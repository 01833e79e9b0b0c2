"""Every Kafka client of the product is built in ``infra.kafka.clients``, from ``client_options``.

What a change of the connection options (TLS, SASL) relies on: an option added to
``client_options`` reaches every client the worker, the review app, the gate topic and the
tools build, and no product module builds a client anywhere else.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from infra.config import Settings
from infra.kafka import clients as kafka
from infra.kafka.clients import PointsUnavailable, committed_points
from stream.flow.fallos import es_transitorio

REPO = Path(__file__).parents[2]
PRODUCTO = (
    "esquemas", "criterios", "migraciones", "estadistica", "infra", "grafo", "stream", "puerta",
    "revision", "herramientas",
)  # fmt: skip
CONSTRUCTORES = {"AIOKafkaConsumer", "AIOKafkaProducer", "AIOKafkaAdminClient"}


def _llamadas_a_constructores(archivo: Path) -> list[int]:
    """The lines of ``archivo`` that call an aiokafka client's constructor."""
    lineas = []
    for nodo in ast.walk(ast.parse(archivo.read_text(encoding="utf-8"))):
        if isinstance(nodo, ast.Call):
            nombre = getattr(nodo.func, "id", None) or getattr(nodo.func, "attr", None)
            if nombre in CONSTRUCTORES:
                lineas.append(nodo.lineno)
    return lineas


def test_ningun_paquete_del_producto_construye_un_cliente_fuera_de_infra_kafka() -> None:
    fuera = [
        f"{archivo.relative_to(REPO)}:{linea}"
        for paquete in PRODUCTO
        for archivo in sorted((REPO / paquete).rglob("*.py"))
        if archivo != REPO / "infra" / "kafka" / "clients.py"
        for linea in _llamadas_a_constructores(archivo)
    ]
    assert fuera == []
    assert _llamadas_a_constructores(REPO / "infra" / "kafka" / "clients.py")  # the scan sees calls


def _cliente(construido: Any) -> Any:
    """The aiokafka connection client inside a consumer, a producer or an admin client."""
    if isinstance(construido, AIOKafkaProducer):
        return construido.client
    assert isinstance(construido, AIOKafkaConsumer | AIOKafkaAdminClient)
    return construido._client


async def test_una_opcion_de_client_options_llega_a_cada_cliente(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SASL added in ``client_options`` alone is in every client's connection settings."""

    def con_sasl(settings: Settings) -> dict[str, Any]:
        return {
            "bootstrap_servers": settings.kafka_brokers,
            "security_protocol": "SASL_PLAINTEXT",
            "sasl_mechanism": "PLAIN",
            "sasl_plain_username": "fichas",
            "sasl_plain_password": "secreto",
        }

    monkeypatch.setattr(kafka, "client_options", con_sasl)
    settings = Settings(kafka_brokers="kafka-1:9093")
    clientes = [
        kafka.build_admin(settings),
        kafka.build_consumer(settings),
        kafka.build_producer(settings, "grupo.entrada.0"),
        kafka.build_writer(settings, client_id="fichas-puerta"),
        kafka.build_reader(settings),
        kafka.build_group_reader(settings, "grupo-revisor", "fichas.revision_manual"),
    ]
    for construido in clientes:
        conexion = _cliente(construido)
        assert conexion._bootstrap_servers == "kafka-1:9093", construido
        assert conexion._security_protocol == "SASL_PLAINTEXT", construido
        assert conexion._sasl_plain_username == "fichas", construido
    for construido in clientes:
        await (
            construido.close() if isinstance(construido, AIOKafkaAdminClient) else construido.stop()
        )


async def test_los_ajustes_que_importan_para_la_correccion_siguen_en_su_constructor() -> None:
    """Pinned through the move out of ``stream``: the worker's consumer never commits and offers
    range alone (docs/stream.md, "One writer per SKU"); its producers are transactional, 10 s,
    all replicas' acks; every other writer is idempotent; readers of the worker's output read
    committed records only."""
    settings = Settings(kafka_brokers="kafka-1:9093", grupo="fichas-x")
    consumidor = kafka.build_consumer(settings)
    assert consumidor._enable_auto_commit is False and consumidor._group_id == "fichas-x"
    assert consumidor._partition_assignment_strategy == (RangePartitionAssignor,)
    assert (consumidor._session_timeout_ms, consumidor._max_poll_interval_ms) == (10_000, 300_000)
    productor = kafka.build_producer(settings, "fichas-x.entrada.0")
    assert productor._txn_manager.transactional_id == "fichas-x.entrada.0"
    assert productor._txn_manager.transaction_timeout_ms == 10_000
    assert productor._sender._acks == -1  # "all"
    escritor = kafka.build_writer(settings)
    assert escritor._txn_manager is not None and escritor._sender._acks == -1  # idempotent
    assert escritor._txn_manager.transactional_id is None
    lector = kafka.build_reader(settings)
    assert lector._isolation_level == "read_committed" and lector._group_id is None
    grupo = kafka.build_group_reader(settings, "fichas-x-revisor", "t")
    assert grupo._isolation_level == "read_committed" and grupo._enable_auto_commit is False
    for construido in (consumidor, lector, grupo):
        await construido.stop()
    for construido in (productor, escritor):
        await construido.stop()


class _AdminDouble:
    """Answers OffsetFetch as aiokafka does: only the partitions the broker listed."""

    def __init__(self, answer: dict[TopicPartition, OffsetAndMetadata]) -> None:
        self.answer = answer

    async def list_consumer_group_offsets(
        self, group: str, partitions: list[TopicPartition]
    ) -> dict[TopicPartition, OffsetAndMetadata]:
        return dict(self.answer)


async def test_una_respuesta_sin_particiones_es_un_fallo_transitorio() -> None:
    """A group-level error (coordinator loading after a restart) comes without partitions;
    read as "nothing committed" it would replay the partitions from their start."""
    tp0, tp1 = TopicPartition("t", 0), TopicPartition("t", 1)
    admin: Any = _AdminDouble({})
    with pytest.raises(PointsUnavailable) as caught:
        await committed_points(admin, "g", {tp0, tp1})
    assert es_transitorio(caught.value)
    assert "t-0, t-1" in str(caught.value)

    admin.answer = {tp0: OffsetAndMetadata(7, "v1:"), tp1: OffsetAndMetadata(-1, "")}
    assert await committed_points(admin, "g", {tp0, tp1}) == admin.answer
    admin.answer = {tp0: OffsetAndMetadata(7, "v1:")}
    with pytest.raises(PointsUnavailable, match="t-1"):
        await committed_points(admin, "g", {tp0, tp1})
