"""LLMHealth's messages: one WARNING on pause, a reminder while it lasts, one INFO on resume."""

from __future__ import annotations

import logging

import pytest

from grafo import ejecucion
from grafo.ejecucion import REMINDER_S, LLMHealth
from grafo.errores import LLMFailure


async def test_pausa_recordatorio_y_vuelta(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1000.0]
    monkeypatch.setattr(ejecucion.time, "monotonic", lambda: now[0])
    health = LLMHealth(url="http://llm:8000/v1")
    refused = LLMFailure("connection", True, None, "connection refused")
    caplog.set_level(logging.INFO, logger="grafo.ejecucion")

    health.mark_down(refused)
    health.mark_down(refused)  # same outage: nothing new to say yet
    now[0] += REMINDER_S
    health.mark_down(refused)
    now[0] += 5
    health.mark_up()
    health.mark_up()

    said = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert said == [
        (
            "WARNING",
            "LLM at http://llm:8000/v1 unavailable: connection refused; pausing new events "
            "until it answers",
        ),
        (
            "WARNING",
            "LLM at http://llm:8000/v1 still unavailable after 60 s: connection refused; new "
            "events still paused",
        ),
        ("INFO", "LLM at http://llm:8000/v1 answers again after 65 s; resuming"),
    ]
