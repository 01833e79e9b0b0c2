"""``python -m bench.puerta_exclusion``: its check (5 approved and 5 rejected exclude in every
order, or it exits) holds, and its table has every precision and horizon, each share inside
its interval, never smaller at a longer horizon (an exclusion stays), and the coverable share
the complement of the share excluded within ``MIRADA`` approvals."""

from __future__ import annotations

import re

import pytest

from bench.puerta_exclusion import HORIZONTES, MIRADA, PRECISIONES
from tests.bench.conftest import ejecutar, salida

TASA = re.compile(r"([\d.]+) \[([\d.]+), ([\d.]+)\]")


def test_puerta_exclusion_comprueba_y_tabula_cada_precision() -> None:
    texto = salida(ejecutar("bench.puerta_exclusion", "--secuencias", "40", "--semilla", "7"))
    assert "40 sequences per row, seed 7" in texto
    assert "5 approved / 5 rejected exclude in all 252 orders" in texto
    assert f"| coverable at {MIRADA} |" in texto
    filas = {f.split("|")[1].strip(): f for f in texto.splitlines() if f.startswith("| 0.")}
    assert list(filas) == [str(p) for p in PRECISIONES]
    for fila in filas.values():
        tasas = [tuple(map(float, t)) for t in TASA.findall(fila)]
        assert len(tasas) == len(HORIZONTES) + 1, fila
        for tasa, bajo, alto in tasas:
            assert 0 <= bajo <= tasa <= alto <= 1, fila
            assert tasa * 40 == pytest.approx(round(tasa * 40)), fila  # a count out of 40
        excluidas = [t for t, _, _ in tasas[:-1]]
        assert excluidas == sorted(excluidas), fila
        cubribles = tasas[-1][0]
        assert cubribles == pytest.approx(1 - excluidas[HORIZONTES.index(MIRADA)]), fila
