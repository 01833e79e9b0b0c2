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
from aiokafka.errors import KafkaConnectionError, TopicAlreadyExistsError

from stream.config import Settings

log = logging.getLogger(__name__)

BROKER_WAIT_S = 60.0
BROKER_RETRY_S = 5.0


class BrokerUnreachable(RuntimeError):
    """No broker of ``FICHAS_KAFKA_BROKERS`` answered within ``BROKER_WAIT_S`` at start-up."""


def topic_names(settings: Settings) -> list[str]:
    """Every topic the worker reads or writes."""
    return [
        settings.topic_entrada,
        settings.topic_publicadas,
        settings.topic_revision,
        settings.topic_dlq,
        settings.topic_muestra,
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
    """Create missing topics; existing ones are left as they are."""
    admin = await connect_admin(settings.kafka_brokers)
    try:
        existing = set(await admin.list_topics())
        missing = [name for name in topic_names(settings) if name not in existing]
        if not missing:
            return
        topics = [
            NewTopic(
                name, num_partitions=settings.particiones, replication_factor=settings.replicacion
            )
            for name in missing
        ]
        try:
            await admin.create_topics(topics)
        except TopicAlreadyExistsError:
            pass  # another worker created them between our list and our create
        log.info("created topics %s", missing)
    finally:
        await admin.close()


def build_consumer(settings: Settings) -> AIOKafkaConsumer:
    """The input consumer: manual commits, bounded prefetch, LLM-friendly timeouts."""
    return AIOKafkaConsumer(
        bootstrap_servers=settings.kafka_brokers,
        group_id=settings.grupo,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        max_poll_interval_ms=300_000,
        session_timeout_ms=10_000,  # a crashed member is replaced within 10 s
        heartbeat_interval_ms=3_000,
        rebalance_timeout_ms=300_000,
        max_partition_fetch_bytes=256 * 1024,
        fetch_max_bytes=4 * 1024 * 1024,
    )


def build_producer(settings: Settings) -> AIOKafkaProducer:
    """The outcome producer: every write acknowledged by all in-sync replicas."""
    return AIOKafkaProducer(
        bootstrap_servers=settings.kafka_brokers,
        acks="all",
        enable_idempotence=True,
        linger_ms=5,
        request_timeout_ms=30_000,
        max_request_size=1024 * 1024,
    )
