"""Kafka plumbing of the worker: topic creation and client construction in one place.

Client settings that matter for correctness live here: no auto-commit (the worker commits
only what ``offsets`` allows), ``acks="all"`` with idempotence for outcomes, and consumer
timeouts sized for LLM calls that take a minute while the poll loop keeps heartbeating.

Start-up against a broker that does not answer: the worker retries for ``BROKER_WAIT_S`` with a
WARNING per try naming the servers and the cause, then raises ``BrokerUnreachable`` (``fichas
worker`` exits 4). Why a bound and why this one: in Kubernetes a process that exits is
restarted with growing back-off and shows as CrashLoopBackOff, which on-call sees; one that
waits forever looks "starting" for ever. 60 s rides over a broker's rolling restart or leader
election; longer outages are the orchestrator's to retry. Once started, aiokafka reconnects
by itself and the worker never exits for the broker.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.errors import KafkaConnectionError, TopicAlreadyExistsError
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from infra.config import Settings

log = logging.getLogger(__name__)

BROKER_WAIT_S = 60.0
TRANSACTION_TIMEOUT_MS = 10_000
BROKER_RETRY_S = 5.0


class BrokerUnreachable(RuntimeError):
    """No broker of ``FICHAS_KAFKA_BROKERS`` answered within ``BROKER_WAIT_S`` at start-up."""


class ParticionesDistintas(RuntimeError):
    """``fichas.decisiones`` and the input topic have different partition counts: a SKU's
    decisions would not reach the worker that owns its events (``stream.decisiones``)."""


class GrupoIncompatible(RuntimeError):
    """Another member of the consumer group offers no assignor this worker offers (a worker
    from before v1.4, on round robin): the broker refuses this worker's join."""

    def __init__(self, grupo: str) -> None:
        super().__init__(
            f"the consumer group {grupo} (FICHAS_GRUPO) has members that offer no range "
            "assignor: workers from before v1.4 (round robin) are still running. v1.4 workers "
            "need range (a SKU's decisions with its events) and can not join them; stop the "
            "old workers, then start the new ones (docs/operacion.md, 'Upgrading to v1.4')"
        )


# The group's one assignor. Range gives partition p of every subscribed topic to the same member
# when the topics have equal partition counts (aiokafka's RangePartitionAssignor lays each
# topic's partitions out in order over the members sorted by id), which puts a SKU's decisions
# with its events. Only one: aiokafka 0.14 sends one JoinGroup per assignor it offers (the
# request is inside its loop over the assignors, ``CoordinatorGroupRebalance.perform_group_join``),
# so with two every join changed the member's protocols while the group was completing a
# rebalance; the broker logged "Updating metadata for member ... during CompletingRebalance" and
# started another, and with three members the group rebalanced every 100 ms for minutes (the
# rebalance storm of tests/caos, and a worker that never became ready in CI). The cost: a
# worker from before v1.4 (round robin, aiokafka's default) and a v1.4 worker can not share the
# group; the upgrade to v1.4 replaces the workers at once (docs/operacion.md).
CO_PARTITIONING_ASSIGNORS = (RangePartitionAssignor,)


DAY_MS = 24 * 60 * 60 * 1000
# The published topic keeps the newest ficha of every SKU forever (compaction by key); a segment
# closes after a day so that old versions become compactable, and none waits more than a week.
# The gate topic (fichas.puerta) is compacted the same way: the newest state of every gate.
# The other topics are logs with explicit retention: a week for the input (replayable from the
# supplier), a month for what people or other teams read later (review, DLQ, sample).
COMPACTED: dict[str, str] = {
    "cleanup.policy": "compact",
    "segment.ms": str(DAY_MS),
    "max.compaction.lag.ms": str(7 * DAY_MS),
}
RETENTION_INPUT_MS = 7 * DAY_MS
RETENTION_OUTPUT_MS = 30 * DAY_MS
# People's decisions are the gates' evidence and the audit of who published what: a year.
RETENTION_DECISIONS_MS = 365 * DAY_MS


