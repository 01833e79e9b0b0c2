"""bench.puerta_garantia: its vectorised opener and closing agree with the product's code on
random sequences (spread scores, obsolete fichas, a drop), and it prints its tables."""

from __future__ import annotations

import numpy as np
import pytest

from bench.puerta_garantia import (
    NUNCA,
    REGLAS,
    V15,
    V16,
    _referencia_cierre,
    _referencia_v15,
    _referencia_v16,
    abrir,
    cerrar,
    main,
)


def test_el_abridor_vectorizado_es_el_del_producto() -> None:
    rng = np.random.default_rng(7)
    s = rng.uniform(0.5, 1.0, (8, 400))
    x = (rng.random(s.shape) < 0.97).astype(np.int8)
    x[rng.random(s.shape) < 0.03] = -1  # obsolete before anyone decided
    for version, referencia in ((V16, _referencia_v16), (V15, _referencia_v15)):
        primera, umbral = abrir(s, x, REGLAS[version])
        for i in range(len(s)):
            t, u = referencia(s[i], x[i])
            assert t == primera[i], (version, i)
            assert t == NUNCA or u == pytest.approx(umbral[i])
    assert (abrir(s, x, REGLAS[V16])[0] < NUNCA).any()


def test_el_cierre_vectorizado_es_el_del_producto() -> None:
    rng = np.random.default_rng(9)
    x = np.concatenate(
        [(rng.random((3, 150)) < 0.97), (rng.random((3, 350)) < 0.7)], axis=1
    ).astype(np.int8)
    for version in (V15, V16):
        cierre = cerrar(x, version)
        assert [_referencia_cierre(fila, version) for fila in x] == list(cierre)
    assert (cerrar(x, V16) <= cerrar(x, V15)).all()


def test_imprime_sus_tablas(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("bench.puerta_garantia.HORIZONTE", 300)  # the tool, not a measurement
    assert main(["catalogo", "--secuencias", "20"]) == 0
    salida = capsys.readouterr().out
    assert "## catalogo" in salida and "| 5 | 4 |" in salida
    with pytest.raises(SystemExit):
        main(["nada"])
