"""Every Kafka client of the product is built here, from the settings and one options function.

``client_options`` is what every builder spreads: the brokers, and how every connection
authenticates (SASL, TLS), nowhere else. The settings that matter for correctness stay with
their builder and its reason: the worker's consumer never commits and has one assignor (range);
its producers are transactional, one id per input partition, acknowledged by all in-sync
replicas, with a 10 s transaction timeout; every reader of what the worker writes reads
``read_committed``. At start-up ``connect_admin`` waits ``FICHAS_KAFKA_ESPERA_S`` for a broker
that does not answer (then ``BrokerUnreachable``, exit 4) and none for one that refuses the
client (``KafkaRefused``, exit 2). Why: docs/operacion.md, "Start-up"; docs/stream.md.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import time
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.coordinator.assignors.range import RangePartitionAssignor
from aiokafka.errors import KafkaConnectionError
from aiokafka.helpers import create_ssl_context
from aiokafka.structs import OffsetAndMetadata, TopicPartition

from infra import credentials as security
from infra.config import Settings
from infra.kafka.access import KafkaRefused, login_refusal, refusal

log = logging.getLogger(__name__)

BROKER_RETRY_S = 5.0
TRANSACTION_TIMEOUT_MS = 10_000


class BrokerUnreachable(RuntimeError):
    """No broker of ``FICHAS_KAFKA_BROKERS`` answered within ``FICHAS_KAFKA_ESPERA_S`` at
    start-up."""


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
# when the topics have equal partition counts, which puts a SKU's decisions with its events.
# Only one: aiokafka 0.14 with two assignors rejoins for ever (docs/stream.md, "One writer per
# SKU"); the cost is that a worker from before v1.4 and a v1.4 worker can not share the group.
CO_PARTITIONING_ASSIGNORS = (RangePartitionAssignor,)


def client_options(settings: Settings) -> dict[str, Any]:
    """The options every client of the product is built with: how to reach the cluster and
    how to prove who it is (``FICHAS_KAFKA_SEGURIDAD`` and its companions).

    The one place for connection options: every builder below spreads it. The password is read
    from its file here, at each build, so it lives only in the clients (a rotated password is
    picked up by the next start); the TLS context trusts ``FICHAS_KAFKA_CA_ARCHIVO`` (the
    system's CAs when unset) and checks the broker's name, and carries the client certificate
    for mutual TLS when one is set.
    """
    options: dict[str, Any] = {
        "bootstrap_servers": settings.kafka_brokers,
        "security_protocol": settings.kafka_seguridad,
    }
    if settings.kafka_seguridad in security.SASL_PROTOCOLS:
        assert settings.kafka_contrasena_archivo is not None  # the settings require it
        options["sasl_mechanism"] = settings.kafka_sasl_mecanismo
        options["sasl_plain_username"] = settings.kafka_usuario
        options["sasl_plain_password"] = security.read_secret(settings.kafka_contrasena_archivo)
    if settings.kafka_seguridad in security.TLS_PROTOCOLS:
        options["ssl_context"] = create_ssl_context(
            cafile=settings.kafka_ca_archivo,
            certfile=settings.kafka_certificado_archivo,
            keyfile=settings.kafka_clave_privada_archivo,
            password=security.refuse_passphrase,
        )
    return options


def build_admin(
    settings: Settings, client_id: str | None = None, request_timeout_ms: int = 40_000
) -> AIOKafkaAdminClient:
    """An admin client (not started): topics, metadata, the group's committed offsets."""
    named = {"client_id": client_id} if client_id is not None else {}
    return AIOKafkaAdminClient(
        **client_options(settings), **named, request_timeout_ms=request_timeout_ms
    )


async def check_access(settings: Settings) -> None:
    """Raise ``KafkaRefused`` if a broker refuses this client's login or TLS handshake.

    One connection with the client's own options, before any client starts: aiokafka's
    clients report a refused login as "Unable to bootstrap", the same as a broker that is
    down, and would be waited for. Returns when no broker answers (that is waited for).
    """
    refused = await login_refusal(settings, client_options(settings))
    if refused is not None:
        raise refused


async def explain_refusal(exc: BaseException, settings: Settings) -> KafkaRefused | None:
    """The refusal behind a Kafka error, or None: a missing ACL's, or, when a connection
    failed, a login or certificate the broker refuses (one probe connection, as
    ``check_access``). For commands whose first client is not ``connect_admin``'s."""
    refused = refusal(exc, settings)
    if refused is None and isinstance(exc, KafkaConnectionError):
        refused = await login_refusal(settings, client_options(settings))
    return refused


async def connect_admin(settings: Settings) -> AIOKafkaAdminClient:
    """A started admin client; retry while no broker answers, at most ``kafka_espera_s``
    seconds; ``KafkaRefused`` at once if one answers and refuses this client (``check_access``)."""
    brokers = settings.kafka_brokers
    wait_s = settings.kafka_espera_s
    deadline = time.monotonic() + wait_s
    tries = 0
    while True:
        tries += 1
        if tries == 1:
            await check_access(settings)
        admin = build_admin(settings, request_timeout_ms=10_000)
        try:
            await admin.start()
            if tries > 1:
                log.info("Kafka at %s answers after %d tries", brokers, tries)
            return admin
        except KafkaConnectionError as exc:
            await admin.close()
            cause = await probe(brokers)
            if not cause:  # the port answers: a broker that came up may refuse this client
                await check_access(settings)
                cause = _no_handshake(settings, exc)
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


def _no_handshake(settings: Settings, exc: Exception) -> str:
    """Why a port that answers gave no Kafka connection: aiokafka's error, and the likely
    setting when it says nothing more (a protocol that is not the listener's, or a listener
    that requires a client certificate closes the connection without a word)."""
    return (
        f"{exc}; the port answers without a Kafka handshake: a broker still starting, a "
        f"listener whose protocol is not FICHAS_KAFKA_SEGURIDAD={settings.kafka_seguridad}, "
        "or one that requires a client certificate (FICHAS_KAFKA_CERTIFICADO_ARCHIVO)"
    )


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


async def committed_points(
    admin: AIOKafkaAdminClient, group: str, partitions: set[TopicPartition]
) -> dict[TopicPartition, OffsetAndMetadata]:
    """The group's committed offset of each partition *with its metadata* (the finished offsets
    above the watermark, ``stream.commit.metadata``). aiokafka's ``consumer.committed()``
    returns the offset alone; the admin client's OffsetFetch returns both. Offset -1: nothing
    committed."""
    if not partitions:
        return {}
    points = await admin.list_consumer_group_offsets(group, partitions=sorted(partitions))
    if missing := partitions - set(points):
        raise PointsUnavailable(group, missing)
    return {tp: point for tp, point in points.items() if tp in partitions}


class PointsUnavailable(KafkaConnectionError):
    """The group coordinator answered without some partitions' offsets: a group-level error
    (still loading after a broker restart, or no longer the coordinator). From OffsetFetch v2
    on such an error comes without partitions, and aiokafka's ``list_consumer_group_offsets``
    reads only the partitions' error codes, so it returns an empty answer, which would read as
    "nothing committed" and replay the partition from its start. Transient: retried."""

    def __init__(self, group: str, missing: set[TopicPartition]) -> None:
        names = ", ".join(f"{tp.topic}-{tp.partition}" for tp in sorted(missing))
        super().__init__(f"group {group}: no committed offsets returned for {names}")


def build_consumer(settings: Settings) -> AIOKafkaConsumer:
    """The worker's consumer: it never commits (offsets go in the emitter's transactions),
    one assignor (range), bounded prefetch, LLM-friendly timeouts."""
    return AIOKafkaConsumer(
        **client_options(settings),
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
    """A producer of one input partition's outcomes (``stream.commit.emitter``): transactional, so
    the next owner of the partition fences it; every write acknowledged by all in-sync replicas.

    The transaction timeout bounds how long a stalled worker's open transaction can hold back
    read_committed readers of an output partition (and the partition's committed offset)
    before the broker aborts it: 10 s, as Kafka Streams sets under exactly-once, since a
    transaction here lives for one emit (docs/stream.md, "The transaction timeout is 10 s").
    """
    return AIOKafkaProducer(
        **client_options(settings),
        acks="all",
        enable_idempotence=True,
        transactional_id=transactional_id,
        transaction_timeout_ms=TRANSACTION_TIMEOUT_MS,
        linger_ms=0,
        request_timeout_ms=30_000,
        max_request_size=1024 * 1024,
    )


def build_writer(
    settings: Settings,
    client_id: str | None = None,
    linger_ms: int = 0,
    max_request_size: int | None = None,
) -> AIOKafkaProducer:
    """A producer outside the worker (the app's outbox, the gate states, ``fichas producir``,
    the demo's feed, the tests' input): idempotent, every write acknowledged by all in-sync
    replicas, so an acknowledged record is neither lost nor doubled by the producer's own
    retries. ``max_request_size``: a larger record than aiokafka's 1 MiB (a test's poison)."""
    named: dict[str, Any] = {"client_id": client_id} if client_id is not None else {}
    if max_request_size is not None:
        named["max_request_size"] = max_request_size
    return AIOKafkaProducer(
        **client_options(settings),
        **named,
        acks="all",
        enable_idempotence=True,
        linger_ms=linger_ms,
    )


def build_reader(
    settings: Settings, client_id: str = "fichas-lector", committed_only: bool = True
) -> AIOKafkaConsumer:
    """A group-less consumer from the earliest offset: reading never moves anyone's offsets.

    It reads as the contract asks downstream readers to, ``read_committed``: the worker writes
    in transactions, and a transaction the broker aborted (a fenced worker's) is not output.
    ``committed_only=False`` shows aborted records too, to check what a careless reader sees.
    """
    return AIOKafkaConsumer(
        **client_options(settings),
        group_id=None,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        client_id=client_id,
        isolation_level="read_committed" if committed_only else "read_uncommitted",
    )


def build_group_reader(settings: Settings, group: str, *topics: str) -> AIOKafkaConsumer:
    """A consumer-group member that commits by hand what it stored (the review app), from the
    earliest offset, ``read_committed``; a crashed member is replaced within 10 s, and topics
    created after it started are seen within 5 s (``metadata_max_age_ms``)."""
    return AIOKafkaConsumer(
        *topics,
        **client_options(settings),
        group_id=group,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        isolation_level="read_committed",  # the worker writes in transactions
        session_timeout_ms=10_000,
        heartbeat_interval_ms=3_000,
        metadata_max_age_ms=5_000,
    )
