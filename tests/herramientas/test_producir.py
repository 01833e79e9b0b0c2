"""``fichas producir`` as a person runs it to feed a worker: real process, real broker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness import forkserver
from harness.entorno import entorno
from harness.eventos import evento_dict, evento_json
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, read_all

pytestmark = pytest.mark.kafka

REPO = Path(__file__).parents[2]


def _producir(
    args: list[str], kafka: KafkaBroker, topics: Topics, stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes]:
    env = entorno()
    env.update(topics.env(), FICHAS_KAFKA_BROKERS=kafka.bootstrap)
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "producir", *args],
        env=env,
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=120,
    )


def _plain(stderr: bytes) -> list[str]:
    return [line for line in stderr.decode().splitlines() if not line.startswith("{")]


def _feed(tmp_path: Path) -> Path:
    lines = [
        evento_json("PRO-1"),
        "{roto",
        "",
        evento_json("PRO-2", version=3),
        json.dumps(evento_dict("PRO-3", familia="tostadoras")),
    ]
    path = tmp_path / "feed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def test_producir_envia_las_validas_con_clave_sku_y_cuenta_las_invalidas(
    kafka: KafkaBroker, topics: Topics, tmp_path: Path
) -> None:
    await create_input_topic(kafka.bootstrap, topics.entrada)
    feed = _feed(tmp_path)
    proc = _producir([str(feed)], kafka, topics)
    assert proc.returncode == 0, proc.stderr.decode()
    registros = await read_all(kafka.bootstrap, topics.entrada)
    assert sorted((r["key"], r["value"]["sku"]) for r in registros) == [
        (b"PRO-1", "PRO-1"),
        (b"PRO-2", "PRO-2"),
    ]
    assert _plain(proc.stderr) == [
        "fichas producir: 1 blank line skipped",
        f"fichas producir: invalid line {feed}:2: json_invalido: JSON mal formado: se esperaba "
        "un nombre entre comillas (línea 1, col 2)",
        f"fichas producir: invalid line {feed}:5: familia_desconocida: familia 'tostadoras' no "
        "está en la tabla de familias (auriculares, botellas, camisetas, sartenes, zapatillas) "
        "(campo familia)",
        f"fichas producir: 2 events sent to {topics.entrada} on {kafka.bootstrap}; 2 invalid "
        "lines skipped",
    ]


async def test_producir_estricto_no_envia_nada(
    kafka: KafkaBroker, topics: Topics, tmp_path: Path
) -> None:
    await create_input_topic(kafka.bootstrap, topics.entrada)
    proc = _producir(["--estricto", str(_feed(tmp_path))], kafka, topics)
    assert proc.returncode == 2
    assert _plain(proc.stderr)[-1] == (
        "fichas producir: 2 invalid lines and --estricto: nothing sent"
    )
    assert await read_all(kafka.bootstrap, topics.entrada) == []


async def test_producir_desde_stdin(kafka: KafkaBroker, topics: Topics) -> None:
    await create_input_topic(kafka.bootstrap, topics.entrada)
    proc = _producir(["-"], kafka, topics, stdin=(evento_json("PRO-9") + "\n").encode())
    assert proc.returncode == 0, proc.stderr.decode()
    [registro] = await read_all(kafka.bootstrap, topics.entrada)
    assert registro["key"] == b"PRO-9"
