"""Coverage by the pooled gate (issue 38; v1.6, issue 47): only a family whose own evidence
since the pooled certification certifies the pooled λ, none of its evidence showing it below the
objective, in scope, not held, and never closed by what people said of its publications."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from puerta.alcance import Alcance
from puerta.cobertura import cobertura, escritura, estado_cubierto, secuencia_de_cobertura
from puerta.resolucion import puerta_para, resolver, umbral_aplicable
from puerta.retencion import registro_retencion
from puerta.secuencial import EstadoSecuencia, Observacion, avanzar, inicial

OBJETIVO = 0.9
DELTA = 0.05
CLAVE = ClavePuerta(
    modelo="qwen",
    prompt_evaluador_sha256="a" * 64,
    criterios_version="2-1",
    modo_evaluador="veredicto",
    prompt_generador_sha256="b" * 64,
)
ABIERTA_EN = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
AHORA = ABIERTA_EN + timedelta(minutes=5)
ALCANCE_TOTAL = Alcance()


def _secuencia(aprobadas: int, rechazadas: int = 0, puntuacion: float = 0.97) -> EstadoSecuencia:
    fichas = [Observacion(puntuacion, True, True)] * aprobadas
    fichas += [Observacion(puntuacion, True, False)] * rechazadas
    return avanzar(inicial(OBJETIVO, DELTA), enumerate(fichas))


def _desde(
    conjunta: EstadoPuerta, aprobadas: int, rechazadas: int = 0, puntuacion: float = 0.97
) -> EstadoSecuencia:
    """The family's coverage sequence: its fichas since the pooled certification, at λ_*."""
    fichas = [Observacion(puntuacion, True, True)] * aprobadas
    fichas += [Observacion(puntuacion, True, False)] * rechazadas
    inicio = secuencia_de_cobertura(conjunta, 1000, OBJETIVO, DELTA)
    return avanzar(inicio, enumerate(fichas, start=1000))


def _conjunta(umbral: float = 0.5, abierta_en: datetime = ABIERTA_EN) -> EstadoPuerta:
    return EstadoPuerta(
        familia=FAMILIA_TODAS,
        clave=CLAVE,
        abierta=True,
        umbral=umbral,
        objetivo=OBJETIVO,
        delta=DELTA,
        n=130,
        k=5,
        origen_datos="secuencial:sombra",
        motivo="certificada",
        actualizada_en=abierta_en,
        abierta_por="automatico",
    )


def _mapa(*estados: EstadoPuerta) -> dict[str, EstadoPuerta]:
    return {e.id: e for e in estados}


def test_el_caso_del_issue_solo_publica_la_familia_medida() -> None:
    """120 approvals of mochilas, then relojes 5 approved / 5 rejected, and a family with no
    evidence at all: with ``*`` open only mochilas is covered; the other two go to review."""
    conjunta = _conjunta()
    estados = _mapa(conjunta)
    mochilas = cobertura(
        "mochilas", CLAVE, estados, _secuencia(120), ALCANCE_TOTAL, _desde(conjunta, 60)
    )
    relojes = cobertura(
        "relojes", CLAVE, estados, _secuencia(5, 5), ALCANCE_TOTAL, _desde(conjunta, 0)
    )
    nueva = cobertura("gafas", CLAVE, estados, inicial(OBJETIVO, DELTA), ALCANCE_TOTAL)
    assert (mochilas.razon, mochilas.umbral, mochilas.n, mochilas.k) == ("cubierta", 0.5, 60, 0)
    assert mochilas.e_valor >= 1 / DELTA
    assert (relojes.razon, relojes.n, relojes.k) == ("excluida", 10, 5)
    assert relojes.e_exclusion >= 1 / DELTA
    assert (nueva.razon, nueva.n) == ("sin_certificar", 0)
    # what the app writes: the covered record of mochilas only
    escritos = [escritura(c, CLAVE, estados, AHORA) for c in (mochilas, relojes, nueva)]
    assert escritos[1:] == [None, None]
    cubierta = escritos[0]
    assert cubierta is not None
    estados[cubierta.id] = cubierta
    # and what the worker does with the topic then
    assert resolver("mochilas", CLAVE, estados).razon == "conjunta"
    for familia in ("relojes", "gafas"):
        assert resolver(familia, CLAVE, estados).razon == "sin_registro"
        assert umbral_aplicable(puerta_para(familia, CLAVE, estados)) is None


