"""The anytime-valid opener: the fallback walk over the grid, one e-process per λ (v1.6)."""

from __future__ import annotations

import itertools
import json
import math
import random

import pytest

from puerta.apuestas import TRUNCAMIENTO
from puerta.exclusion import APUESTAS_EXCLUSION
from puerta.secuencial import (
    PESOS,
    REJILLA,
    EstadoSecuencia,
    Observacion,
    SecuenciaPuerta,
    avanzar,
    certificar_secuencia,
    inicial,
    leer,
)

OBJETIVO = 0.9
DELTA = 0.05


def _aprobadas(cuantas: int, puntuacion: float = 1.0) -> list[Observacion]:
    return [Observacion(puntuacion, True, True) for _ in range(cuantas)]


def _rechazadas(cuantas: int, puntuacion: float = 1.0) -> list[Observacion]:
    return [Observacion(puntuacion, True, False) for _ in range(cuantas)]


def _al_azar(rng: random.Random, precision: float, largo: int) -> list[Observacion]:
    """Decided fichas with scores spread over the grid and labels independent of them."""
    return [
        Observacion(rng.uniform(0.5, 1.0), True, rng.random() < precision) for _ in range(largo)
    ]


def _e_tras_aprobaciones(n: int) -> float:
    """The e-value after n approvals in a row, from the formulas alone: half the capital on
    the plug-in (its bet is the cap while every decision is an approval), half on the average
    of the constant bets c / objetivo."""
    plugin = (1 + TRUNCAMIENTO / OBJETIVO * (1 - OBJETIVO)) ** n
    mezcla = sum((1 + c * (1 - OBJETIVO) / OBJETIVO) ** n for c in APUESTAS_EXCLUSION)
    return (plugin + mezcla / len(APUESTAS_EXCLUSION)) / 2


def test_el_primer_factor_es_la_media_de_la_apuesta_truncada_y_la_mezcla() -> None:
    """Before any data the shrunk mean is 1, so the plug-in bets the cap 0.75 / 0.9; the other
    half of the capital is on the fixed bets c / 0.9."""
    apuesta = TRUNCAMIENTO / OBJETIVO
    arriba = certificar_secuencia(_aprobadas(1), OBJETIVO, DELTA).umbrales[0]
    abajo = certificar_secuencia(_rechazadas(1), OBJETIVO, DELTA).umbrales[0]
    media_si = sum(1 + c * (1 - OBJETIVO) / OBJETIVO for c in APUESTAS_EXCLUSION) / 9
    media_no = sum(1 - c for c in APUESTAS_EXCLUSION) / 9
    assert arriba.e_valor == pytest.approx((1 + apuesta * (1 - OBJETIVO) + media_si) / 2)
    assert abajo.e_valor == pytest.approx((1 - apuesta * OBJETIVO + media_no) / 2)
    assert arriba.e_valor == pytest.approx(_e_tras_aprobaciones(1))
    assert (arriba.n, arriba.k, abajo.n, abajo.k) == (1, 0, 1, 1)


def test_una_secuencia_toda_aprobada_abre_en_el_umbral_mas_laxo() -> None:
    """The strictest λ carries PESOS[0] of δ: it must reach 1 / (PESOS[0] δ); once it is
    rejected its level passes down the grid and every λ follows (they saw the same fichas)."""
    nivel = 1 / (PESOS[0] * DELTA)
    necesarias = next(n for n in range(1, 200) if _e_tras_aprobaciones(n) >= nivel)
    assert 29 <= necesarias <= 50  # no bet crosses 1/δ in fewer than 29
    cerrada = certificar_secuencia(_aprobadas(necesarias - 1), OBJETIVO, DELTA)
    abierta = certificar_secuencia(_aprobadas(necesarias), OBJETIVO, DELTA)
    assert cerrada.umbral is None and not cerrada.abierta
    assert (cerrada.n, cerrada.k, cerrada.bloqueo, cerrada.faltan) == (0, 0, REJILLA[0], 1)
    assert cerrada.umbrales[0].nivel == pytest.approx(nivel)
    assert abierta.umbral == REJILLA[-1]
    assert (abierta.n, abierta.k, abierta.bloqueo, abierta.faltan) == (necesarias, 0, None, None)
    assert all(e.cruzado and e.e_max >= e.nivel for e in abierta.umbrales)


