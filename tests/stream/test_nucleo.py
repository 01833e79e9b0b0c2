"""The worker's core in process (``harness.nucleo``): order, supersession, revoke, commit, DLQ,
flow control. Real lanes, ledger, handler and SQLite store; doubles for Kafka and the graph.

Each test names the mutation of the code that makes it fail; each was applied and seen to fail.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from harness.nucleo import nucleo, until
from stream.flow.retraso import LAG_INTERVAL_S


async def test_one_sku_runs_in_offset_order_while_other_skus_go_on(tmp_path: Path) -> None:
    """v1 of a SKU is held mid-run; v2..v4 queue behind it, another SKU finishes meanwhile;
    once v1 is released it is emitted first, v2 and v3 are obsolete, v4 comes last.

    Mutation: in ``Lanes.add`` start a task for every item (``if True:`` instead of
    ``if lane.task is None:``), so one SKU's events run concurrently.
    """
    async with nucleo(tmp_path) as n:
        gate = n.procesador.hold("A", 1)
        n.send("A", 1)
        await until(lambda: ("A", 1) in n.procesador.calls)
        for version in (2, 3, 4):
            n.send("A", version)
        n.send("B", 1, partition=1)
        await until(lambda: ("B", 1) in n.published())
        assert [p for p in n.published() if p[0] == "A"] == []
        gate.set()
        await until(lambda: ("A", 4) in n.published())
        assert [p for p in n.published() if p[0] == "A"] == [("A", 1), ("A", 4)]
        assert n.sensor.obsoletos == 2


async def test_a_newer_version_supersedes_queued_and_late_ones(tmp_path: Path) -> None:
    """v1..v3 fetched together: only v3 runs; a late v2 afterwards never reaches the graph.

    Mutation: ``versiones.dictamen_previo`` reads no stored version (the store's newer one not
    asked), so the late v2 is run by the graph (the claim then refuses it, but the LLM work is
    spent).
    A second mutation caught: ``_newest_waiting`` in stream/flow/lanes.py returns None.
    """
    async with nucleo(tmp_path) as n:
        await n.consumer.revoke([0])
        for version in (1, 2, 3):
            n.send("S", version)
        await n.consumer.assign([0])
        await until(lambda: n.published() == [("S", 3)])
        assert n.procesador.calls == [("S", 3)]
        late = n.send("S", 2)
        await until(lambda: (n.commits(0) or [0])[-1] == late + 1)
        assert n.procesador.calls == [("S", 3)] and n.published() == [("S", 3)]
        assert n.sensor.obsoletos == 3


async def test_revoke_mid_event_cancels_it_and_never_commits_past_it(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An event held mid-run when its partition is revoked: after the grace period its lane is
    cancelled, nothing is written for it, the commit stays at its offset; the queued event
    behind it is dropped, and the other partition goes on. The cancellation's log line says
    where the ficha waited (``infra.tasks.await_chain``), down to the held run.

    Mutation: in ``Lanes._step`` call ``self._inflight.finish`` instead of ``abandon`` on a
    cancellation, so the revoke's commit passes the unfinished offset.
    """
    async with nucleo(tmp_path, gracia_s=0.3) as n:
        n.procesador.hold("R", 1)
        held = n.send("R", 1)
        await until(lambda: ("R", 1) in n.procesador.calls)
        queued = n.send("R", 2)
        await until(lambda: (n.consumer.tps[0], queued) in n.consumer.fetched)
        with caplog.at_level(logging.WARNING, logger="stream.flow.lanes"):
            await n.consumer.revoke([0])
        (linea,) = [r.getMessage() for r in caplog.records if "waiting at" in r.getMessage()]
        assert linea.startswith("cancelling ") and "(R v1)" in linea
        assert "_run (nucleo.py:" in linea and linea.endswith("-> awaits Future"), linea
        assert n.published() == []
        assert all(offset <= held for offset in n.commits(0))
        assert n.worker._inflight.pending == 0 and n.worker._inflight.running() == 0
        n.send("Q", 1, partition=1)
        await until(lambda: n.published() == [("Q", 1)])