def topic_configs(settings: Settings) -> dict[str, dict[str, str]]:
    """Topic-level settings of every topic, as the worker creates it when missing.

    k8s/base/topics/kafkatopics.yaml and docker-compose.yml set the same values; a test keeps
    the three in agreement (tests/deploy/test_manifiestos.py).
    """

    def log(retention_ms: int) -> dict[str, str]:
        return {"cleanup.policy": "delete", "retention.ms": str(retention_ms)}

    return {
        settings.topic_entrada: log(RETENTION_INPUT_MS),
        settings.topic_publicadas: dict(COMPACTED),
        settings.topic_revision: log(RETENTION_OUTPUT_MS),
        settings.topic_dlq: log(RETENTION_OUTPUT_MS),
        settings.topic_muestra: log(RETENTION_OUTPUT_MS),
        settings.topic_puerta: dict(COMPACTED),
        settings.topic_decisiones: log(RETENTION_DECISIONS_MS),
    }


def topic_names(settings: Settings) -> list[str]:
    """Every topic the worker reads or writes."""
    return [
        settings.topic_entrada,
        settings.topic_publicadas,
        settings.topic_revision,
        settings.topic_dlq,
        settings.topic_muestra,
        settings.topic_puerta,
        settings.topic_decisiones,
    ]


async def connect_admin(brokers: str, wait_s: float = BROKER_WAIT_S) -> AIOKafkaAdminClient:
    """A started admin client; retry while no broker answers, at most ``wait_s`` seconds."""
    deadline = time.monotonic() + wait_s
    tries = 0
    while True:
        tries += 1
        admin = AIOKafkaAdminClient(bootstrap_servers=brokers, request_timeout_ms=10_000)
        try:
            await admin.start()
            if tries > 1:
                log.info("Kafka at %s answers after %d tries", brokers, tries)
            return admin
        except KafkaConnectionError as exc:
            await admin.close()
            cause = await probe(brokers) or str(exc)
            left = deadline - time.monotonic()
            if left <= 0:
                raise BrokerUnreachable(
                    f"Kafka at {brokers} (FICHAS_KAFKA_BROKERS) unreachable after {tries} tries "
                    f"in {wait_s:.0f} s ({cause}); check the address and that the broker is up"
                ) from exc
            log.warning(
                "Kafka at %s unreachable (%s); retrying in %.0f s, giving up in %.0f s",
                brokers,
                cause,
                min(BROKER_RETRY_S, left),
                left,
                extra={"kafka_brokers": brokers},
            )
            await asyncio.sleep(min(BROKER_RETRY_S, left))


async def probe(brokers: str, timeout_s: float = 3.0) -> str:
    """Why the first bootstrap server cannot be reached, in words ("" if its port answers).

    aiokafka only says "Unable to bootstrap"; a plain TCP connection tells refused, unknown
    host and silence apart, which is what the person reading the log has to act on.
    """
    server = brokers.split(",")[0].strip()
    host, _, port = server.rpartition(":")
    try:
        _, writer = await asyncio.wait_for(asyncio.open_connection(host, int(port)), timeout_s)
    except ConnectionRefusedError:
        return f"{server}: connection refused"
    except socket.gaierror as exc:
        return f"{server}: DNS lookup failed ({exc.strerror})"
    except TimeoutError:
        return f"{server}: no answer in {timeout_s:.0f} s"
    except OSError as exc:
        return f"{server}: {exc.strerror or exc}"
    writer.close()
    return ""