def test_alta_precision_con_algun_rechazo_abre() -> None:
    """Precision 0.97 over 400 fichas: the opener must find it (the power side)."""
    rng = random.Random(11)
    secuencia = [Observacion(1.0, True, rng.random() < 0.97) for _ in range(400)]
    resultado = certificar_secuencia(secuencia, OBJETIVO, DELTA)
    assert resultado.umbral == REJILLA[-1]
    assert resultado.k > 0


@pytest.mark.parametrize("precision", [0.8, 0.85])
def test_una_secuencia_mezclada_bajo_el_objetivo_no_abre(precision: float) -> None:
    rng = random.Random(5)
    resultado = certificar_secuencia(_al_azar(rng, precision, 600), OBJETIVO, DELTA)
    assert resultado.umbral is None
    assert not any(e.cruzado for e in resultado.umbrales)
    assert resultado.bloqueo == REJILLA[0]


def test_en_el_objetivo_exacto_un_patron_fijo_no_abre() -> None:
    """Nine approvals then one rejection, 100 times: precision exactly 0.9 never crosses."""
    secuencia = (_aprobadas(9) + _rechazadas(1)) * 100
    resultado = certificar_secuencia(secuencia, OBJETIVO, DELTA)
    assert resultado.umbral is None
    assert resultado.umbrales[0].e_max < 1 / DELTA


def test_el_recorrido_se_para_en_el_primer_umbral_sin_cruzar() -> None:
    """0.95 and 0.9 rejected, 0.85 not: the chain stops there. λ <= 0.7 would pass on their
    own but carry no weight of their own; 0.75, the grid's second entry, does not pass: the
    gate stays at 0.9."""
    secuencia = _aprobadas(200, 0.72) + _rechazadas(20, 0.87) + _aprobadas(60, 0.97)
    resultado = certificar_secuencia(secuencia, OBJETIVO, DELTA)
    cruzados = {e.umbral: e.cruzado for e in resultado.umbrales}
    assert cruzados == {u: u >= 0.9 for u in REJILLA}
    niveles = {e.umbral: e.nivel for e in resultado.umbrales}
    assert niveles[0.7] == math.inf and niveles[0.75] == pytest.approx(1 / (PESOS[4] * DELTA))
    assert resultado.umbrales[5].e_max >= 1 / DELTA  # 0.7 alone would have passed at δ
    assert (resultado.umbral, resultado.n, resultado.k) == (0.9, 60, 0)
    assert resultado.bloqueo == 0.85
    por_umbral = {e.umbral: (e.n, e.k) for e in resultado.umbrales}
    assert por_umbral[0.85] == (80, 20)
    assert por_umbral[0.7] == (280, 20)


def test_un_umbral_estricto_sin_aprobaciones_no_bloquea_la_segunda_entrada() -> None:
    """Fichas all scored 0.9 never reach 0.95: the strict entry never moves, but the grid's
    middle (0.75, PESOS[4] of δ) sees them all, and its rejection passes down to 0.5. Under
    v1.5's strictest-first walk nothing opened (v1.6, issue 47)."""
    nivel = 1 / (PESOS[4] * DELTA)
    necesarias = next(n for n in range(1, 500) if _e_tras_aprobaciones(n) >= nivel)
    casi = certificar_secuencia(_aprobadas(necesarias - 1, 0.9), OBJETIVO, DELTA)
    resultado = certificar_secuencia(_aprobadas(necesarias, 0.9), OBJETIVO, DELTA)
    assert casi.umbral is None and casi.bloqueo == 0.95
    assert resultado.umbral == 0.5
    assert [e.cruzado for e in resultado.umbrales] == [False] * 4 + [True] * 6
    assert resultado.bloqueo == 0.95 and resultado.umbrales[0].n == 0


def test_las_obsoletas_y_las_no_aprobables_no_cuentan() -> None:
    rng = random.Random(3)
    base = _al_azar(rng, 0.95, 150)
    ruido = [
        Observacion(0.99, False, None),  # code failed, obsolete: reaches no λ
        Observacion(0.99, False, False),  # code failed: an open gate would not publish it
        Observacion(None, True, False),  # no score: never approvable
        Observacion(0.3, True, False),  # below every threshold
    ]
    mezclada: list[Observacion] = []
    for i, observacion in enumerate(base):
        mezclada.append(observacion)
        mezclada.extend(ruido if i % 7 == 0 else ())
    assert len(mezclada) > len(base)
    assert certificar_secuencia(mezclada, OBJETIVO, DELTA) == certificar_secuencia(
        base, OBJETIVO, DELTA
    )