async def test_the_commit_never_passes_an_unfinished_offset(tmp_path: Path) -> None:
    """Offsets 1 and 2 finish while offset 0 is held: commits stay at 0; once 0 finishes the
    commit moves to 3.

    Mutation: in ``PartitionOffsets.committable`` (stream/commit/ledger.py) take
    ``target = self.highest_seen + 1`` whatever is pending, so the commit passes offset 0.
    """
    async with nucleo(tmp_path) as n:
        gate = n.procesador.hold("H", 1)
        n.send("H", 1)
        n.send("X", 1)
        n.send("Y", 1)
        await until(lambda: {("X", 1), ("Y", 1)} <= set(n.published()))
        await until(lambda: len(n.commits(0)) >= 1)
        assert max(n.commits(0)) == 0
        gate.set()
        await until(lambda: n.commits(0)[-1] == 3)


async def test_a_poison_event_goes_to_the_dlq_and_its_lane_goes_on(tmp_path: Path) -> None:
    """A run that always fails (not a transient failure) and a message that is not JSON both
    end in the DLQ; the SKU's next version is emitted and the commit passes all of them.

    Mutation: in ``Handler._handle_or_reject`` let ``FalloPermanente`` through (no
    ``except``), so the lane dies with the event instead of rejecting it.
    """
    async with nucleo(tmp_path) as n:
        n.procesador.poison.add("P")
        n.send("P", 1)
        await until(lambda: len(n.dlq()) == 1)
        n.procesador.poison.clear()
        n.send("P", 2)
        n.send_raw(b"{not json", key=b"P")
        await until(lambda: ("P", 2) in n.published() and len(n.dlq()) == 2)
        codes = [r["error"]["codigo"] for r in n.dlq()]
        assert codes == ["error_procesamiento", "json_invalido"]
        await until(lambda: (n.commits(0) or [0])[-1] == 3)
        # Counted once the write's transaction returned to the handler, a moment after the
        # records are visible (the transaction runs as a task of its own, stream.commit.emitter).
        await until(lambda: n.sensor.dlq == 2)


async def test_consumption_pauses_while_the_llm_is_down_and_resumes(tmp_path: Path) -> None:
    """LLM down: every partition is paused and nothing new is fetched; up again: the event
    waiting in the log is fetched and emitted.

    Mutation: in ``Worker._flow_control`` pause only on a full buffer (leave out
    ``or not self._procesador.health.is_up``).
    """
    async with nucleo(tmp_path) as n:
        n.procesador.health.mark_down()
        await until(lambda: n.consumer.paused() == n.consumer.assignment())
        n.send("D", 1)
        await asyncio.sleep(0.5)  # some twenty rounds of the poll loop
        assert n.consumer.fetched == [] and n.published() == []
        n.procesador.health.mark_up()
        await until(lambda: n.published() == [("D", 1)])
        assert n.consumer.paused() == set()


async def test_a_backlog_is_fetched_no_further_than_the_buffer_and_runs_no_wider_than_the_slots(
    tmp_path: Path,
) -> None:
    """200 events waiting, every run held: the worker fetches its buffer (twice
    ``FICHAS_CONCURRENCIA``, at least 8) and no more, with every partition paused, round after
    round of the poll loop, and runs ``FICHAS_CONCURRENCIA`` at once; released, the whole
    backlog goes through. The mechanism behind bounded memory on any backlog; the memory
    itself, 100,000 events against a real broker, is ``bench.backlog``'s figure.

    Mutations: in ``Worker.run`` fetch without the buffer's room (``max_records=10**6``: the
    first fetch takes all 200); in ``Worker._flow_control`` no pause on a full buffer (every
    round fetches one more); in ``Handler`` a ``graph_slots`` semaphore of 64 (all 8 buffered
    runs start).
    """
    backlog = 200
    async with nucleo(tmp_path) as n:
        buffer = n.worker._limit
        assert buffer == 2 * n.settings.concurrencia < backlog
        for i in range(backlog):
            n.procesador.hold(f"B{i:03d}", 1)
            n.send(f"B{i:03d}", 1, partition=i % 2)
        await until(lambda: len(n.procesador.calls) >= n.settings.concurrencia)
        polls = n.consumer.polls
        await until(lambda: n.consumer.polls >= polls + 20)  # twenty rounds of the poll loop
        assert len(n.consumer.fetched) == buffer
        assert n.consumer.paused() == n.consumer.assignment()
        assert len(n.procesador.calls) == n.settings.concurrencia
        for gate in n.procesador.gates.values():
            gate.set()
        await until(lambda: len(n.published()) == backlog, timeout=60)
        assert len(n.consumer.fetched) == backlog  # each event fetched once


