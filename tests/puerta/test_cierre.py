"""Closing (v1.6, issue 47): the online bound and the change detector, each at half of δ."""

from __future__ import annotations

from esquemas.constantes import MOTIVO_PUERTA_CAMBIO, MOTIVO_PUERTA_COTA_BAJA
from puerta.cierre import Cierre
from puerta.cota import CotaEnLinea

OBJETIVO = 0.9
DELTA = 0.05


def test_sin_veredictos_no_cierra() -> None:
    cierre = Cierre(OBJETIVO, DELTA)
    assert (cierre.n, cierre.motivo()) == (0, None)


def test_unos_pocos_incorrectos_al_principio_los_cierra_la_cota() -> None:
    """Right after certification the bound reacts first: a handful of incorrect verdicts."""
    cierre = Cierre(OBJETIVO, DELTA)
    while cierre.motivo() is None:
        cierre.anotar(False)
        assert cierre.n < 10
    assert cierre.motivo() == MOTIVO_PUERTA_COTA_BAJA
    # at half of δ it needs at least as many as the v1.5 bound at the whole δ
    sola = CotaEnLinea(delta=DELTA)
    veces = 0
    while sola.cota_superior >= OBJETIVO:
        sola.actualizar(False)
        veces += 1
    assert cierre.n >= veces


def test_tras_una_larga_racha_buena_cierra_el_detector() -> None:
    """1,000 correct verdicts, then precision 0.8: the bound since certification still holds
    the mean above the objective when the detector closes the gate."""
    cierre = Cierre(OBJETIVO, DELTA)
    for _ in range(1000):
        cierre.anotar(True)
    tras = 0
    while cierre.motivo() is None:
        cierre.anotar(tras % 5 != 4)
        tras += 1
        assert tras < 1000
    assert cierre.motivo() == MOTIVO_PUERTA_CAMBIO
    assert cierre.cota.cota_superior >= OBJETIVO
    assert tras < 400