def test_una_obsoleta_cuenta_como_fallo() -> None:
    """v1.6: a ficha superseded before anyone decided it is a failure at every λ it reaches
    (leaving the hard ones undecided until a newer version arrives can never open a gate), and
    a success for the exclusion (it can never wrongly exclude a family)."""
    obsoleta = Observacion(0.97, True, None)
    con = certificar_secuencia([*_aprobadas(30), obsoleta, *_aprobadas(30)], OBJETIVO, DELTA)
    fallo = certificar_secuencia(
        _aprobadas(30) + _rechazadas(1, 0.97) + _aprobadas(30), OBJETIVO, DELTA
    )
    assert [(e.n, e.k, e.e_max) for e in con.umbrales] == [
        (e.n, e.k, e.e_max) for e in fallo.umbrales
    ]
    assert [e.obsoletas for e in con.umbrales] == [1] * len(REJILLA)
    # the exclusion reads it as an approval: 5 rejections and 5 obsolete do not exclude the
    # family, 10 rejections do
    mitad = _aprobadas(10) + _rechazadas(5) + [obsoleta] * 5
    assert not certificar_secuencia(mitad, OBJETIVO, DELTA).umbrales[0].excluido
    diez = certificar_secuencia(_aprobadas(10) + _rechazadas(10), OBJETIVO, DELTA)
    assert diez.umbrales[0].excluido


@pytest.mark.parametrize("semilla", range(8))
def test_faltan_es_exacto(semilla: int) -> None:
    """Feeding exactly ``faltan`` approvals at ``bloqueo`` crosses it; one fewer does not."""
    rng = random.Random(semilla)
    prefijo = _al_azar(rng, rng.choice([0.8, 0.9, 0.95]), rng.randint(5, 120))
    antes = certificar_secuencia(prefijo, OBJETIVO, DELTA)
    assert antes.bloqueo is not None and antes.faltan is not None and antes.faltan >= 1
    indice = REJILLA.index(antes.bloqueo)
    corto = certificar_secuencia(
        prefijo + _aprobadas(antes.faltan - 1, antes.bloqueo), OBJETIVO, DELTA
    )
    justo = certificar_secuencia(prefijo + _aprobadas(antes.faltan, antes.bloqueo), OBJETIVO, DELTA)
    assert not corto.umbrales[indice].cruzado
    assert corto.umbral == antes.umbral
    assert justo.umbrales[indice].cruzado
    assert justo.umbral is not None and justo.umbral <= antes.bloqueo


def test_el_orden_de_llegada_es_el_que_cuenta() -> None:
    """Same decisions, other order: the running maximum keeps an early crossing, and an early
    rejection delays it. The result depends on the sequence only as given."""
    abre = next(
        n for n in range(1, 200) if certificar_secuencia(_aprobadas(n), OBJETIVO, DELTA).abierta
    )
    primero_bien = _aprobadas(abre) + _rechazadas(3)
    primero_mal = _rechazadas(3) + _aprobadas(abre)
    bien = certificar_secuencia(primero_bien, OBJETIVO, DELTA)
    mal = certificar_secuencia(primero_mal, OBJETIVO, DELTA)
    assert bien.umbral == REJILLA[-1] and (bien.n, bien.k) == (abre + 3, 3)
    primera = bien.umbrales[0]
    assert primera.e_valor < primera.nivel <= primera.e_max  # crossed, stays
    assert mal.umbral is None
    assert mal.faltan is not None and mal.faltan > 0


def test_mirar_tras_cada_decision_da_lo_mismo_y_solo_se_relaja() -> None:
    """The incremental walk equals the batch one at every prefix, and λ only moves down."""
    rng = random.Random(17)
    secuencia = _al_azar(rng, 0.99, 600)
    incremental = SecuenciaPuerta(OBJETIVO, DELTA)
    anterior: float | None = None
    abrio = False
    for i, observacion in enumerate(secuencia):
        incremental.actualizar(observacion)
        ahora = incremental.resultado()
        assert incremental.umbral() == ahora.umbral
        if i % 60 == 0:
            assert ahora == certificar_secuencia(secuencia[: i + 1], OBJETIVO, DELTA)
        if anterior is not None:
            assert ahora.umbral is not None and ahora.umbral <= anterior
        anterior = ahora.umbral
        abrio = abrio or ahora.abierta
    assert abrio


