"""Learn-then-Test certification of the gate's threshold: properties and a worked example."""

from __future__ import annotations

import math
import random

import pytest

from esquemas.constantes import FAMILIA_TODAS
from puerta.certificacion import (
    Candidata,
    certificar,
    certificar_por_familia,
    cola_binomial,
    cola_binomial_superior,
    cubrir_por_lote,
    curva,
    estado_cubierto_lote,
    estado_puerta,
    minimo_aprobaciones,
)


def _c(puntuacion: float | None, buena: bool, familia: str = "tv") -> Candidata:
    return Candidata(puntuacion=puntuacion, aprobada_por_personas=buena, familia=familia)


def _aleatorias(rng: random.Random, n: int) -> list[Candidata]:
    """Scores with some signal: good candidates score higher on average; some unscored."""
    salida = []
    for _ in range(n):
        buena = rng.random() < rng.choice((0.5, 0.8, 0.95))
        s = (
            None
            if rng.random() < 0.1
            else min(1.0, max(0.0, rng.gauss(0.7 if buena else 0.4, 0.2)))
        )
        if s is not None and rng.random() < 0.3:
            s = round(s, 1)  # ties
        salida.append(_c(s, buena))
    return salida


def test_cola_binomial_exacta_contra_suma_directa() -> None:
    for n in (0, 1, 5, 29, 60):
        for k in range(-1, n + 2):
            directa = sum(
                math.comb(n, i) * 0.1**i * 0.9 ** (n - i) for i in range(0, min(k, n) + 1)
            )
            assert cola_binomial(k, n, 0.1) == pytest.approx(directa, rel=1e-12, abs=1e-300)
    assert cola_binomial(10, 5000, 0.1) < 1e-300 or cola_binomial(10, 5000, 0.1) >= 0.0


def test_minimo_aprobaciones() -> None:
    assert minimo_aprobaciones(0.9, 0.05) == 29  # 0.9**29 = 0.047 <= 0.05 < 0.9**28 = 0.052
    assert minimo_aprobaciones(0.95, 0.05) == 59
    assert minimo_aprobaciones(0.9, 0.1) == 22
    for objetivo, delta in ((0.9, 0.05), (0.8, 0.01), (0.97, 0.2)):
        m = minimo_aprobaciones(objetivo, delta)
        assert objetivo**m <= delta < objetivo ** (m - 1)


def test_ejemplo_a_mano() -> None:
    """Distinct scores: 30 clean approvals from 0.99 down to 0.70, a rejected one at 0.69, then
    10 clean at 0.60 .. 0.51.

    Thresholds 0.99 .. 0.72 approve 1 .. 28 candidates: p >= 0.9**28 = 0.052 > 0.05 whatever
    the labels, so they are not tested (a walk started at n = 1 would stop at once).
    0.71: n = 29, k = 0, p = 0.9**29 = 0.0471 <= 0.05, passes.
    0.70: n = 30, k = 0, p = 0.9**30 = 0.0424, passes.
    0.69: n = 31, k = 1, p = 0.9**31 + 31 * 0.1 * 0.9**30 = 0.0382 + 0.1315 = 0.170 > 0.05: stop.
    0.60 .. 0.51 are never tested, although 0.51 (n = 41, k = 1, p = 0.0566) nearly passes.
    Certified: 0.70 with n = 30, k = 0.
    """
    cands = [_c(round(0.99 - i * 0.01, 2), True) for i in range(30)] + [_c(0.69, False)]
    cands += [_c(round(0.6 - i * 0.01, 2), True) for i in range(10)]
    cert = certificar(cands)
    assert cert.umbral == 0.70
    assert (cert.n, cert.k) == (30, 0)
    assert cert.p == pytest.approx(0.9**30)
    assert cert.motivo == "certificada"
    assert [(p.umbral, p.n, p.k) for p in cert.recorrido] == [
        (0.71, 29, 0),
        (0.7, 30, 0),
        (0.69, 31, 1),
    ]
    assert cert.recorrido[0].p == pytest.approx(0.9**29)
    assert cert.recorrido[2].p == pytest.approx(0.9**31 + 31 * 0.1 * 0.9**30)
    assert len(cert.curva) == 41 and not cert.curva[0].probado and not cert.curva[-1].probado


