"""``bench.ocupacion``: the LLM slots' occupancy, the gaps between a ficha's calls, the ceiling."""

from __future__ import annotations

from typing import Any

import pytest

from bench.feed import llm_calls, make_feed
from bench.ocupacion import linea, ocupacion, techo_pct, techo_s


def _req(sku: str | None, at: float, ms: float | None) -> dict[str, Any]:
    return {"sku": sku, "received_at": at, "duration_ms": ms}


def test_no_gap_and_every_slot_busy_is_the_whole_window() -> None:
    # two slots, two fichas of two 1-second calls each, back to back
    registros = [_req(s, t, 1000) for s in ("A", "B") for t in (100.0, 101.0)]
    datos = ocupacion(registros, cap=2)
    assert datos["ocupacion_pct"] == 100.0
    assert datos["ventana_s"] == 2.0
    assert datos["huecos"] == 2 and datos["hueco_medio_ms"] == 0.0


def test_gaps_are_measured_per_sku_from_answer_to_next_request() -> None:
    registros = [
        _req("A", 10.0, 1000),
        _req("A", 11.010, 1000),  # 10 ms after A's first answer
        _req("B", 10.0, 1000),
        _req("B", 11.200, 1000),  # 200 ms: a stall
        _req("B", 12.230, 1000),  # 30 ms
    ]
    datos = ocupacion(registros, cap=2)
    assert datos["huecos"] == 3
    assert datos["hueco_p50_ms"] == pytest.approx(30.0, abs=0.1)
    assert datos["hueco_p99_ms"] == pytest.approx(200.0, abs=0.1)
    assert datos["hueco_medio_ms"] == pytest.approx(80.0, abs=0.1)
    # 5 slot-seconds busy in a window of 3.23 s on 2 slots
    assert datos["ocupacion_pct"] == pytest.approx(100 * 5 / (2 * 3.23), abs=0.1)


def test_a_wait_in_the_servers_queue_is_not_a_busy_slot() -> None:
    # one slot, two requests at once: the second waited 1 s for the slot, then held it 1 s
    registros = [_req("A", 0.0, 1000), {**_req("B", 0.0, 2000), "slot_ms": 1000}]
    assert ocupacion(registros, cap=1)["ocupacion_pct"] == 100.0
    sin_slot = ocupacion([_req("A", 0.0, 1000), _req("B", 0.0, 2000)], cap=1)
    assert sin_slot["ocupacion_pct"] == 150.0  # what durations alone would claim


def test_requests_without_sku_or_answer_are_left_out() -> None:
    registros = [_req(None, 0.0, 1000), _req("A", 5.0, None), _req("A", 5.0, 500)]
    datos = ocupacion(registros, cap=1)
    assert datos["ventana_s"] == 0.5 and datos["ocupacion_pct"] == 100.0
    assert ocupacion([_req(None, 0.0, 1000)], cap=1) == {}


def test_the_ceiling_is_list_scheduling_in_feed_order() -> None:
    # 2 slots: 6 s and 2 s start at 0; the third (2 s) takes the slot freed at 2 s
    assert techo_s([6, 2, 2], cap=2, latencia_s=1.0) == 6.0
    # one long ficha last: it starts at 1 s and ends at 7 s; 9 slot-seconds of calls would
    # take 4.5 s on 2 slots always busy, so this feed reaches 4.5 / 7 of the limit at best
    assert techo_s([1, 1, 1, 6], cap=2, latencia_s=1.0) == 7.0
    assert techo_pct([1, 1, 1, 6], cap=2, latencia_s=1.0) == pytest.approx(100 * 4.5 / 7.0)
    assert techo_pct([], cap=2, latencia_s=1.0) == 0.0


def test_the_ceiling_of_the_documented_burst() -> None:
    """docs/rendimiento.md: 1600 events of the default mix on 64 slots cannot pass 96.6 %."""
    feed = make_feed(1600, {"1": 0.5, "2": 0.3, "3": 0.1, "never": 0.1}, "t")
    llamadas = [llm_calls(e.clase) for e in feed]
    assert round(techo_pct(llamadas, cap=64, latencia_s=1.0), 1) == 96.6


def test_the_report_line_names_the_figures() -> None:
    datos = ocupacion([_req("A", 0.0, 1000), _req("A", 1.012, 1000)], cap=1)
    datos["techo_pct"] = 96.6
    texto = linea("worker_1", datos)
    assert "worker_1: busy 99.4 % of 2.01 s (ceiling of this feed 96.6 %)" in texto
    assert "p50 12.0 ms" in texto
