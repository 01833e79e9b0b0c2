"""``bench.run --candidata``: the scenario beside ``worker_1``, its environment and its line.

The timed run itself is the lead's (docs/rendimiento.md, "Issue 41"); this checks the option
builds what that run measures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.run import (
    MODELO_CANDIDATA,
    Entorno,
    _env,
    escenarios,
    format_candidata,
    parse_args,
)
from harness.topicos import Topics


def test_la_candidata_es_un_escenario_mas_junto_a_worker_1() -> None:
    op = parse_args(["--quick", "--candidata", "0.1"])
    nombres = [e.nombre for e in escenarios(op)]
    assert nombres[:2] == ["worker_1", "worker_1_candidata"]
    (cand,) = [e for e in escenarios(op) if e.nombre == "worker_1_candidata"]
    assert cand.candidata == 0.1 and cand.concurrencia == op.cap and cand.n == op.n
    assert "worker_1_candidata" not in [e.nombre for e in escenarios(parse_args(["--quick"]))]
    solo = parse_args(["--quick", "--candidata", "0.1", "--solo", "worker_1,worker_1_candidata"])
    assert [e.nombre for e in escenarios(solo)] == ["worker_1", "worker_1_candidata"]


def test_una_proporcion_fuera_de_rango_se_rechaza() -> None:
    with pytest.raises(SystemExit):
        parse_args(["--candidata", "1.5"])


def test_el_entorno_del_escenario_enciende_la_candidata(tmp_path: Path) -> None:
    class _Con:
        bootstrap = "127.0.0.1:9"
        url = "http://127.0.0.1:9/v1"

    entorno = Entorno(_Con(), _Con(), tmp_path, parse_args(["--quick"]))  # type: ignore[arg-type]
    env = _env(entorno, Topics(), tmp_path, 8, 0.1)
    assert env["FICHAS_CANDIDATA_PROPORCION"] == "0.1"
    assert env["FICHAS_CANDIDATA_LLM_MODELO"] == MODELO_CANDIDATA
    assert "FICHAS_CANDIDATA_PROPORCION" not in _env(entorno, Topics(), tmp_path, 8)


def test_la_linea_compara_con_y_sin_candidata() -> None:
    doc = {
        "filas": [
            {"escenario": "worker_1", "pct_limite": 80.0},
            {"escenario": "worker_1_candidata", "pct_limite": 72.5},
        ],
        "detalle": {
            "worker_1_candidata": {
                "candidata": {"proporcion": 0.1, "llamadas_llm": 14, "items_al_terminar": 6}
            }
        },
    }
    assert format_candidata(doc) == (
        "candidate at 10 % of SKUs: the live loop at 72.5 % of the LLM-bound limit against "
        "80.0 % without; the candidate made 14 LLM calls and wrote 6 items by the last live "
        "outcome"
    )
    assert format_candidata({"filas": [], "detalle": {}}) is None