def test_empates_cuentan_juntos() -> None:
    """30 clean candidates tied at 0.95 form one threshold with n = 30; then one bad at 0.9."""
    cands = [_c(0.95, True) for _ in range(30)] + [_c(0.9, False)]
    cands += [_c(0.8, True) for _ in range(20)] + [_c(0.1, False), _c(None, True)]
    cert = certificar(cands)
    assert cert.umbral == 0.95
    assert (cert.n, cert.k) == (30, 0)
    assert cert.p == pytest.approx(0.9**30)
    assert [(p.umbral, p.n, p.k) for p in cert.curva] == [
        (0.95, 30, 0),
        (0.9, 31, 1),
        (0.8, 51, 1),
        (0.1, 52, 2),
    ]
    assert [p.umbral for p in cert.recorrido] == [0.95, 0.9]


def test_sigue_mientras_pasa_y_se_queda_con_el_ultimo() -> None:
    cands = [_c(0.99, True) for _ in range(29)] + [_c(0.9 - i * 0.01, True) for i in range(10)]
    cands.append(_c(0.5, False))
    cert = certificar(cands)
    assert cert.umbral == pytest.approx(0.81)  # the last clean one; 0.5 brings k = 1 with n = 40
    assert (cert.n, cert.k) == (39, 0)
    assert cert.recorrido[-1].umbral == 0.5 and cert.recorrido[-1].p > 0.05


def test_sin_datos_suficientes_con_menos_de_29_limpias() -> None:
    cands = [_c(0.99, True) for _ in range(28)] + [_c(0.2, False) for _ in range(100)]
    cert = certificar(cands)
    assert cert.umbral is None
    assert cert.motivo == "sin_datos_suficientes"
    assert cert.aprobadas_por_personas == 28
    # Unscored good candidates do not count: the gate could never approve them.
    cert = certificar([_c(0.99, True) for _ in range(28)] + [_c(None, True) for _ in range(50)])
    assert cert.motivo == "sin_datos_suficientes"
    assert certificar([]).motivo == "sin_datos_suficientes"


@pytest.mark.parametrize("semilla", range(300))
def test_propiedades_en_datos_aleatorios(semilla: int) -> None:
    rng = random.Random(semilla)
    cands = _aleatorias(rng, rng.randint(0, 150))
    objetivo, delta = rng.choice(((0.9, 0.05), (0.8, 0.1), (0.95, 0.05)))
    cert = certificar(cands, objetivo, delta)
    todos = curva(cands, objetivo)
    limpias = sum(1 for c in cands if c.puntuacion is not None and c.aprobada_por_personas)
    if cert.umbral is not None:
        # never certifies with fewer clean approvals than the minimum
        assert cert.n - cert.k >= minimo_aprobaciones(objetivo, delta)
        # the certified threshold's k/n passes the binomial test, recomputed independently
        aprobadas = [c for c in cands if c.puntuacion is not None and c.puntuacion >= cert.umbral]
        k = sum(1 for c in aprobadas if not c.aprobada_por_personas)
        assert (len(aprobadas), k) == (cert.n, cert.k)
        p = sum(
            math.comb(len(aprobadas), i) * (1 - objetivo) ** i * objetivo ** (len(aprobadas) - i)
            for i in range(k + 1)
        )
        assert p <= delta * (1 + 1e-9)
        assert cert.motivo == "certificada"
    else:
        assert cert.motivo == (
            "sin_datos_suficientes"
            if limpias < minimo_aprobaciones(objetivo, delta)
            else "precision_no_certificada"
        )
    # the walk: strictest first from the first threshold with n >= the minimum, contiguous,
    # every tested point but the last passed, and it stops at the first failure
    minimo = minimo_aprobaciones(objetivo, delta)
    recorrido = cert.recorrido
    esperado = [p for p in todos if p.n >= minimo][: len(recorrido)]
    assert [(p.umbral, p.n, p.k) for p in recorrido] == [(p.umbral, p.n, p.k) for p in esperado]
    assert all(p.p <= delta for p in recorrido[:-1])
    if len(recorrido) < len([p for p in todos if p.n >= minimo]):
        assert recorrido[-1].p > delta
    if cert.umbral is not None:
        assert cert.umbral == [p for p in recorrido if p.p <= delta][-1].umbral
    umbrales = [p.umbral for p in todos]
    assert umbrales == sorted(set(umbrales), reverse=True)


