"""The change detector (v1.6, issue 47): a Shiryaev-Roberts e-detector on the sampled verdicts."""

from __future__ import annotations

import math
import random

import pytest

from puerta.deteccion import (
    BLOQUE,
    apuesta_kelly,
    detector,
    observar,
    umbral_log,
)

OBJETIVO = 0.9
DELTA = 0.025  # the detector's half of the gate's δ


def test_la_apuesta_es_la_de_kelly_para_la_caida() -> None:
    """Kelly for x ~ Bernoulli(0.8) against 0.9: b = (0.9 - 0.8) / (0.9 * 0.1)."""
    b = apuesta_kelly(OBJETIVO, 0.8)
    assert b == pytest.approx(1 / 0.9)

    def crecimiento(c: float) -> float:
        return 0.8 * math.log(1 + c * (OBJETIVO - 1)) + 0.2 * math.log(1 + c * OBJETIVO)

    assert crecimiento(b) > max(crecimiento(b * 0.9), crecimiento(b * 1.1))
    # at the objective itself the factor's expectation is exactly 1 (a martingale)
    assert OBJETIVO * (1 + b * (OBJETIVO - 1)) + (1 - OBJETIVO) * (1 + b * OBJETIVO) == (
        pytest.approx(1.0)
    )
    for mala in ((0.9, 0.95), (0.9, 0.9), (1.0, 0.8), (0.9, 0.0)):
        with pytest.raises(ValueError):
            apuesta_kelly(*mala)


def test_los_umbrales_por_bloque_reparten_delta() -> None:
    """Block k ends at T_k = N(2^(k+1) - 1) and its threshold is T_k 2^(k+1) / δ: the blocks'
    false-alarm bounds T_k / threshold_k sum to δ."""
    fines = [BLOQUE * (2 ** (k + 1) - 1) for k in range(30)]
    assert fines[:3] == [BLOQUE, 3 * BLOQUE, 7 * BLOQUE]
    total = sum(fin / math.exp(umbral_log(fin, DELTA)) for fin in fines)
    assert total == pytest.approx(DELTA * (1 - 2.0**-30))
    # every verdict of a block has its block's threshold; the next block's is higher
    assert umbral_log(1, DELTA) == umbral_log(BLOQUE, DELTA)
    assert umbral_log(BLOQUE + 1, DELTA) == umbral_log(3 * BLOQUE, DELTA) > umbral_log(1, DELTA)
    with pytest.raises(ValueError):
        umbral_log(0, DELTA)


def test_la_recurrencia_es_la_de_shiryaev_roberts() -> None:
    """R_t = (R_{t-1} + 1) L_t, computed directly on a short sequence."""
    rng = random.Random(4)
    veredictos = [rng.random() < 0.7 for _ in range(60)]
    estado = detector(OBJETIVO, DELTA)
    r = 0.0
    b = apuesta_kelly(OBJETIVO)
    for correcta in veredictos:
        estado = observar(estado, correcta)
        r = (r + 1) * (1 + b * (OBJETIVO - correcta))
        assert estado.r == pytest.approx(r, rel=1e-9)
    assert estado.t == 60


def test_cierra_tras_una_caida_aunque_antes_hubiera_una_larga_racha_buena() -> None:
    """1,000 correct verdicts, then every fourth incorrect (precision 0.75): the alarm comes
    within a few hundred verdicts of the drop, and stays."""
    estado = detector(OBJETIVO, DELTA)
    for _ in range(1000):
        estado = observar(estado, True)
    assert not estado.alarma and estado.r < 20
    caida = 0
    while not estado.alarma:
        estado = observar(estado, caida % 4 != 3)
        caida += 1
        assert caida < 1000
    assert 50 < caida < 400
    assert observar(estado, True).alarma  # once alarmed, for good


@pytest.mark.lento
def test_en_el_objetivo_exacto_alarma_como_mucho_delta() -> None:
    """150 seeded runs of 3,000 verdicts at precision exactly 0.9 (the worst case): the share
    that alarms stays within δ plus sampling noise (Ville on R_t + T - t per block)."""
    rng = random.Random(2047)
    alarmas = 0
    for _ in range(150):
        estado = detector(OBJETIVO, DELTA)
        for _ in range(3000):
            estado = observar(estado, rng.random() < OBJETIVO)
            if estado.alarma:
                alarmas += 1
                break
    assert alarmas / 150 <= DELTA + 3 * math.sqrt(DELTA * (1 - DELTA) / 150), alarmas
