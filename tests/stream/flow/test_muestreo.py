"""The sample's two draws (v1.6): the hash of the event_id, and the daily minimum per family."""

from __future__ import annotations

from datetime import UTC, date, datetime

from stream.flow.muestreo import MinimoDiario, dia_utc, muestreo, sampled

LUNES = "2026-03-02T10:00:00Z"
MARTES = "2026-03-03T00:00:01Z"


def test_el_minimo_toma_las_primeras_de_cada_familia_y_dia() -> None:
    minimo = MinimoDiario(2)
    dia = date(2026, 3, 2)
    assert [minimo.toma("zapatillas", dia, f"z{i}") for i in range(4)] == [True, True, False, False]
    # another family has its own count; so has the next day
    assert minimo.toma("botellas", dia, "b0") is True
    assert minimo.toma("zapatillas", date(2026, 3, 3), "z9") is True


def test_una_ficha_escrita_otra_vez_se_elige_otra_vez() -> None:
    """A redelivered outcome (same event_id) chosen before is chosen again, and does not use
    up another of the day's places; one not chosen stays not chosen."""
    minimo = MinimoDiario(1)
    dia = date(2026, 3, 2)
    assert minimo.toma("zapatillas", dia, "a") is True
    assert minimo.toma("zapatillas", dia, "b") is False
    assert minimo.toma("zapatillas", dia, "a") is True
    assert minimo.toma("zapatillas", dia, "b") is False


def test_cero_apaga_el_minimo() -> None:
    assert MinimoDiario(0).toma("zapatillas", date(2026, 3, 2), "a") is False


def test_solo_se_recuerdan_hoy_y_ayer() -> None:
    """Memory stays bounded: days before yesterday are dropped when a new day starts."""
    minimo = MinimoDiario(3)
    for d in range(1, 11):
        minimo.toma("zapatillas", date(2026, 3, d), f"e{d}")
    assert {k[1].day for k in minimo._elegidas} == {9, 10}


def test_el_dia_es_el_utc_del_sello() -> None:
    assert dia_utc("2026-03-02T23:30:00-02:00") == date(2026, 3, 3)
    assert dia_utc(MARTES) == date(2026, 3, 3)
    # not a timestamp: today's, never an exception that would stop the outcome
    assert dia_utc(None) == dia_utc("no es una fecha") == datetime.now(UTC).date()


def test_muestreo_dice_por_que() -> None:
    """The hash's draw is named first (it is the one proportional to the volume); the daily
    minimum samples what the hash left out, and every publication counts toward it."""
    ids = [f"ev-{i}" for i in range(50)]
    por_hash = [i for i in ids if sampled(i, 0.2)]
    fuera = [i for i in ids if not sampled(i, 0.2)]
    assert por_hash and len(fuera) >= 3
    minimo = MinimoDiario(2)
    primero = por_hash[0]
    assert muestreo(primero, "zapatillas", LUNES, 0.2, minimo) == "proporcion"
    assert muestreo(fuera[0], "zapatillas", LUNES, 0.2, minimo) == "minimo_diario"
    # two places, both used (the hash-sampled one counted): the next is not sampled
    assert muestreo(fuera[1], "zapatillas", LUNES, 0.2, minimo) is None
    assert muestreo(fuera[2], "zapatillas", MARTES, 0.2, minimo) == "minimo_diario"
    assert muestreo(fuera[1], "zapatillas", LUNES, 0.0, MinimoDiario(0)) is None
