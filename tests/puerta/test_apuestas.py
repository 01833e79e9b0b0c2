"""The opener's betting e-process at one threshold (``puerta.apuestas``), alone: Ville's bound
under the null, the e-value as a number, and ``faltan`` played forward. The walk over the grid
that uses it is tested in test_secuencial.py."""

from __future__ import annotations

import math
import random

import pytest

from puerta.apuestas import APUESTAS_APERTURA, TRUNCAMIENTO, ProcesoE, exponencial

OBJETIVO = 0.9
DELTA = 0.05


def test_bajo_la_hipotesis_nula_se_cruza_como_mucho_delta() -> None:
    """1000 seeded sequences of 300 approvals at precision 0.88 (< 0.9), each watched at every
    decision: the e-process ever reaches 1/delta in at most ~delta of them (Ville)."""
    rng = random.Random(2029)
    cruces = 0
    for _ in range(1000):
        proceso = ProcesoE(OBJETIVO, DELTA)
        for _ in range(300):
            proceso.actualizar(rng.random() < 0.88)
            if proceso.cruzado:
                cruces += 1
                break
    # binomial sd over 1000 runs at 0.05 is 0.007; allow 3 sd of sampling noise
    assert cruces / 1000 <= DELTA + 0.021, cruces


def test_el_e_valor_es_la_media_del_plugin_y_la_mezcla_y_su_maximo_se_queda() -> None:
    """Two approvals: the plug-in bets the cap (its shrunk mean stays 1), the mixture bets
    each c / objetivo; a rejection then lowers the e-value but not its running maximum."""
    proceso = ProcesoE(OBJETIVO, DELTA)
    proceso.actualizar(True)
    proceso.actualizar(True)
    plugin = (1 + TRUNCAMIENTO / OBJETIVO * (1 - OBJETIVO)) ** 2
    mezcla = sum((1 + c * (1 - OBJETIVO) / OBJETIVO) ** 2 for c in APUESTAS_APERTURA)
    esperado = (plugin + mezcla / len(APUESTAS_APERTURA)) / 2
    assert proceso.e_valor == pytest.approx(esperado)
    assert proceso.e_max == pytest.approx(esperado)
    proceso.actualizar(False)
    assert proceso.e_valor < esperado
    assert proceso.e_max == pytest.approx(esperado)


def test_faltan_es_lo_que_cruza_al_jugarlo() -> None:
    """``faltan`` approvals from now cross 1/δ, one fewer do not; 0 once crossed."""
    proceso = ProcesoE(OBJETIVO, DELTA)
    for aprobada in (True, False, True, True):
        proceso.actualizar(aprobada)
    faltan = proceso.faltan()
    assert faltan is not None and faltan > 1
    for _ in range(faltan - 1):
        proceso.actualizar(True)
    assert not proceso.cruzado
    proceso.actualizar(True)
    assert proceso.cruzado and proceso.faltan() == 0


def test_un_capital_fuera_del_rango_de_los_float_es_infinito() -> None:
    assert exponencial(0.0) == 1.0
    assert exponencial(math.log(20.0)) == pytest.approx(20.0)
    assert exponencial(1000.0) == math.inf