def test_el_registro_cubierto_descansa_en_la_certificacion_conjunta() -> None:
    conjunta = _conjunta(umbral=0.8)
    cob = cobertura(
        "mochilas",
        CLAVE,
        _mapa(conjunta),
        _secuencia(25, 1),
        ALCANCE_TOTAL,
        _desde(conjunta, 70, 1),
    )
    cubierta = estado_cubierto(cob, CLAVE, conjunta, AHORA)
    assert (cubierta.familia, cubierta.abierta, cubierta.umbral) == ("mochilas", True, 0.8)
    assert (cubierta.motivo, cubierta.abierta_por) == ("cubierta_por_conjunta", "automatico")
    assert (cubierta.n, cubierta.k) == (71, 1)
    assert cubierta.conjunta_actualizada_en == ABIERTA_EN and cubierta.actualizada_en == AHORA
    assert cubierta.origen_datos.startswith("cobertura:sombra; conjunta certificada el 2026-12-01")
    aplicada = umbral_aplicable(cubierta)
    assert aplicada is not None and aplicada.conjunta_certificada_en == ABIERTA_EN
    with pytest.raises(ValueError, match="not covered"):
        estado_cubierto(cob, CLAVE, _conjunta(umbral=0.5), AHORA)


def test_la_familia_se_certifica_sola_en_el_umbral_conjunto() -> None:
    """Its own e-process at λ_* since the pooled certification must reach 1/δ: the evidence
    before it (however long) is not enough, fichas scored under λ_* do not count, and a family
    at precision 0.8 since then is not covered however many fichas it has."""
    conjunta = _conjunta(umbral=0.9)
    mucha_antes = _secuencia(500)
    nada = cobertura(
        "ropa", CLAVE, _mapa(conjunta), mucha_antes, ALCANCE_TOTAL, _desde(conjunta, 0)
    )
    assert (nada.razon, nada.n) == ("sin_certificar", 0)
    faltan = next(
        i
        for i in range(1, 200)
        if cobertura(
            "ropa", CLAVE, _mapa(conjunta), mucha_antes, ALCANCE_TOTAL, _desde(conjunta, i)
        ).cubierta
    )
    assert 29 <= faltan <= 45  # no bet crosses 1/δ in fewer than 29 approvals
    bajas = cobertura(
        "ropa", CLAVE, _mapa(conjunta), mucha_antes, ALCANCE_TOTAL, _desde(conjunta, 100, 0, 0.85)
    )
    assert (bajas.razon, bajas.n) == ("sin_certificar", 0)
    ochenta = [Observacion(0.97, True, i % 5 != 4) for i in range(500)]  # precision 0.8
    desde_mala = avanzar(
        secuencia_de_cobertura(conjunta, 1000, OBJETIVO, DELTA), enumerate(ochenta, start=1000)
    )
    mala = cobertura("ropa", CLAVE, _mapa(conjunta), mucha_antes, ALCANCE_TOTAL, desde_mala)
    assert (mala.razon, mala.n, mala.k) == ("sin_certificar", 500, 100)


def test_cerrada_por_lo_que_se_dijo_de_lo_publicado_no_vuelve_a_cubrirse() -> None:
    """A covered record closed by the online bound or the change detector: the family needs a
    gate of its own; fresh approvals under the same or a new pooled certification do not do."""
    conjunta = _conjunta()
    for motivo in ("cota_en_linea_bajo_objetivo", "cambio_detectado"):
        cerrada = EstadoPuerta(
            familia="ropa",
            clave=CLAVE,
            abierta=False,
            umbral=None,
            objetivo=OBJETIVO,
            delta=DELTA,
            n=40,
            k=3,
            origen_datos="vigilancia",
            motivo=motivo,
            actualizada_en=AHORA,
        )
        cob = cobertura(
            "ropa",
            CLAVE,
            _mapa(conjunta, cerrada),
            _secuencia(80),
            ALCANCE_TOTAL,
            _desde(conjunta, 80),
        )
        assert cob.razon == "cerrada_por_vigilancia", motivo


