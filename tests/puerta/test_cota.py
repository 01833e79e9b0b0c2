"""The anytime-valid bound by betting: coverage at every time, tightening, and not Wilson."""

from __future__ import annotations

import math
import random

import pytest

from puerta.cota import CotaEnLinea, cota_inferior, cota_superior

MEDIA = 0.85
DELTA = 0.05
SECUENCIAS = 2000
LARGO = 300


def _wilson_inferior(exitos: int, n: int, z: float = 1.6449) -> float:
    """The one-sided 95 % Wilson lower bound, as a dashboard would recompute it."""
    p = exitos / n
    centro = p + z * z / (2 * n)
    radio = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centro - radio) / (1 + z * z / n)


@pytest.mark.lento
def test_cobertura_en_todo_momento_y_wilson_no() -> None:
    """2000 seeded sequences with true mean 0.85, each watched at every one of 300 verdicts.

    The betting bound reaches 0.85 (rejects the true mean) at some time in at most ~delta of
    them. Wilson's lower bound recomputed after each verdict does so far more often: that is
    why the gate does not use it. The grid has 20 points so that 0.85 is one of them and the
    event "bound >= 0.85" is exactly "the true mean was rejected"; it also keeps the test fast.
    """
    rng = random.Random(20231)
    cruces_apuesta = cruces_wilson = 0
    for _ in range(SECUENCIAS):
        cota = CotaEnLinea(DELTA, puntos=20)
        exitos = 0
        cruzo_wilson = False
        for n in range(1, LARGO + 1):
            x = rng.random() < MEDIA
            exitos += x
            cota.actualizar(x)
            if n >= 10 and _wilson_inferior(exitos, n) > MEDIA:
                cruzo_wilson = True
        # the bound only rises, so "ever >= 0.85" is "at the end >= 0.85"
        cruces_apuesta += cota.cota_inferior >= MEDIA
        cruces_wilson += cruzo_wilson
    tasa = cruces_apuesta / SECUENCIAS
    # delta = 0.05: binomial sd over 2000 runs is 0.005; allow 3 sd of sampling noise
    assert tasa <= DELTA + 0.015, tasa
    assert cruces_wilson / SECUENCIAS > 2 * DELTA, cruces_wilson / SECUENCIAS


@pytest.mark.lento
def test_cobertura_de_la_cota_superior() -> None:
    rng = random.Random(7)
    cruces = 0
    for _ in range(1000):
        cota = CotaEnLinea(DELTA, puntos=20)
        for _ in range(200):
            cota.actualizar(rng.random() < MEDIA)
        cruces += cota.cota_superior <= MEDIA
    assert cruces / 1000 <= DELTA + 0.02


def test_se_estrecha_con_n() -> None:
    rng = random.Random(3)
    datos = [rng.random() < 0.9 for _ in range(2000)]
    cota = CotaEnLinea(DELTA)
    anchos = {}
    for n, x in enumerate(datos, 1):
        cota.actualizar(x)
        if n in (50, 200, 2000):
            anchos[n] = (cota.cota_inferior, cota.cota_superior)
    assert anchos[50][0] <= anchos[200][0] <= anchos[2000][0] <= 0.9
    assert anchos[50][1] >= anchos[200][1] >= anchos[2000][1] >= 0.9
    ancho = {n: s - i for n, (i, s) in anchos.items()}
    assert ancho[50] > ancho[200] > ancho[2000]
    assert ancho[2000] < 0.06


def test_todo_correcto_sube_hacia_uno() -> None:
    cotas = []
    cota = CotaEnLinea(DELTA)
    for _ in range(400):
        cota.actualizar(True)
        cotas.append(cota.cota_inferior)
    assert cotas[0] == 0.0  # one verdict proves nothing at 95 %
    assert cotas == sorted(cotas)
    assert cotas[29] > 0.8 and cotas[99] > 0.9 and cotas[399] > 0.97
    assert cota.cota_superior == 1.0


def test_una_racha_de_incorrectas_baja_la_superior_bajo_el_objetivo() -> None:
    """What closes a gate: after 40 good verdicts, a run of bad ones drives the upper bound
    below 0.9 within a few dozen verdicts; the lower bound, already up, never falls."""
    cota = CotaEnLinea(DELTA)
    for _ in range(40):
        cota.actualizar(True)
    inferior_antes = cota.cota_inferior
    pasos = 0
    while cota.cota_superior >= 0.9:
        cota.actualizar(False)
        pasos += 1
        assert pasos < 60
    assert cota.cota_inferior == inferior_antes
    assert pasos >= 3


def test_funciones_puras_y_valores() -> None:
    datos = [True] * 45 + [False] * 5
    cota = CotaEnLinea()
    for x in datos:
        cota.actualizar(x)
    assert cota_inferior(datos) == cota.cota_inferior
    assert cota_superior(datos) == cota.cota_superior
    assert cota.n == 50 and cota.media == pytest.approx(0.9)
    assert cota_inferior([0.5, 1.0, 0.75]) <= 0.75
    assert cota_inferior([]) == 0.0 and cota_superior([]) == 1.0
    with pytest.raises(ValueError):
        CotaEnLinea().actualizar(1.5)
    with pytest.raises(ValueError):
        CotaEnLinea(delta=0)


def test_la_rejilla_fina_no_es_mas_laxa_que_la_exacta() -> None:
    """A coarse grid gives a lower (safer) bound, never one above the fine grid's."""
    rng = random.Random(11)
    datos = [rng.random() < 0.8 for _ in range(300)]
    assert cota_inferior(datos, puntos=20) <= cota_inferior(datos, puntos=1000)
    assert cota_inferior(datos, puntos=1000) - cota_inferior(datos, puntos=20) <= 0.05 + 1e-9
