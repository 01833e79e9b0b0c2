"""``bench.run.objetivos``: each benchmark target read from the rows, met or missed."""

from __future__ import annotations

from typing import Any

from bench.run import format_objetivos, objetivos


def _doc(**filas: dict[str, float]) -> dict[str, Any]:
    return {"filas": [{"escenario": nombre, **valores} for nombre, valores in filas.items()]}


def test_met_and_missed_by_direction_of_the_bound() -> None:
    doc = _doc(
        worker_1={"pct_limite": 85.0, "fichas_s": 40.0},
        worker_2={"fichas_s": 60.0},
        worker_1_3int={"cpu_ms_ficha": 10.0, "checkpoints_ficha_3": 13.0},
    )
    informe = {o["objetivo"]: o for o in objetivos(doc)}
    assert informe["worker CPU ms per 3-attempt ficha"]["cumple"] is True  # <= 10 includes 10
    assert informe["% of the LLM-bound limit, one worker"]["cumple"] is True
    ratio = informe["two workers / one worker throughput"]
    assert ratio["medido"] == 1.5 and ratio["cumple"] is False
    assert informe["checkpoints per 3-attempt ficha"]["cumple"] is False
    texto = format_objetivos(list(informe.values()))
    assert "1.5 (target >= 1.7) MISSED" in texto
    assert "10.0 (target <= 10.0) met" in texto


def test_a_scenario_not_run_is_not_measured() -> None:
    informe = objetivos(_doc(worker_1={"pct_limite": 50.0, "fichas_s": 10.0}))
    por_nombre = {o["objetivo"]: o for o in informe}
    assert por_nombre["two workers / one worker throughput"]["medido"] is None
    assert por_nombre["two workers / one worker throughput"]["cumple"] is None
    assert por_nombre["% of the LLM-bound limit, one worker"]["cumple"] is False
    assert "not measured" in format_objetivos(informe)