def test_por_familia_propia_si_certifica_sola_y_siempre_la_conjunta() -> None:
    buenas_tv = [_c(0.97, True, "tv") for _ in range(40)]
    pocas_nevera = [_c(0.97, True, "nevera") for _ in range(10)]
    malas_horno = [_c(0.96, False, "horno") for _ in range(2)]
    resultado = certificar_por_familia(buenas_tv + pocas_nevera + malas_horno)
    assert set(resultado) == {FAMILIA_TODAS, "tv"}
    assert resultado["tv"].umbral == 0.97 and resultado["tv"].n == 40
    conjunta = resultado[FAMILIA_TODAS]
    assert conjunta.umbral == 0.97 and (conjunta.n, conjunta.k) == (50, 0)
    # No data certify: only the pooled record, closed, with its reason.
    cerrada = certificar_por_familia(pocas_nevera)
    assert list(cerrada) == [FAMILIA_TODAS]
    assert cerrada[FAMILIA_TODAS].motivo == "sin_datos_suficientes"


def test_la_cola_superior_es_el_complemento_exacto() -> None:
    for n in (0, 1, 10, 57):
        for k in range(-1, n + 2):
            esperado = 1.0 - cola_binomial(k - 1, n, 0.1)
            assert cola_binomial_superior(k, n, 0.1) == pytest.approx(esperado, abs=1e-12)
    # a tail far below float's epsilon keeps its digits (1 - P(<= k-1) would give 0.0)
    assert 0 < cola_binomial_superior(40, 40, 0.1) == pytest.approx(1e-40, rel=1e-9)


def test_cobertura_por_lote_pide_evidencia_propia_y_no_mala() -> None:
    """A batch analogue of issue 38 under v1.6: mochilas good and plentiful is covered only
    because its own approvals at λ_* certify it there; relojes 5 of 10 is excluded; gafas, all
    good but too few to certify alone, is not covered; tv has its own gate."""
    mochilas = [_c(0.97, True, "mochilas") for _ in range(60)]
    relojes = [_c(0.97, i % 2 == 0, "relojes") for i in range(10)]
    gafas = [_c(0.97, True, "gafas") for _ in range(19)]
    tv = [_c(0.97, True, "tv") for _ in range(100)]
    candidatas = mochilas + relojes + gafas + tv
    certificaciones = certificar_por_familia(candidatas)
    assert set(certificaciones) == {FAMILIA_TODAS, "mochilas", "tv"}
    # mochilas certifies alone here; drop it from the family gates to see it covered
    sin_propia = {f: c for f, c in certificaciones.items() if f != "mochilas"}
    cobertura = cubrir_por_lote(candidatas, sin_propia)
    assert {f: c.razon for f, c in cobertura.items()} == {
        "gafas": "sin_certificar",
        "mochilas": "cubierta",
        "relojes": "excluida",
        "tv": "propia",
    }
    assert (cobertura["relojes"].n, cobertura["relojes"].k) == (10, 5)
    assert cobertura["relojes"].p_exclusion == pytest.approx(cola_binomial_superior(5, 10, 0.1))
    assert cobertura["mochilas"].p == pytest.approx(0.9**60) and cobertura["gafas"].p > 0.05
    assert cobertura["mochilas"].umbral == certificaciones[FAMILIA_TODAS].umbral
    # with no certified pooled gate nothing is covered
    nada = cubrir_por_lote(gafas, certificar_por_familia(gafas))
    assert {f: c.razon for f, c in nada.items()} == {"gafas": "conjunta_cerrada"}