@pytest.mark.parametrize(
    ("objetivo", "delta", "rejilla", "mensaje"),
    [
        (0.0, DELTA, REJILLA, "objetivo"),
        (1.0, DELTA, REJILLA, "objetivo"),
        (OBJETIVO, 0.0, REJILLA, "delta"),
        (OBJETIVO, 1.5, REJILLA, "delta"),
        (OBJETIVO, DELTA, (), "empty"),
        (OBJETIVO, DELTA, (0.9, 0.95), "strictly decreasing"),
        (OBJETIVO, DELTA, (0.9, 0.9, 0.8), "strictly decreasing"),
        (OBJETIVO, DELTA, (1.2, 0.9), r"\[0, 1\]"),
        (OBJETIVO, DELTA, (0.9, math.nan), r"\[0, 1\]"),
    ],
)
def test_parametros_invalidos(
    objetivo: float, delta: float, rejilla: tuple[float, ...], mensaje: str
) -> None:
    with pytest.raises(ValueError, match=mensaje):
        certificar_secuencia(_aprobadas(3), objetivo, delta, rejilla)


@pytest.mark.parametrize("puntuacion", [1.2, -0.1, math.nan, math.inf])
def test_puntuacion_fuera_de_rango(puntuacion: float) -> None:
    with pytest.raises(ValueError, match="puntuacion"):
        Observacion(puntuacion, True, True)


def test_puntuaciones_en_los_bordes_valen() -> None:
    assert Observacion(0.0, True, True).alcanza(0.0)
    assert Observacion(1.0, True, False).alcanza(0.95)
    assert not Observacion(None, True, True).alcanza(0.0)
    assert not Observacion(0.99, False, True).alcanza(0.5)


# --- The sequence's stored state (issue 38): advanced by new decisions only, equal to a
# recomputation from scratch bit for bit, whatever the split points and JSON round trips.


def _con_posiciones(
    rng: random.Random, observaciones: list[Observacion]
) -> list[tuple[int, Observacion]]:
    """Arrival positions that increase with gaps (fichas of other families in between)."""
    posicion, resultado = 3, []
    for observacion in observaciones:
        posicion += rng.randint(1, 4)
        resultado.append((posicion, observacion))
    return resultado


def _ruidosa(rng: random.Random, largo: int) -> list[Observacion]:
    """Decided, obsolete, code-failed and unscored fichas, scores over and under the grid."""
    resultado = []
    for _ in range(largo):
        tirada = rng.random()
        if tirada < 0.05:
            resultado.append(Observacion(rng.uniform(0.5, 1), True, None))
        elif tirada < 0.1:
            resultado.append(Observacion(rng.uniform(0.5, 1), False, rng.random() < 0.5))
        elif tirada < 0.12:
            resultado.append(Observacion(None, True, False))
        else:
            resultado.append(Observacion(rng.uniform(0.3, 1), True, rng.random() < 0.93))
    return resultado


def test_certificar_es_avanzar_desde_el_inicio_y_leer() -> None:
    rng = random.Random(38)
    observaciones = _ruidosa(rng, 400)
    estado = avanzar(inicial(OBJETIVO, DELTA), enumerate(observaciones))
    assert leer(estado) == certificar_secuencia(observaciones, OBJETIVO, DELTA)
    assert estado.posicion == 399 and estado.desde == 0
    assert estado.decididas == sum(o.cuenta(REJILLA) for o in observaciones)
    for guardado, visto in zip(estado.umbrales, leer(estado).umbrales, strict=True):
        assert (guardado.n, guardado.n - guardado.aprobadas) == (visto.n, visto.k)


@pytest.mark.parametrize("semilla", range(4))
def test_guardar_y_avanzar_por_tramos_da_lo_mismo_que_recalcular(semilla: int) -> None:
    """Any split points, each intermediate state through JSON and back: the same state, bit
    for bit (its JSON text is equal), as one pass over the whole prefix."""
    rng = random.Random(semilla)
    llegadas = _con_posiciones(rng, _ruidosa(rng, 500))
    de_una = avanzar(inicial(OBJETIVO, DELTA), llegadas)
    cortes = sorted(rng.sample(range(1, len(llegadas)), 6))
    estado = inicial(OBJETIVO, DELTA)
    for desde, hasta in itertools.pairwise([0, *cortes, len(llegadas)]):
        texto = avanzar(estado, llegadas[desde:hasta]).a_json()
        estado = EstadoSecuencia.de_json(texto)
        assert estado.a_json() == texto
    assert estado == de_una
    assert estado.a_json() == de_una.a_json()
    assert leer(estado) == leer(de_una)


