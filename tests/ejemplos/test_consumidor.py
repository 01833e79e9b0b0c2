"""ejemplos/consumidor.py as a subscriber runs it: a real process against the real broker."""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from esquemas import Ficha, FichaPublicada
from esquemas.wire import cabeceras_resultado
from harness.estados_puerta import clave_fake
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics
from harness.version_siguiente import completos, siguiente
from infra.kafka.topics import COMPACTED

pytestmark = pytest.mark.kafka

REPO = Path(__file__).resolve().parents[2]
Record = tuple[str, bytes, list[tuple[str, bytes]]]


def _publicada(sku: str, version: int, event_id: str | None = None) -> dict[str, Any]:
    ficha = Ficha(titulo=f"{sku} v{version}", descripcion="Una ficha.", atributos={})
    valor = FichaPublicada(
        event_id=event_id or f"{sku}-v{version}",
        sku=sku,
        version=version,
        familia="botellas",
        ficha=ficha,
        intentos=1,
        criterios_version="v1",
        modelo="m",
        publicada_en=datetime(2026, 11, 30, tzinfo=UTC),
    )
    return valor.model_dump(mode="json", exclude={"origen"})


# A FichaPublicada as the contract's next minor version could write it (v1.6, "Readers never
# fail open"): every object with a field the schema does not name, and a value new to each of
# its closed lists (the person's decision kind, the evaluator mode of the key).
SIGUIENTE = siguiente(
    FichaPublicada,
    completos(clave_fake(), sku="E")["FichaPublicada"],
    {"revision.decision": "aprobada_ciega", "clave.modo_evaluador": "jurado"},
)


def _record(valor: dict[str, Any], **cabeceras: str) -> Record:
    """A record as the worker writes it (headers from esquemas.wire), headers overridable."""
    propias = dict(cabeceras_resultado("fichas.publicadas", valor))
    propias.update({k: v.encode() for k, v in cabeceras.items()})
    return valor["sku"], json.dumps(valor).encode(), list(propias.items())


async def _escribir(bootstrap: str, topic: str, records: list[Record]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all")
    await producer.start()
    try:
        for sku, valor, cabeceras in records:
            await producer.send_and_wait(topic, valor, key=sku.encode(), headers=cabeceras)
    finally:
        await producer.stop()


class _Lineas:
    """The consumer's stdout lines, read by a thread (select() misses lines already buffered)."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self._proc = proc
        self._cola: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._leer, daemon=True).start()

    def _leer(self) -> None:
        assert self._proc.stdout is not None
        for linea in self._proc.stdout:
            self._cola.put(linea)
        self._cola.put("")

    def siguiente(self, timeout: float = 60) -> dict[str, Any]:
        """The next JSON line the consumer prints."""
        try:
            linea = self._cola.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError("the consumer printed nothing") from None
        if not linea:
            self._proc.wait(timeout=30)
            stderr = self._proc.stderr.read() if self._proc.stderr else ""
            raise AssertionError(f"the consumer exited ({self._proc.returncode}):\n{stderr}")
        return dict(json.loads(linea))


def _catalogo(ruta: Path) -> dict[str, int]:
    return {sku: f["version"] for sku, f in json.loads(ruta.read_text()).items()}


async def test_reconstruye_el_catalogo_y_sigue_en_vivo(kafka: KafkaBroker, tmp_path: Path) -> None:
    topic = Topics().publicadas
    admin = AIOKafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 2, 1, topic_configs=COMPACTED)])
    finally:
        await admin.close()
    a2 = _publicada("A", 2)
    await _escribir(
        kafka.bootstrap,
        topic,
        [
            _record(_publicada("A", 1)),
            _record(a2),
            _record(a2),  # a redelivery: same event_id, same bytes
            _record(_publicada("B", 3)),
            _record(_publicada("B", 2, event_id="B-tarde")),  # older version, arrived later
            _record(_publicada("C", 9), esquema_version="2.0"),  # a major this code predates
            _record(_publicada("C", 8) | {"ficha": None}, event_id="C-roto"),  # fails the schema
            _record(_publicada("C", 1)),
            # the next minor version: a field at every level, values its lists do not hold
            _record(SIGUIENTE, esquema_version="1.7"),
        ],
    )
    salida = tmp_path / "catalogo.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "ejemplos/consumidor.py",
            "--brokers",
            kafka.bootstrap,
            "--topic",
            topic,
            "--salida",
            str(salida),
        ],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lineas = _Lineas(proc)
    try:
        al_dia = lineas.siguiente()
        assert al_dia == {
            "evento": "al_dia",
            "skus": 4,
            "leidos": 9,
            "duplicados": 1,
            "antiguos": 1,
            "ajenos": 1,
            "invalidos": 1,
            "desconocidos": 1,
        }
        assert _catalogo(salida) == {"A": 2, "B": 3, "C": 1, "E": 1}
        assert json.loads(salida.read_text())["E"] == SIGUIENTE
        # Live: new versions update the catalogue; a repeated one changes nothing.
        a3 = _publicada("A", 3)
        await _escribir(
            kafka.bootstrap, topic, [_record(a3), _record(a3), _record(_publicada("D", 1))]
        )
        cambios = sorted((lineas.siguiente(), lineas.siguiente()), key=lambda c: c["sku"])
        assert cambios == [
            {"evento": "cambio", "sku": "A", "version": 3},
            {"evento": "cambio", "sku": "D", "version": 1},
        ]
        deadline = time.monotonic() + 10
        while _catalogo(salida) != {"A": 3, "B": 3, "C": 1, "D": 1, "E": 1}:
            assert time.monotonic() < deadline, _catalogo(salida)
            time.sleep(0.2)
        assert json.loads(salida.read_text())["A"] == a3
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    stderr = proc.stderr.read() if proc.stderr else ""
    assert proc.returncode == 0, stderr
    assert "skipping offset" in stderr  # the invalid record is reported, not fatal