def test_cobertura_por_lote_en_un_umbral_que_su_propia_evidencia_eligio() -> None:
    """bolsos, many and good at 0.9, pulls the pooled λ down to 0.9; without bolsos the pooled
    walk stops at 0.97, so its own test at 0.9 would be at a λ its labels chose: not covered."""
    bolsos = [_c(0.9, True, "bolsos") for _ in range(200)]
    tv = [_c(0.97, True, "tv") for _ in range(40)] + [_c(0.9, i % 3 == 0, "tv") for i in range(9)]
    certificaciones = certificar_por_familia(bolsos + tv)
    assert certificaciones[FAMILIA_TODAS].umbral == 0.9
    solo_conjunta = {FAMILIA_TODAS: certificaciones[FAMILIA_TODAS]}
    cobertura = cubrir_por_lote(bolsos + tv, solo_conjunta)
    assert cobertura["bolsos"].razon == "umbral_propio"
    assert cobertura["bolsos"].p < 0.05  # its own test would pass: the rule, not the data


def test_el_registro_cubierto_del_lote_descansa_en_la_conjunta() -> None:
    """What ``fichas calibrar`` writes for a covered family: open at the pooled λ, resting on
    the pooled record written beside it, the family's own n and k, signed ``calibrar``; the
    resolution then governs the family by it, and a family not covered gets none."""
    from datetime import UTC, datetime

    from esquemas.constantes import MOTIVO_PUERTA_CUBIERTA
    from harness.estados_puerta import clave_fake
    from puerta.resolucion import resolver

    candidatas = [_c(0.97, True, "mochilas") for _ in range(120)]
    candidatas += [_c(0.97, i % 2 == 0, "relojes") for i in range(10)]
    candidatas += [_c(0.97, True, "tv") for _ in range(100)]  # the pooled λ without mochilas
    certificaciones = {FAMILIA_TODAS: certificar_por_familia(candidatas)[FAMILIA_TODAS]}
    cobertura = cubrir_por_lote(candidatas, certificaciones)
    ahora = datetime(2026, 12, 1, tzinfo=UTC)
    conjunta = estado_puerta(
        FAMILIA_TODAS, clave_fake(), certificaciones[FAMILIA_TODAS], "o", ahora
    )
    cubierta = estado_cubierto_lote(cobertura["mochilas"], conjunta, "ltt:conjunto; lote")
    assert cubierta.motivo == MOTIVO_PUERTA_CUBIERTA and cubierta.abierta
    assert cubierta.umbral == conjunta.umbral and cubierta.conjunta_actualizada_en == ahora
    assert (cubierta.n, cubierta.k) == (cobertura["mochilas"].n, 0)
    assert cubierta.abierta_por == "calibrar" and cubierta.origen_datos.startswith("cobertura:lote")
    estados = {e.id: e for e in (conjunta, cubierta)}
    assert resolver("mochilas", clave_fake(), estados).razon == "conjunta"
    assert resolver("relojes", clave_fake(), estados).razon == "sin_registro"
    with pytest.raises(ValueError, match="not covered"):
        estado_cubierto_lote(cobertura["relojes"], conjunta, "o")


def test_cobertura_por_lote_cuenta_solo_lo_que_la_conjunta_aprobaria() -> None:
    altas = [_c(0.99, True, "tv") for _ in range(60)]
    bajas = [_c(0.6, False, "radio") for _ in range(30)] + [_c(None, True, "radio")] * 30
    certificaciones = certificar_por_familia(altas + bajas)
    umbral = certificaciones[FAMILIA_TODAS].umbral
    assert umbral is not None and umbral > 0.6
    radio = cubrir_por_lote(altas + bajas, {FAMILIA_TODAS: certificaciones[FAMILIA_TODAS]})
    assert (radio["radio"].razon, radio["radio"].n, radio["radio"].k) == (
        "sin_certificar",
        0,
        0,
    )


def test_parametros_invalidos() -> None:
    with pytest.raises(ValueError):
        certificar([], objetivo=1.0)
    with pytest.raises(ValueError):
        certificar([], delta=0.0)