def test_el_mismo_tramo_dos_veces_no_cambia_nada() -> None:
    rng = random.Random(5)
    llegadas = _con_posiciones(rng, _ruidosa(rng, 120))
    una = avanzar(inicial(OBJETIVO, DELTA), llegadas[:80])
    assert avanzar(una, llegadas[:80]) is una
    assert avanzar(una, []) is una
    # an overlapping prefix consumes only what is new
    assert avanzar(una, llegadas) == avanzar(una, llegadas[80:])
    assert avanzar(una, llegadas) == avanzar(inicial(OBJETIVO, DELTA), llegadas)


def test_posiciones_que_no_crecen_se_rechazan() -> None:
    ficha = Observacion(1.0, True, True)
    with pytest.raises(ValueError, match="must increase"):
        avanzar(inicial(OBJETIVO, DELTA), [(4, ficha), (4, ficha)])
    with pytest.raises(ValueError, match="must increase"):
        avanzar(inicial(OBJETIVO, DELTA), [(4, ficha), (2, ficha)])


def test_una_secuencia_reiniciada_no_cuenta_lo_anterior_a_su_inicio() -> None:
    ficha = Observacion(1.0, True, True)
    estado = avanzar(inicial(OBJETIVO, DELTA, desde=10), [(i, ficha) for i in range(50)])
    assert (estado.desde, estado.posicion, estado.decididas) == (10, 49, 40)
    assert leer(estado) == certificar_secuencia([ficha] * 40, OBJETIVO, DELTA)


def test_el_estado_lleva_la_exclusion_de_cada_umbral() -> None:
    """5 approved and 5 rejected at 0.97: excluded at every λ; the opener never crossed."""
    mezcla = _aprobadas(5, 0.97) + _rechazadas(5, 0.97)
    resultado = leer(avanzar(inicial(OBJETIVO, DELTA), enumerate(mezcla)))
    assert all(e.excluido and e.e_exclusion >= 1 / DELTA for e in resultado.umbrales)
    assert not any(e.cruzado for e in resultado.umbrales)
    buena = leer(avanzar(inicial(OBJETIVO, DELTA), enumerate(_aprobadas(40, 0.97))))
    assert not any(e.excluido for e in buena.umbrales)
    assert buena.en(0.9) is not None and buena.en(0.93) is None


@pytest.mark.parametrize(
    ("cambio", "mensaje"),
    [
        ({"posicion": -5}, "before the sequence's start"),
        ({"apuestas_exclusion": [0.1, 1.0]}, "exclusion bet"),
        ({"objetivo": 1.5}, "objetivo"),
    ],
)
def test_un_estado_guardado_incoherente_se_rechaza(cambio: dict[str, object], mensaje: str) -> None:
    datos = json.loads(avanzar(inicial(OBJETIVO, DELTA), enumerate(_aprobadas(3))).a_json())
    with pytest.raises(ValueError, match=mensaje):
        EstadoSecuencia.de_json(json.dumps(datos | cambio))


def test_un_umbral_guardado_incoherente_se_rechaza() -> None:
    datos = json.loads(avanzar(inicial(OBJETIVO, DELTA), enumerate(_aprobadas(3))).a_json())
    datos["umbrales"][0]["aprobadas"] = 7
    with pytest.raises(ValueError, match="inconsistent"):
        EstadoSecuencia.de_json(json.dumps(datos))
    datos["umbrales"][0]["aprobadas"] = 3
    datos["umbrales"][0]["log_capital"] = float("nan")
    with pytest.raises(ValueError):
        EstadoSecuencia.de_json(json.dumps(datos))


def test_un_estado_de_otro_formato_se_recalcula() -> None:
    """A v1.5 state (format 1 skipped obsolete fichas) or an unknown one is not read: None, and
    the caller recomputes the sequence from its rows."""
    datos = json.loads(avanzar(inicial(OBJETIVO, DELTA), enumerate(_aprobadas(3))).a_json())
    for formato in ("fichas-secuencia/1", "fichas-secuencia/9"):
        assert EstadoSecuencia.de_json(json.dumps({**datos, "formato": formato})) is None


def test_los_pesos_del_recorrido_se_comprueban() -> None:
    with pytest.raises(ValueError, match="sum to at most 1"):
        SecuenciaPuerta(OBJETIVO, DELTA, pesos=(0.9, 0.2) + (0.0,) * 8)
    with pytest.raises(ValueError, match="weights for a grid"):
        SecuenciaPuerta(OBJETIVO, DELTA, pesos=(1.0,))
    # another grid than the default: the fixed-sequence walk, all of δ on the strictest λ
    assert SecuenciaPuerta(OBJETIVO, DELTA, rejilla=(0.9, 0.8)).pesos == (1.0, 0.0)
