"""A step Kafka refuses (a missing ACL) inside the worker's retry rule: never given up on (no
DLQ), never a retry warning, and the worker is told (it stops and exits 2; the broker test is
tests/infra/test_seguridad_kafka.py, the worker whose KafkaUser lacks the transactional ids)."""

from __future__ import annotations

import logging

import pytest
from aiokafka.errors import TopicAuthorizationFailedError, TransactionalIdAuthorizationFailed

from grafo import Backoff
from stream.flow.fallos import Reintentos


async def test_un_paso_rechazado_avisa_al_worker_y_no_va_a_la_dlq(
    caplog: pytest.LogCaptureFixture,
) -> None:
    rechazos: list[Exception] = []
    fallos: list[tuple[str, bool]] = []
    reintentos = Reintentos(
        Backoff(base_s=0.001, cap_s=0.001),
        lambda paso, transitorio: fallos.append((paso, transitorio)),
        lambda paso: None,
        max_fallos=1,  # a non-transient failure would give up at once
        on_refused=rechazos.append,
    )
    intentos = 0

    async def paso() -> str:
        nonlocal intentos
        intentos += 1
        if intentos <= 3:
            raise TopicAuthorizationFailedError("fichas.publicadas")
        return "escrito"

    with caplog.at_level(logging.WARNING):
        assert await reintentos.run(paso, "produce") == "escrito"
    assert [type(e) for e in rechazos] == [TopicAuthorizationFailedError] * 3
    assert fallos == []  # not counted as a failure of the step (no readiness note, no DLQ)
    assert not [r for r in caplog.records if "retrying" in r.getMessage()]


async def test_sin_quien_escuche_un_rechazo_se_reintenta_como_antes() -> None:
    """Code that builds the rule without ``on_refused`` keeps the old behaviour (transient)."""
    fallos: list[tuple[str, bool]] = []
    reintentos = Reintentos(
        Backoff(base_s=0.001, cap_s=0.001),
        lambda paso, transitorio: fallos.append((paso, transitorio)),
        lambda paso: None,
    )
    intentos = 0

    async def paso() -> None:
        nonlocal intentos
        intentos += 1
        if intentos == 1:
            raise TransactionalIdAuthorizationFailed("fichas.proveedor.cambios.0")

    await reintentos.run(paso, "produce")
    assert fallos == [("produce", True)]
