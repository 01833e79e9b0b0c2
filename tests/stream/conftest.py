"""Fixtures for the worker against a real Kafka broker and the fake LLM, both real processes."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from harness.kafka_broker import KafkaBroker
from harness.red import free_port
from harness.topicos import Topics


@pytest.fixture(scope="session")
def kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaBroker]:
    """One real single-node KRaft broker for the session (scripts/kafka.sh)."""
    broker = KafkaBroker(free_port(), tmp_path_factory.mktemp("kafka"))
    broker.start()
    yield broker
    broker.stop()


@pytest.fixture
def topics() -> Topics:
    """Unique topic names and group for one test."""
    return Topics()
