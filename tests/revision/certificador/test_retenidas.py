"""Recall's two samples after issue 47 (v1.6): the blind shadow share is not "held back", and
the daily minimum is not drawn at the sample's rate, so neither enters C / (C + A)."""

from __future__ import annotations

from esquemas.sombra import en_muestra_sombra
from revision.certificador import retenidas

PUERTA = {"umbral": 0.8}


def test_la_parte_ciega_no_esta_en_la_muestra_de_retenidas() -> None:
    ids = [f"ev-{i}" for i in range(2000)]
    en_la_parte = {e for e in ids if en_muestra_sombra(e, 0.3)}
    assert 500 <= len(en_la_parte) <= 700
    sin_parte = {e for e in ids if retenidas.en_muestra(e, 1.0)}
    con_parte = {e for e in ids if retenidas.en_muestra(e, 1.0, 0.3)}
    assert sin_parte == set(ids)
    assert con_parte == set(ids) - en_la_parte


def test_calcular_deja_fuera_la_parte_ciega() -> None:
    """Every held-back item of the share approved unchanged (the gate would have published
    it): counted as A, it would pull recall down by the share; left out, recall is the
    non-share items'."""
    ids = [f"r-{i}" for i in range(40)]
    parte = [e for e in ids if en_muestra_sombra(e, 0.3)]
    fuera = [e for e in ids if not en_muestra_sombra(e, 0.3)]
    assert parte and fuera
    filas = [(e, "zapatillas", "aprobada") for e in parte] + [
        (e, "zapatillas", "rechazada") for e in fuera
    ]
    correctas = {"zapatillas": 10}
    assert retenidas.calcular(correctas, filas, 1.0, 0.3)["zapatillas"].valor == 1.0
    con_parte = retenidas.calcular(correctas, filas, 1.0)["zapatillas"].valor
    assert con_parte == 10 / (10 + len(parte))


def test_c_no_cuenta_el_minimo_diario() -> None:
    """A correct verdict counts into C only on a gate's publication drawn at the sample's rate:
    ``proporcion``, or a record from before v1.6 (no ``muestreo``)."""
    veredictos = [
        ("correcta", {"familia": "botellas", "puerta": PUERTA, "muestreo": "proporcion"}),
        ("correcta", {"familia": "botellas", "puerta": PUERTA}),
        ("correcta", {"familia": "botellas", "puerta": PUERTA, "muestreo": "minimo_diario"}),
        ("correcta", {"familia": "botellas", "puerta": None, "muestreo": "proporcion"}),
        ("incorrecta", {"familia": "botellas", "puerta": PUERTA, "muestreo": "proporcion"}),
    ]
    assert retenidas.correctas_publicadas(veredictos) == {"botellas": 2}
