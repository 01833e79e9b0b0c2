"""The contract's topics: their settings, creating the missing ones, and their partitions.

One ``ensure_topics`` for every command that needs the topics (the worker, the review app,
``fichas calibrar --publicar``): it waits for the broker by the start-up rule
(``infra.kafka.clients.connect_admin``), creates what is missing with the contract's settings, stops
on a topic the broker refuses to create, and creates ``fichas.decisiones`` with the input's
partition count (a SKU's decisions must be in the partition of its events). An existing topic is
never changed: one whose cleanup policy is not the contract's is logged as a warning.
``check_co_partitioned`` is the worker's own refusal of unequal counts, after it.

Partitions are read from the broker's metadata (``describe_partitions``), which never creates a
topic; a topic created a moment ago may be missing from it for a while (``partition_counts``
waits). k8s/base/topics and docker-compose.yml set the same values; tests keep them equal.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType
from aiokafka.errors import TopicAlreadyExistsError, TopicAuthorizationFailedError
from aiokafka.structs import TopicPartition

from infra.config import Settings
from infra.kafka.clients import build_admin, connect_admin

log = logging.getLogger(__name__)

METADATA_WAIT_S = 10.0

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


class ParticionesDistintas(RuntimeError):
    """``fichas.decisiones`` and the input topic have different partition counts: a SKU's
    decisions would not reach the worker that owns its events (``stream.flow.decisiones``)."""


def topic_configs(settings: Settings) -> dict[str, dict[str, str]]:
    """Topic-level settings of every topic, as ``ensure_topics`` creates it when missing.

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
    """Every topic of the contract, as these settings name them."""
    return [
        settings.topic_entrada,
        settings.topic_publicadas,
        settings.topic_revision,
        settings.topic_dlq,
        settings.topic_muestra,
        settings.topic_puerta,
        settings.topic_decisiones,
    ]


async def ensure_topics(settings: Settings) -> None:
    """Create missing topics with ``topic_configs``; existing ones are left as they are.

    No broker answering is retried for ``FICHAS_KAFKA_ESPERA_S`` (``connect_admin``). A topic
    the broker refuses to create (bad settings, too few brokers for the replication) stops the
    start-up with the broker's reason. An existing topic whose cleanup policy is not the
    contract's is logged as a warning: no command changes a topic an operator owns.
    """
    admin = await connect_admin(settings)
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
    Both topics are keyed by SKU with the default partitioner, so with equal counts a SKU's
    decisions are in the partition with its events' number, and the range assignor gives both
    partitions to one worker; with different counts a decision would go to a worker that does
    not own its SKU: refused here, with how to fix it.
    """
    entrada, decisiones = settings.topic_entrada, settings.topic_decisiones
    admin = await connect_admin(settings)
    try:
        cuentas = await partition_counts(admin, [entrada, decisiones])
    finally:
        await admin.close()
    if cuentas[entrada] != cuentas[decisiones]:
        raise ParticionesDistintas(
            f"topic {decisiones} (FICHAS_TOPIC_DECISIONES) has {cuentas[decisiones]} partitions "
            f"and {entrada} (FICHAS_TOPIC_ENTRADA) has {cuentas[entrada]}: they must be equal, "
            "so that a SKU's decisions reach the worker that owns its events. Give both the same "
            "count (kafka-topics.sh --alter --partitions N on the smaller one, while no "
            "decisions flow; adding partitions moves SKUs between partitions) and start again"
        )


async def describe_partitions(
    admin: AIOKafkaAdminClient, topics: Iterable[str]
) -> tuple[list[TopicPartition], list[str]]:
    """The partitions of ``topics`` from the broker's metadata, and the topics that do not
    exist (an error, or no partitions yet); ``TopicAuthorizationFailedError`` for a topic this
    client may not describe (a missing ACL is not a missing topic).

    A consumer learns partitions only of topics it subscribes to; readers that assign partitions
    by hand ask the admin API instead, which also never creates a topic.
    """
    partitions: list[TopicPartition] = []
    missing: list[str] = []
    for description in await admin.describe_topics(list(topics)):
        if description.get("error_code") == TopicAuthorizationFailedError.errno:
            raise TopicAuthorizationFailedError(description["topic"])  # an ACL, not missing
        if description.get("error_code") or not description.get("partitions"):
            missing.append(description["topic"])
            continue
        partitions += [
            TopicPartition(description["topic"], p["partition"]) for p in description["partitions"]
        ]
    return partitions, missing


async def topic_partitions(
    settings: Settings, topics: Iterable[str], client_id: str = "fichas-lector"
) -> tuple[list[TopicPartition], list[str]]:
    """``describe_partitions`` with an admin client of its own (not waited for: a reader's)."""
    admin = build_admin(settings, client_id=client_id)
    await admin.start()
    try:
        return await describe_partitions(admin, topics)
    finally:
        await admin.close()


async def partition_counts(admin: AIOKafkaAdminClient, topics: list[str]) -> dict[str, int]:
    """The number of partitions of each topic, from the broker's metadata.

    A topic created a moment ago may not be in every broker's metadata yet (an error code, or
    no partitions): asked again for up to ``METADATA_WAIT_S``.
    """
    deadline = time.monotonic() + METADATA_WAIT_S
    while True:
        partitions, missing = await describe_partitions(admin, topics)
        if not missing or time.monotonic() >= deadline:
            if missing:
                raise RuntimeError(f"no partition metadata for topics {missing}")
            return {t: sum(1 for tp in partitions if tp.topic == t) for t in topics}
        await asyncio.sleep(0.2)


async def _create(
    admin: AIOKafkaAdminClient,
    settings: Settings,
    configs: dict[str, dict[str, str]],
    partitions: int | None = None,
) -> None:
    """Create the topics (with ``partitions``, else ``FICHAS_PARTICIONES``); another command
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
    refused = TopicAuthorizationFailedError.errno
    denied = [name for name, code, _ in response.topic_errors if code == refused]
    if denied:  # a missing ACL (Describe on a topic that exists, Create on one that does not)
        raise TopicAuthorizationFailedError(", ".join(sorted(denied)))
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
    except Exception as exc:  # a check, not a reason to stop the command
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
