"""The commit rule: never past a message still in flight (the faust issue 606 scenario), and
every finished offset above the watermark in the metadata (Parallel Consumer's 436/466)."""

from __future__ import annotations

import random

import pytest
from aiokafka import TopicPartition
from aiokafka.structs import OffsetAndMetadata

from stream.commit.ledger import Ledger, PartitionOffsets
from stream.commit.metadata import (
    BROKER_METADATA_MAX,
    MAX_FETCH,
    PREFIX,
    WINDOW,
    decode,
    encode,
    max_length,
)

TP = TopicPartition("t", 0)


# ---------------------------------------------------------------- the metadata's encoding


def test_sin_terminados_sobre_la_marca_la_metadata_es_vacia() -> None:
    assert encode(10, []) == ""
    assert encode(10, [3, 9, 10]) == ""  # at or below the watermark: nothing to say
    assert decode(10, "") == set()


@pytest.mark.parametrize("seed", range(20))
def test_ida_y_vuelta(seed: int) -> None:
    rng = random.Random(seed)
    watermark = rng.randint(0, 10**12)
    finished = {watermark + 1 + rng.randrange(WINDOW) for _ in range(rng.randint(1, 500))}
    metadata = encode(watermark, finished)
    assert metadata.startswith(PREFIX)
    assert decode(watermark, metadata) == finished


def test_el_primer_bit_es_la_marca_mas_uno() -> None:
    assert encode(100, [101]) == PREFIX + "AQ=="  # 0b00000001
    assert encode(100, [108]) == PREFIX + "gA=="  # bit 7: 0b10000000
    assert encode(100, [109]) == PREFIX + "AAE="  # bit 8: the second byte's bit 0
    assert decode(100, PREFIX + "gQ==") == {101, 108}


def test_metadata_ajena_o_rota_no_salta_nada() -> None:
    assert decode(5, "written by another tool") == set()
    assert decode(5, PREFIX + "%%%not base64") == set()


def test_la_ventana_mas_una_lectura_cabe_bajo_el_limite_del_broker() -> None:
    """The window's arithmetic: a span of WINDOW + MAX_FETCH offsets, every one finished (the
    worst bitset), stays under the broker's 4096 bytes, with room to spare."""
    span = WINDOW + MAX_FETCH
    worst = encode(0, range(1, span + 1))
    assert len(worst.encode("ascii")) == max_length(span) == 1711
    assert max_length(span) < BROKER_METADATA_MAX
    assert decode(0, worst) == set(range(1, span + 1))


# ---------------------------------------------------------------- the watermark rule


def test_nada_recibido_nada_que_confirmar() -> None:
    assert PartitionOffsets().point() is None


def test_cabeza_en_curso_bloquea_la_marca_y_lo_terminado_va_en_la_metadata() -> None:
    offsets = PartitionOffsets()
    for offset in range(2684, 2689):
        offsets.received(offset)
    for offset in range(2685, 2689):  # everything but the slow head is done
        offsets.done(offset)
    point = offsets.point()
    assert point is not None and point.offset == 2684  # the head is in flight: no further
    assert decode(point.offset, point.metadata) == {2685, 2686, 2687, 2688}
    offsets.done(2684)
    assert offsets.point() == OffsetAndMetadata(2689, "")


def test_la_marca_cuenta_como_terminado_el_offset_de_su_transaccion() -> None:
    offsets = PartitionOffsets()
    for offset in (10, 11, 12, 13):
        offsets.received(offset)
    offsets.done(12)
    point = offsets.point(finishing=10)
    assert point is not None and point.offset == 11
    assert decode(11, point.metadata) == {12}
    assert offsets.pending == {10, 11, 13}  # nothing is finished before the commit


def test_restaurar_salta_lo_terminado_y_lo_conserva_hasta_leerlo() -> None:
    """The previous owner committed watermark 20 with 22 and 25 finished. The new owner skips
    them when fetched, and until it has fetched 25 its own commits still list it."""
    offsets = PartitionOffsets()
    offsets.restore(OffsetAndMetadata(20, encode(20, [22, 25])))
    assert offsets.received(20)
    assert offsets.received(21)
    assert not offsets.received(22)  # finished: skipped, never handled
    offsets.done(21)
    point = offsets.point()
    assert point is not None and point.offset == 20
    assert decode(20, point.metadata) == {21, 22, 25}  # 25 kept though not fetched yet
    offsets.done(20)
    assert offsets.point() == OffsetAndMetadata(23, encode(23, [25]))
    assert offsets.received(23) and offsets.received(24)
    assert not offsets.received(25)
    offsets.done(23)
    offsets.done(24)
    assert offsets.point() == OffsetAndMetadata(26, "")


