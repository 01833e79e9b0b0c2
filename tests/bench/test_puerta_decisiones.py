"""bench.puerta_decisiones counts what the gate needs: as many approvals as the opener needs on
an all-approved sequence when every decision is approved and above the grid (docs/puerta.md),
and more decisions when fewer reach the top."""

from __future__ import annotations

import random

from bench.puerta_decisiones import decisiones_hasta_abrir, main
from puerta.secuencial import Observacion, certificar_secuencia


def test_todo_aprobado_y_todo_arriba_abre_cuando_el_abridor():
    abre = next(
        n
        for n in range(1, 200)
        if certificar_secuencia([Observacion(1.0, True, True)] * n, 0.9, 0.05).abierta
    )
    rng = random.Random(1)
    assert {decisiones_hasta_abrir(rng, 1.0, 1.0) for _ in range(5)} == {abre}


def test_con_la_mitad_arriba_hacen_falta_unas_el_doble():
    rng = random.Random(2)
    tiempos = sorted(t for t in (decisiones_hasta_abrir(rng, 1.0, 0.5) for _ in range(50)) if t)
    assert len(tiempos) == 50
    # 44 approvals at 0.95 out of about half the decisions, or the grid's middle entry (0.75,
    # a tenth of δ) on every decision: whichever comes first
    assert 60 <= tiempos[25] <= 100


def test_con_precision_bajo_el_objetivo_no_abre(capsys):
    rng = random.Random(3)
    assert sum(decisiones_hasta_abrir(rng, 0.8, 1.0) is not None for _ in range(8)) <= 1
    assert main(["--secuencias", "3"]) == 0
    assert "| 0.1 |" in capsys.readouterr().out
