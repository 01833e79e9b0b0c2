"""``python -m bench.transacciones``: what committing the offset inside an emit's transaction
costs, in milliseconds per emit (p50, p95), on a private local broker.

Three ways of writing one outcome record through ``stream.commit.emitter.Emitter`` (one input
partition, one producer, emits one after another as a partition's emits are serialized):

* ``sin_offset``: the record alone in its transaction (the emit before offsets went in it);
* ``con_offset``: the record and the consumed offset (``send_offsets_to_transaction``: watermark
  and metadata) in one transaction, as the worker writes since v1.4;
* ``solo_offset``: an offsets-only transaction (what the worker runs every second for work
  that wrote nothing).

The two rounds are interleaved (a block of each in turn) so that a busy machine weighs on
both alike. See docs/rendimiento.md for the figures and the machine. Afterwards it checks what
it timed happened: every record sent is visible to a read_committed reader and the group's
committed offset is past every offset handled; else it exits 1. ``--bootstrap`` uses a
running broker instead of a private one.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

from aiokafka import TopicPartition
from aiokafka.admin import NewTopic
from aiokafka.structs import OffsetAndMetadata

from estadistica import percentile
from harness.kafka_broker import KafkaBroker
from harness.topicos import committed_offsets, read_all
from infra.config import Settings
from infra.kafka.clients import build_admin, build_producer
from infra.network import free_port
from stream.commit.emitter import Emitter
from stream.commit.producers import Record


async def _medir_en(bootstrap: str, n: int, bloque: int) -> tuple[dict[str, list[float]], str]:
    """Create the two topics (one partition each), measure, then check (``comprobar``)."""
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    admin = build_admin(Settings(kafka_brokers=bootstrap))
    await admin.start()
    try:
        await admin.create_topics(
            [NewTopic(f"{prefix}.{name}", 1, 1) for name in ("entrada", "salida")]
        )
    finally:
        await admin.close()
    tiempos = await medir(bootstrap, prefix, n, bloque)
    return tiempos, await comprobar(bootstrap, prefix, tiempos)


async def comprobar(bootstrap: str, prefix: str, tiempos: dict[str, list[float]]) -> str:
    """What the run wrote, against what it timed: "" when both hold, else what differs.

    One untimed emit, then each ``sin_offset`` and ``con_offset`` emit wrote one record; every
    offset handled (one per emit, the untimed one included) is below the committed point.
    """
    enviados = 1 + len(tiempos["sin_offset"]) + len(tiempos["con_offset"])
    manejados = 1 + sum(len(v) for v in tiempos.values())
    visibles = len(await read_all(bootstrap, f"{prefix}.salida"))
    comprometido = (await committed_offsets(bootstrap, prefix, f"{prefix}.entrada")).get(0)
    if visibles == enviados and comprometido == manejados:
        return ""
    return (
        f"{visibles} records committed of {enviados} sent; "
        f"committed offset {comprometido}, expected {manejados}"
    )


async def medir(bootstrap: str, prefix: str, n: int, bloque: int) -> dict[str, list[float]]:
    """``n`` emits of each kind, in blocks of ``bloque``; milliseconds per emit."""
    settings = Settings(kafka_brokers=bootstrap)
    entrada = TopicPartition(f"{prefix}.entrada", 0)
    salida = f"{prefix}.salida"
    emitter = Emitter(
        lambda txn_id: build_producer(settings, txn_id),
        prefix,
        reader=lambda tps: _nada(tps),
    )
    tiempos: dict[str, list[float]] = {"sin_offset": [], "con_offset": [], "solo_offset": []}
    await emitter.claim({entrada})
    ledger = emitter.ledger
    offset = 0
    try:
        # One round untimed: topic metadata, coordinators and connections are warm after it.
        ledger.received(entrada, offset)
        await emitter.send(entrada, [_record(salida, 0)], offset)
        offset += 1
        while len(tiempos["con_offset"]) < n:
            for kind in ("sin_offset", "con_offset", "solo_offset"):
                for _ in range(bloque):
                    # sin_offset leaves the ledger alone: no commit point changes, so the
                    # emitter sends no offsets in its transaction.
                    if kind != "sin_offset":
                        ledger.received(entrada, offset)
                    started = time.perf_counter()
                    if kind == "sin_offset":
                        await emitter.send(entrada, [_record(salida, offset)])
                    elif kind == "con_offset":
                        await emitter.send(entrada, [_record(salida, offset)], offset)
                    else:
                        ledger.done(entrada, offset)
                        await emitter.commit()
                    tiempos[kind].append((time.perf_counter() - started) * 1000)
                    offset += 1
    finally:
        await emitter.close()
    return tiempos


async def _nada(tps: set[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
    return {}


def _record(topic: str, n: int) -> Record:
    value = f'{{"event_id": "e{n}", "sku": "S{n % 97}", "version": 1}}'.encode()
    return Record(topic, value, f"S{n % 97}".encode(), [])


def main(argv: list[str] | None = None) -> int:
    """Start a private broker, measure, print one line per kind."""
    parser = argparse.ArgumentParser(prog="python -m bench.transacciones")
    parser.add_argument("--n", type=int, default=300, help="emits of each kind")
    parser.add_argument("--bloque", type=int, default=25, help="emits of one kind in a row")
    parser.add_argument("--bootstrap", help="a running broker to use instead of a private one")
    args = parser.parse_args(argv)
    if args.bootstrap:
        tiempos, fallo = asyncio.run(_medir_en(args.bootstrap, args.n, args.bloque))
    else:
        with tempfile.TemporaryDirectory(prefix="fichas-bench-txn-") as folder:
            broker = KafkaBroker(free_port(), Path(folder) / "kafka", controller_port=free_port())
            broker.start()
            try:
                tiempos, fallo = asyncio.run(_medir_en(broker.bootstrap, args.n, args.bloque))
            finally:
                broker.stop()
    for kind, values in tiempos.items():
        print(
            f"{kind}: n={len(values)} p50={percentile(values, 0.5):.1f} ms "
            f"p95={percentile(values, 0.95):.1f} ms"
        )
    if fallo:
        print(f"check failed: {fallo}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