async def test_stop_lets_a_lag_measurement_in_flight_end_before_the_consumer_stops(
    tmp_path: Path,
) -> None:
    """A lag measurement's ``committed()`` (an OffsetFetchRequest) is open when the worker is
    told to stop: the worker returns only once it was answered, so ``consumer.stop()`` never
    closes the coordinator's connection under it (aiokafka logs that at ERROR level).

    Mutation: drop ``await self._end_lag_measure()`` from ``Worker._drain``; the worker returns
    with the request still open.
    """
    async with nucleo(tmp_path) as n:
        n.consumer.hold_committed = asyncio.Event()
        await until(lambda: n.consumer.open_committed == 1, timeout=LAG_INTERVAL_S + 5)
        asyncio.get_running_loop().call_later(0.3, n.consumer.hold_committed.set)
        answered = n.consumer.answered_committed
    assert n.consumer.open_committed == 0
    assert n.consumer.answered_committed > answered  # answered, not cancelled


async def test_a_new_owner_skips_what_the_committed_metadata_lists_as_finished(
    tmp_path: Path,
) -> None:
    """Offset 0 is held while 1..3 are emitted (each in a transaction with its offset); the
    partition is revoked (0 cancelled after the grace period) and assigned again: only 0 is
    handled again, 1..3 are skipped, and every outcome is committed exactly once.

    Mutation: in ``PartitionOffsets.point`` leave the finished offsets out of the metadata
    (``encode(mark, [])``): 1..3 are handled again and published twice.
    """
    async with nucleo(tmp_path, gracia_s=0.3) as n:
        n.procesador.hold("H", 1)
        n.send("H", 1)
        for sku in ("X", "Y", "Z"):
            n.send(sku, 1)
        await until(lambda: {("X", 1), ("Y", 1), ("Z", 1)} <= set(n.published()))
        point = n.points(0)[-1]
        assert point.offset == 0 and point.metadata  # 1..3 listed above the watermark
        await n.consumer.revoke([0])
        assert n.published().count(("H", 1)) == 0
        n.procesador.gates.clear()
        await n.consumer.assign([0])
        await until(lambda: ("H", 1) in n.published())
        await until(lambda: (n.commits(0) or [0])[-1] == 4)
        assert sorted(n.published()) == [("H", 1), ("X", 1), ("Y", 1), ("Z", 1)]
        assert n.procesador.calls.count(("X", 1)) == 1


async def test_the_assignment_callback_returns_while_the_claim_waits_on_the_broker(
    tmp_path: Path,
) -> None:
    """aiokafka sends no heartbeat during ``on_partitions_assigned``: the callback must return
    at once however long the claim (fencing, reading the committed points) waits. While the
    claim waits the partition stays paused and nothing of it is fetched; once answered, it
    is fetched from the committed point. A revoke during a claim cancels it.

    Mutation: await ``_claim`` inside ``on_assigned``: the callback does not return.
    """
    async with nucleo(tmp_path) as n:
        n.send("A", 1)
        await until(lambda: ("A", 1) in n.published())
        await until(lambda: (n.commits(0) or [0])[-1] == 1)
        await n.consumer.revoke([0])
        n.send("B", 1)
        n.broker.hold_read = asyncio.Event()
        reads = n.broker.reads
        await asyncio.wait_for(n.consumer.assign([0]), timeout=1.0)
        polls = n.consumer.polls
        await until(lambda: n.consumer.polls >= polls + 5)  # the loop goes round meanwhile
        assert n.consumer.tps[0] in n.consumer.paused()
        assert ("B", 1) not in n.published() and n.broker.reads == reads
        fetched = len(n.consumer.fetched)
        await n.consumer.revoke([0])  # cancels the waiting claim
        await n.consumer.assign([0])
        n.broker.hold_read.set()
        await until(lambda: ("B", 1) in n.published())
        assert n.published() == [("A", 1), ("B", 1)]
        assert [o for tp, o in n.consumer.fetched[fetched:] if tp.partition == 0] == [1]