async def ensure_topics(settings: Settings) -> None:
    """Create missing topics with ``topic_configs``; existing ones are left as they are.

    No broker answering is retried for ``BROKER_WAIT_S`` (``connect_admin``). A topic the broker
    refuses to create (bad settings, too few brokers for the replication) stops the start-up with
    the broker's reason. An existing topic whose cleanup policy is not the contract's is logged
    as a warning: the worker does not change a topic an operator owns.
    """
    admin = await connect_admin(settings.kafka_brokers)
    try:
        existing = set(await admin.list_topics())
        configs = topic_configs(settings)
        missing = [name for name in topic_names(settings) if name not in existing]
        first = {name: configs[name] for name in missing if name != settings.topic_decisiones}
        if first:
            await _create(admin, settings, first)
        if settings.topic_decisiones in missing:
            # The input's count, whoever created the input and with whatever count.
            counts = await partition_counts(admin, [settings.topic_entrada])
            decisiones = {settings.topic_decisiones: configs[settings.topic_decisiones]}
            await _create(admin, settings, decisiones, counts[settings.topic_entrada])
        await _warn_on_policy(admin, {n: c for n, c in configs.items() if n in existing})
    finally:
        await admin.close()


async def check_co_partitioned(settings: Settings) -> None:
    """Stop the worker's start-up when the decisions topic's partition count is not the input's.

    The worker's own step, after ``ensure_topics`` (which other commands also run, e.g.
    ``fichas calibrar --publicar``, and which must not fail them for a topic they never read).
    """
    admin = await connect_admin(settings.kafka_brokers)
    try:
        await _check_co_partitioned(admin, settings.topic_entrada, settings.topic_decisiones)
    finally:
        await admin.close()


async def _check_co_partitioned(admin: AIOKafkaAdminClient, entrada: str, decisiones: str) -> None:
    """Raise ``ParticionesDistintas`` when the two topics' partition counts differ.

    Both are keyed by SKU with the default partitioner, so with equal counts a SKU's decisions
    are in the partition with its events' number, and the range assignor gives both partitions
    to one worker. With different counts a decision would go to a worker that does not own its
    SKU: refused here, with how to fix it, rather than found later as decisions never applied.
    """
    cuentas = await partition_counts(admin, [entrada, decisiones])
    if cuentas[entrada] != cuentas[decisiones]:
        raise ParticionesDistintas(
            f"topic {decisiones} (FICHAS_TOPIC_DECISIONES) has {cuentas[decisiones]} partitions "
            f"and {entrada} (FICHAS_TOPIC_ENTRADA) has {cuentas[entrada]}: they must be equal, "
            "so that a SKU's decisions reach the worker that owns its events. Give both the same "
            "count (kafka-topics.sh --alter --partitions N on the smaller one, while no "
            "decisions flow; adding partitions moves SKUs between partitions) and start again"
        )


METADATA_WAIT_S = 10.0


async def partition_counts(admin: AIOKafkaAdminClient, topics: list[str]) -> dict[str, int]:
    """The number of partitions of each topic, from the broker's metadata.

    A topic created a moment ago may not be in every broker's metadata yet (an error code, or
    no partitions): asked again for up to ``METADATA_WAIT_S``.
    """
    deadline = time.monotonic() + METADATA_WAIT_S
    while True:
        descripciones = await admin.describe_topics(topics)
        cuentas = {
            str(d["topic"]): len(d["partitions"]) for d in descripciones if d["error_code"] == 0
        }
        if all(cuentas.get(t) for t in topics) or time.monotonic() >= deadline:
            faltan = [t for t in topics if not cuentas.get(t)]
            if faltan:
                raise RuntimeError(f"no partition metadata for topics {faltan}")
            return cuentas
        await asyncio.sleep(0.2)


async def _create(
    admin: AIOKafkaAdminClient,
    settings: Settings,
    configs: dict[str, dict[str, str]],
    partitions: int | None = None,
) -> None:
    """Create the topics (with ``partitions``, else ``FICHAS_PARTICIONES``); another worker
    creating them first is fine, any other error is not."""
    topics = [
        NewTopic(
            name,
            num_partitions=partitions or settings.particiones,
            replication_factor=settings.replicacion,
            topic_configs=config,
        )
        for name, config in configs.items()
    ]
    try:
        response = await admin.create_topics(topics)
    except TopicAlreadyExistsError:
        return  # another worker created them between our list and our create
    errors = [
        f"{name}: {message or code}"
        for name, code, message in response.topic_errors
        if code not in (0, TopicAlreadyExistsError.errno)
    ]
    if errors:
        raise RuntimeError("the broker refused to create topics: " + "; ".join(errors))
    log.info("created topics %s", sorted(configs))


