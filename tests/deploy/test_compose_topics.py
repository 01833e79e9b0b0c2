"""docker-compose's `topics` service, run for real: its script against the real broker.

The script is taken from docker-compose.yml as compose would run it (``$$`` -> ``$``); only the
broker address, the tools' folder (Kafka's own CLI classes from the jars scripts/kafka.sh
fetched) and a unique prefix on the topic names change. One topic exists beforehand with the
wrong cleanup policy, as after an upgrade: the script must converge it.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
import uuid
from pathlib import Path

import pytest
import yaml
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from harness.kafka_broker import KafkaBroker
from infra.config import Settings
from infra.kafka.topics import topic_configs

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]


def _libs() -> Path:
    """The Kafka jars scripts/kafka.sh fetched (the broker fixture already needed them)."""
    script = (REPO / "scripts" / "kafka.sh").read_text(encoding="utf-8")
    encontrada = re.search(r'KAFKA_VERSION="\$\{FICHAS_KAFKA_VERSION:-([^}]+)\}"', script)
    assert encontrada, "scripts/kafka.sh no longer names its Kafka version"
    version = encontrada.group(1)
    cache = Path(os.environ.get("FICHAS_CACHE_DIR", REPO / ".cache"))
    return cache / "kafka" / os.environ.get("FICHAS_KAFKA_VERSION", version) / "libs"


def _herramientas(carpeta: Path) -> None:
    """kafka-topics.sh and kafka-configs.sh as in the image: Kafka's CLI main classes."""
    carpeta.mkdir()
    for nombre, clase in (
        ("kafka-topics.sh", "org.apache.kafka.tools.TopicCommand"),
        ("kafka-configs.sh", "org.apache.kafka.tools.ConfigCommand"),
    ):
        ruta = carpeta / nombre
        ruta.write_text(
            "#!/bin/sh\nexec java -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "
            f"-cp '{_libs()}/*' {clase} \"$@\"\n"
        )
        ruta.chmod(ruta.stat().st_mode | stat.S_IXUSR)


async def _configuraciones(bootstrap: str, topics: list[str]) -> dict[str, dict[str, str]]:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        respuestas = await admin.describe_configs(
            [ConfigResource(ConfigResourceType.TOPIC, t) for t in topics]
        )
    finally:
        await admin.close()
    return {
        nombre: {e[0]: e[1] for e in entradas}
        for r in respuestas
        for _, _, _, nombre, entradas in r.resources
    }


async def test_el_servicio_topics_crea_y_converge_la_configuracion(
    kafka: KafkaBroker, tmp_path: Path
) -> None:
    prefijo = f"c{uuid.uuid4().hex[:6]}"
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    guion = compose["services"]["topics"]["command"][0].replace("$$", "$")
    guion = guion.replace("/opt/kafka/bin/", f"{tmp_path / 'bin'}/")
    guion = guion.replace("kafka:9092", kafka.bootstrap)
    guion = re.sub(r"^crear (\S+)", rf"crear {prefijo}.\1", guion, flags=re.M)
    guion = re.sub(r"--topic (\S+)$", rf"--topic {prefijo}.\1", guion, flags=re.M)
    _herramientas(tmp_path / "bin")
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:  # an older deployment's catalogue topic, not compacted
        viejo = {"cleanup.policy": "delete"}
        publicadas = NewTopic(f"{prefijo}.fichas.publicadas", 1, 1, topic_configs=viejo)
        await admin.create_topics([publicadas])
    finally:
        await admin.close()

    proc = subprocess.run(
        ["bash", "-ec", guion],
        env=dict(os.environ, TOPIC_PARTICIONES="2"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr

    esperado = {f"{prefijo}.{t}": c for t, c in topic_configs(Settings()).items()}
    reales = await _configuraciones(kafka.bootstrap, sorted(esperado))
    for topic, config in esperado.items():
        assert {k: reales[topic][k] for k in config} == config, topic
    assert reales[f"{prefijo}.fichas.publicadas"]["cleanup.policy"] == "compact"
