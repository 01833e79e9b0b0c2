"""The project's one Wilson interval and its z, against values computed by hand."""

from __future__ import annotations

import pytest

from estadistica import percentile, wilson, z_bilateral


def test_z_del_95_es_el_cuantil_normal() -> None:
    assert z_bilateral(0.95) == pytest.approx(1.959963984540054, abs=1e-12)
    assert z_bilateral(0.90) == pytest.approx(1.6448536269514722, abs=1e-12)


def test_wilson_valores_conocidos() -> None:
    # Reference values: Wilson (1927) by hand with z = 1.95996; also R's prop.test(correct=FALSE).
    assert wilson(3, 5) == pytest.approx((0.2307, 0.8824), abs=5e-5)
    assert wilson(9, 10) == pytest.approx((0.5958, 0.9821), abs=5e-5)
    bajo, alto = wilson(0, 10)  # type: ignore[misc]
    assert bajo == 0.0 and alto == pytest.approx(0.2775, abs=5e-5)
    bajo, alto = wilson(50, 50)  # type: ignore[misc]
    assert bajo == pytest.approx(0.9287, abs=5e-5) and alto == 1.0
    assert wilson(0, 0) is None


def test_wilson_mas_ancho_a_mas_nivel_y_mas_estrecho_con_mas_datos() -> None:
    b95, a95 = wilson(30, 50)  # type: ignore[misc]
    b99, a99 = wilson(30, 50, nivel=0.99)  # type: ignore[misc]
    assert b99 < b95 < 0.6 < a95 < a99
    b, a = wilson(300, 500)  # type: ignore[misc]
    assert a - b < a95 - b95


def test_percentile_rango_mas_cercano() -> None:
    assert percentile([5, 1, 3, 2, 4], 0.5) == 3
    assert percentile([5, 1, 3, 2, 4], 0.95) == 5
    assert percentile([], 0.5) is None