async def _warn_on_policy(admin: AIOKafkaAdminClient, configs: dict[str, dict[str, str]]) -> None:
    """Warn about existing topics whose cleanup policy differs from the contract's."""
    if not configs:
        return
    resources = [ConfigResource(ConfigResourceType.TOPIC, name) for name in configs]
    try:
        responses = await admin.describe_configs(resources)
    except Exception as exc:  # a check, not a reason to stop the worker
        log.warning("could not read the topics' settings: %s", exc)
        return
    for response in responses:
        for _code, _message, _type, name, entries in response.resources:
            actual = {entry[0]: entry[1] for entry in entries}.get("cleanup.policy")
            wanted = configs.get(name, {}).get("cleanup.policy")
            if wanted and actual and actual != wanted:
                log.warning(
                    "topic %s has cleanup.policy=%s; the contract says %s "
                    "(kafka-configs.sh --alter --entity-type topics --entity-name %s "
                    "--add-config cleanup.policy=%s)",
                    name,
                    actual,
                    wanted,
                    name,
                    wanted,
                )


async def committed_points(
    admin: AIOKafkaAdminClient, group: str, partitions: set[TopicPartition]
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The group's committed offset of each partition *with its metadata* (the finished offsets
    above the watermark, ``stream.offset_metadata``). aiokafka's ``consumer.committed()``
    returns the offset alone; the admin client's OffsetFetch returns both. Offset -1: nothing
    committed."""
    if not partitions:
        return {}
    points = await admin.list_consumer_group_offsets(group, partitions=sorted(partitions))
    return {tp: point for tp, point in points.items() if tp in partitions}


def build_consumer(settings: Settings) -> AIOKafkaConsumer:
    """The input consumer: it never commits (offsets go in the emitter's transactions),
    bounded prefetch, LLM-friendly timeouts."""
    return AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_brokers,
        group_id=settings.grupo,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        partition_assignment_strategy=CO_PARTITIONING_ASSIGNORS,
        max_poll_interval_ms=300_000,
        session_timeout_ms=10_000,  # a crashed member is replaced within 10 s (docs/stream.md)
        heartbeat_interval_ms=3_000,
        rebalance_timeout_ms=300_000,
        max_partition_fetch_bytes=256 * 1024,
        fetch_max_bytes=4 * 1024 * 1024,
    )


def build_producer(settings: Settings, transactional_id: str) -> AIOKafkaProducer:
    """A producer of one input partition's outcomes (``stream.emitter``): transactional, so the
    next owner of the partition fences it; every write acknowledged by all in-sync replicas.

    The transaction timeout bounds how long a stalled worker's open transaction can hold back
    read_committed readers of an output partition (and the partition's committed offset)
    before the broker aborts it. 10 s, as Kafka Streams sets under exactly-once: a transaction
    here lives for one emit (milliseconds), so 10 s is only reached by a worker stopped or cut
    off mid-emit; a SIGKILLed worker's transaction is aborted sooner, when the partition's next
    owner starts its producer (after the 10 s session timeout at most). One that outlives it is
    aborted and its producer fenced: the worker rejoins the group (``stream.emitter``).
    """
    return AIOKafkaProducer(
        bootstrap_servers=settings.kafka_brokers,
        acks="all",
        enable_idempotence=True,
        transactional_id=transactional_id,
        transaction_timeout_ms=TRANSACTION_TIMEOUT_MS,
        linger_ms=0,
        request_timeout_ms=30_000,
        max_request_size=1024 * 1024,
    )
