"""The commit rule: never past a message still in flight (the faust issue 606 scenario)."""

from __future__ import annotations

import asyncio
import random

from aiokafka import TopicPartition

from stream.offsets import Ledger, PartitionOffsets


def test_nada_recibido_nada_que_confirmar() -> None:
    assert PartitionOffsets().committable() is None


def test_cabeza_en_curso_bloquea_el_commit() -> None:
    offsets = PartitionOffsets()
    for offset in range(2684, 2689):
        offsets.received(offset)
    for offset in range(2685, 2689):  # everything but the slow head is done
        offsets.done(offset)
    assert offsets.committable() == 2684  # the head is still in flight: commit up to it only
    offsets.done(2684)
    assert offsets.committable() == 2689


def test_hueco_en_medio() -> None:
    offsets = PartitionOffsets()
    for offset in (10, 11, 12, 13):
        offsets.received(offset)
    offsets.done(10)
    offsets.done(12)
    offsets.done(13)
    assert offsets.committable() == 11


def test_no_repite_un_commit_ya_hecho() -> None:
    offsets = PartitionOffsets()
    offsets.received(0)
    offsets.done(0)
    assert offsets.committable() == 1
    offsets.mark_committed(1)
    assert offsets.committable() is None
    offsets.received(1)
    assert offsets.committable() is None  # 1 is in flight: nothing new to commit
    offsets.done(1)
    assert offsets.committable() == 2


def test_aleatorio_nunca_pasa_de_un_pendiente() -> None:
    rng = random.Random(606)
    offsets = PartitionOffsets()
    pending: set[int] = set()
    committed = -1
    for offset in range(2000):
        offsets.received(offset)
        pending.add(offset)
        for done in rng.sample(sorted(pending), k=min(len(pending), rng.randint(0, 3))):
            offsets.done(done)
            pending.discard(done)
        target = offsets.committable()
        if target is not None:
            assert all(p >= target for p in pending)
            assert target > committed
            offsets.mark_committed(target)
            committed = target


async def test_un_commit_en_vuelo_sobrevive_al_olvido_de_su_particion() -> None:
    """The periodic commit and a revoke run concurrently: the revoke may forget a partition
    while the commit of its offset is on the wire; the commit must not fail for that."""
    tp = TopicPartition("t", 0)
    on_the_wire = asyncio.Event()
    release = asyncio.Event()

    class Consumer:
        def __init__(self) -> None:
            self.committed: dict[TopicPartition, int] = {}

        async def commit(self, offsets: dict[TopicPartition, int]) -> None:
            on_the_wire.set()
            await release.wait()
            self.committed.update(offsets)

    consumer = Consumer()
    ledger = Ledger(consumer)  # type: ignore[arg-type]
    ledger.received(tp, 0)
    ledger.done(tp, 0)
    commit = asyncio.create_task(ledger.commit())
    await on_the_wire.wait()
    ledger.forget([tp])
    release.set()
    await commit
    assert consumer.committed == {tp: 1}
    assert ledger.partitions() == set()