def test_cada_condicion_en_su_orden() -> None:
    conjunta = _conjunta()
    sec = _secuencia(60)
    desde = _desde(conjunta, 60)
    propia = conjunta.model_copy(update={"familia": "ropa", "umbral": 0.9})
    casos: list[tuple[Alcance, dict[str, EstadoPuerta], str]] = [
        (Alcance(conjunta=False), _mapa(conjunta), "sin_conjunta"),
        (Alcance(frozenset({"tv"})), _mapa(conjunta), "fuera_de_alcance"),
        (
            ALCANCE_TOTAL,
            _mapa(conjunta, registro_retencion("ropa", CLAVE, True, "ana", None, AHORA)),
            "retenida",
        ),
        (ALCANCE_TOTAL, _mapa(conjunta, propia), "propia"),
        (
            ALCANCE_TOTAL,
            _mapa(conjunta, registro_retencion(FAMILIA_TODAS, CLAVE, True, "ana", None, AHORA)),
            "conjunta_retenida",
        ),
        (ALCANCE_TOTAL, {}, "conjunta_cerrada"),
        (ALCANCE_TOTAL, _mapa(conjunta.model_copy(update={"abierta": False})), "conjunta_cerrada"),
        (ALCANCE_TOTAL, _mapa(_conjunta(umbral=0.8123)), "umbral_fuera_de_rejilla"),
        (ALCANCE_TOTAL, _mapa(conjunta), "cubierta"),
    ]
    for alcance, estados, razon in casos:
        assert cobertura("ropa", CLAVE, estados, sec, alcance, desde).razon == razon, razon
    liberada = registro_retencion("ropa", CLAVE, False, "ana", None, AHORA)
    assert cobertura("ropa", CLAVE, _mapa(conjunta, liberada), sec, ALCANCE_TOTAL, desde).cubierta
    with pytest.raises(ValueError, match="not itself"):
        cobertura(FAMILIA_TODAS, CLAVE, _mapa(conjunta), sec, ALCANCE_TOTAL)


def test_escribir_solo_lo_que_el_topic_aun_no_dice() -> None:
    conjunta = _conjunta()
    cob = cobertura(
        "ropa", CLAVE, _mapa(conjunta), _secuencia(30), ALCANCE_TOTAL, _desde(conjunta, 60)
    )
    cubierta = escritura(cob, CLAVE, _mapa(conjunta), AHORA)
    assert cubierta is not None
    # already on the topic: nothing more
    assert escritura(cob, CLAVE, _mapa(conjunta, cubierta), AHORA) is None
    # the pooled gate re-certified at another λ: the family is covered again, on the new one
    nueva = _conjunta(umbral=0.8, abierta_en=AHORA)
    cob_nueva = cobertura(
        "ropa", CLAVE, _mapa(nueva, cubierta), _secuencia(30), ALCANCE_TOTAL, _desde(nueva, 60)
    )
    otra = escritura(cob_nueva, CLAVE, _mapa(nueva, cubierta), AHORA + timedelta(1))
    assert otra is not None and otra.conjunta_actualizada_en == AHORA and otra.umbral == 0.8


def test_una_cubierta_cuya_evidencia_la_excluye_se_cierra() -> None:
    """Excluded while its covered record is in force (e.g. a restart found more decisions):
    closed with motivo excluida_de_conjunta; an excluded family without a record: no write."""
    conjunta = _conjunta()
    cubierta = escritura(
        cobertura(
            "ropa", CLAVE, _mapa(conjunta), _secuencia(30), ALCANCE_TOTAL, _desde(conjunta, 60)
        ),
        CLAVE,
        _mapa(conjunta),
        AHORA,
    )
    assert cubierta is not None
    estados = _mapa(conjunta, cubierta)
    excluida = cobertura(
        "ropa", CLAVE, estados, _secuencia(30, 12), ALCANCE_TOTAL, _desde(conjunta, 60)
    )
    assert excluida.razon == "excluida"
    cerrada = escritura(excluida, CLAVE, estados, AHORA + timedelta(1))
    assert cerrada is not None
    assert (cerrada.abierta, cerrada.motivo, cerrada.familia) == (
        False,
        "excluida_de_conjunta",
        "ropa",
    )
    assert (cerrada.n, cerrada.k) == (42, 12)
    estados[cerrada.id] = cerrada
    assert resolver("ropa", CLAVE, estados).razon == "cerrada"
    assert escritura(excluida, CLAVE, estados, AHORA) is None
    assert escritura(excluida, CLAVE, _mapa(conjunta), AHORA) is None