def test_sin_pendientes_la_marca_pasa_lo_heredado_contiguo() -> None:
    offsets = PartitionOffsets()
    offsets.restore(OffsetAndMetadata(5, encode(5, [6, 7, 9])))
    assert offsets.received(5)
    offsets.done(5)
    assert offsets.point() == OffsetAndMetadata(8, encode(8, [9]))


def test_una_relectura_no_se_maneja_dos_veces() -> None:
    """A batch fetched before the assignment's seek, then the same offsets again."""
    offsets = PartitionOffsets()
    offsets.restore(OffsetAndMetadata(3, ""))
    assert not offsets.received(1)  # below the committed watermark
    assert offsets.received(3)
    assert not offsets.received(3)  # fetched again after the seek
    assert offsets.pending == {3}


def test_nada_comprometido_empieza_en_el_primero_leido() -> None:
    offsets = PartitionOffsets()
    offsets.restore(OffsetAndMetadata(-1, ""))
    assert offsets.point() is None
    assert offsets.received(0)
    offsets.done(0)
    assert offsets.point() == OffsetAndMetadata(1, "")


def test_ventana_llena() -> None:
    offsets = PartitionOffsets()
    offsets.received(0)  # the head stays in flight
    for offset in range(1, WINDOW):
        offsets.received(offset)
        offsets.done(offset)
    assert not offsets.window_full()
    offsets.received(WINDOW)
    assert offsets.window_full()
    offsets.done(0)
    assert not offsets.window_full()


def test_aleatorio_nunca_pasa_de_un_pendiente_y_lista_todo_lo_terminado() -> None:
    """2000 offsets finishing in random order, some finished by a transaction, some skipped by
    a restart in the middle: every point is at or below the smallest pending offset, lists
    exactly the finished offsets above it, and never goes back."""
    rng = random.Random(606)
    offsets = PartitionOffsets()
    finished: set[int] = set()
    pending: set[int] = set()
    committed = -1
    offset = 0
    while offset < 2000:
        if rng.random() < 0.01:  # a restart from the last committed point
            restored = PartitionOffsets()
            restored.restore(offsets.committed)
            offsets, pending, offset = restored, set(), max(committed, 0)
        if offsets.received(offset):
            pending.add(offset)
        else:
            assert offset in finished
        offset += 1
        for done in rng.sample(sorted(pending), k=min(len(pending), rng.randint(0, 3))):
            finishing = done if rng.random() < 0.5 else None
            if finishing is None:
                offsets.done(done)
            point = offsets.point(finishing)
            if finishing is not None:
                offsets.done(done)
            pending.discard(done)
            finished.add(done)
            assert point is not None
            assert all(p >= point.offset for p in pending)
            assert point.offset >= committed
            listed = decode(point.offset, point.metadata)
            assert listed == {f for f in finished if f > point.offset}
            assert all(f in finished for f in range(point.offset))
            offsets.mark_committed(point)
            committed = point.offset


def test_propuesta_y_confirmacion() -> None:
    """A transaction's proposal counts its offset as finished; the ledger marks it finished
    only on ``confirm`` (the transaction committed)."""
    ledger = Ledger()
    ledger.restore(TP, None)
    assert ledger.received(TP, 0) and ledger.received(TP, 1)
    ledger.confirm(ledger.propose([TP]))  # an offsets-only commit at 0
    points = ledger.propose([TP], {TP: 0})
    assert points == {TP: OffsetAndMetadata(1, "")}
    assert ledger.propose([TP]) == {}  # an aborted transaction changed nothing
    ledger.confirm(points, {TP: 0})
    assert ledger.committed(TP) == OffsetAndMetadata(1, "")
    assert ledger.propose([TP]) == {}  # nothing new
    ledger.done(TP, 1)  # finished, wrote nothing
    assert ledger.propose([TP]) == {TP: OffsetAndMetadata(2, "")}


def test_sin_restaurar_no_se_recibe() -> None:
    """Messages fetched before the assignment restored the partition are not handled (the
    seek fetches them again)."""
    ledger = Ledger()
    assert not ledger.received(TP, 0)
    ledger.restore(TP, None)
    assert ledger.received(TP, 0)


def test_confirmar_tras_olvidar_no_falla() -> None:
    """A revoke may forget a partition while its transaction is on the wire."""
    ledger = Ledger()
    ledger.restore(TP, None)
    ledger.received(TP, 0)
    points = ledger.propose([TP], {TP: 0})
    ledger.forget([TP])
    ledger.confirm(points, {TP: 0})
    assert ledger.partitions() == set()
