"""bench.puerta_decisiones counts what the gate needs: 38 approvals at the top threshold when
every decision is approved (docs/puerta.md), and more decisions when fewer reach the top."""

from __future__ import annotations

import random

from bench.puerta_decisiones import decisiones_hasta_abrir, main


def test_todo_aprobado_y_todo_arriba_abre_en_38():
    rng = random.Random(1)
    assert {decisiones_hasta_abrir(rng, 1.0, 1.0) for _ in range(5)} == {38}


def test_con_la_mitad_arriba_hacen_falta_unas_el_doble():
    rng = random.Random(2)
    tiempos = sorted(t for t in (decisiones_hasta_abrir(rng, 1.0, 0.5) for _ in range(50)) if t)
    assert len(tiempos) == 50
    assert 60 <= tiempos[25] <= 92  # 38 approvals at 0.95 out of about half the decisions


def test_con_precision_bajo_el_objetivo_no_abre(capsys):
    rng = random.Random(3)
    assert sum(decisiones_hasta_abrir(rng, 0.8, 1.0) is not None for _ in range(8)) <= 1
    assert main(["--secuencias", "3"]) == 0
    assert "| 0.1 |" in capsys.readouterr().out
