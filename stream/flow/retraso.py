"""Lag and the age of the oldest waiting event, asked of the broker on a timer.

Computed per assigned partition from the broker's end offset and the group's committed offset
(not from what this worker fetched), so every assigned partition has a series from its
assignment on, and the figure keeps moving while the partition is paused (LLM down, buffer
full). The age of the oldest event not yet handled comes from the commit ledger.
"""

from __future__ import annotations

import logging
import time

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from stream.commit.ledger import Ledger
from stream.metricas.sensor import WorkerSensor

log = logging.getLogger(__name__)

LAG_INTERVAL_S = 5.0


async def informar_retraso(
    consumer: AIOKafkaConsumer, ledger: Ledger, sensor: WorkerSensor
) -> None:
    """One measurement of every assigned partition; a broker error skips this round."""
    assigned: list[TopicPartition] = sorted(consumer.assignment())
    if not assigned:
        return
    try:
        ends = await consumer.end_offsets(assigned)
        starts = await consumer.beginning_offsets(assigned)
        committed = {tp: await consumer.committed(tp) for tp in assigned}
    except KafkaError as exc:
        log.warning("lag not measured this round (%s)", exc)
        return
    now = time.time()
    for tp in assigned:
        base = committed[tp] if committed[tp] is not None else starts[tp]
        lag = max(0, ends[tp] - base)
        sensor.set_lag(tp.topic, tp.partition, lag)
        sensor.set_oldest_age(tp.topic, tp.partition, ledger.track(tp).oldest_age_s(lag, now))
