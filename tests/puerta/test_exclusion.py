"""The exclusion e-process: a family's own evidence that its precision at λ is below the
objective, by a mixture of fixed bets (valid by Ville, blind to the order of the decisions)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from puerta.exclusion import APUESTAS_EXCLUSION, ProcesoExclusion

OBJETIVO = 0.9
DELTA = 0.05


def _proceso(decisiones: list[bool]) -> ProcesoExclusion:
    proceso = ProcesoExclusion(OBJETIVO, DELTA)
    for aprobada in decisiones:
        proceso.actualizar(aprobada)
    return proceso


def test_cinco_de_diez_excluyen_en_cualquier_orden() -> None:
    """Issue 38's relojes: 5 approved, 5 rejected, in each of the 252 orders, cross 1/δ = 20;
    the mixture's value at the end is the same in every order (products commute)."""
    ordenes = [
        [i not in rechazos for i in range(10)] for rechazos in itertools.combinations(range(10), 5)
    ]
    assert len(ordenes) == 252
    finales = set()
    for orden in ordenes:
        proceso = _proceso(orden)
        assert proceso.cruzado, orden
        finales.add(round(proceso.log_valor, 9))
    assert len(finales) == 1
    (final,) = finales
    assert math.exp(final) > 1 / DELTA


def test_una_familia_buena_no_se_excluye_con_evidencia_corta() -> None:
    assert not _proceso([True] * 200).cruzado
    assert not _proceso([True] * 9 + [False]).cruzado  # exactly the objective
    assert _proceso([True] * 9 + [False]).log_valor < 0  # and its capital has not grown


def test_el_primer_factor_es_la_media_de_las_apuestas() -> None:
    rechazo = _proceso([False])
    esperado = sum(1 + c * OBJETIVO / (1 - OBJETIVO) for c in APUESTAS_EXCLUSION) / len(
        APUESTAS_EXCLUSION
    )
    assert math.exp(rechazo.log_valor) == pytest.approx(esperado)
    aprobacion = _proceso([True])
    assert math.exp(aprobacion.log_valor) == pytest.approx(
        sum(1 - c for c in APUESTAS_EXCLUSION) / len(APUESTAS_EXCLUSION)
    )


def test_una_familia_en_el_objetivo_se_excluye_como_mucho_delta() -> None:
    """2000 seeded sequences of 200 decided approvals at precision exactly 0.9 (the least
    favourable case of H0): the mixture ever reaches 1/δ in at most ~δ of them (Ville)."""
    rng = random.Random(3838)
    excluidas = 0
    for _ in range(2000):
        proceso = ProcesoExclusion(OBJETIVO, DELTA)
        for _ in range(200):
            proceso.actualizar(rng.random() < 0.9)
            if proceso.cruzado:
                excluidas += 1
                break
    # binomial sd over 2000 runs at 0.05 is 0.005; allow 3 sd of sampling noise
    assert excluidas / 2000 <= DELTA + 0.015, excluidas


def test_una_familia_claramente_mala_se_excluye_pronto() -> None:
    """Precision 0.5: excluded within 20 decided approvals in almost every sequence."""
    rng = random.Random(38)
    excluidas = 0
    for _ in range(500):
        proceso = ProcesoExclusion(OBJETIVO, DELTA)
        for _ in range(20):
            proceso.actualizar(rng.random() < 0.5)
        excluidas += proceso.cruzado
    assert excluidas / 500 >= 0.9, excluidas


@pytest.mark.parametrize("apuestas", [(), (0.0, 0.5), (0.5, 1.0), (-0.1,)])
def test_apuestas_invalidas(apuestas: tuple[float, ...]) -> None:
    with pytest.raises(ValueError, match="exclusion"):
        ProcesoExclusion(OBJETIVO, DELTA, apuestas)


def test_el_estado_son_las_cuentas() -> None:
    """The value is a function of the counts; restoring them (and the crossing) restores it."""
    rng = random.Random(9)
    decisiones = [rng.random() < 0.8 for _ in range(60)]
    proceso = _proceso(decisiones)
    copia = ProcesoExclusion(
        OBJETIVO,
        DELTA,
        aprobadas=sum(decisiones),
        rechazadas=60 - sum(decisiones),
        cruzado=proceso.cruzado,
    )
    assert copia.log_valor == proceso.log_valor and copia.cruzado == proceso.cruzado
    with pytest.raises(ValueError, match="negative"):
        ProcesoExclusion(OBJETIVO, DELTA, aprobadas=-1)


def test_el_maximo_se_alcanza_tras_un_rechazo() -> None:
    """Checking the crossing after rejections only is checking it after every decision."""
    rng = random.Random(12)
    for _ in range(200):
        proceso = ProcesoExclusion(OBJETIVO, DELTA)
        cruzo = False
        for _ in range(40):
            proceso.actualizar(rng.random() < 0.75)
            cruzo = cruzo or proceso.log_valor >= proceso.limite_log
        assert proceso.cruzado == cruzo
