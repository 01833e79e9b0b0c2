"""Coverage by the pooled gate (issue 38): only a family with enough decided evidence of its own
at the pooled λ, none of it showing the family below the objective, in scope and not held."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from puerta.alcance import Alcance
from puerta.cobertura import MINIMO_PROPIO, cobertura, escritura, estado_cubierto
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
TODO = Alcance()


def _secuencia(aprobadas: int, rechazadas: int = 0, puntuacion: float = 0.97) -> EstadoSecuencia:
    fichas = [Observacion(puntuacion, True, True)] * aprobadas
    fichas += [Observacion(puntuacion, True, False)] * rechazadas
    return avanzar(inicial(OBJETIVO, DELTA), enumerate(fichas))


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
    mochilas = cobertura("mochilas", CLAVE, estados, _secuencia(120), TODO)
    relojes = cobertura("relojes", CLAVE, estados, _secuencia(5, 5), TODO)
    nueva = cobertura("gafas", CLAVE, estados, inicial(OBJETIVO, DELTA), TODO)
    assert (mochilas.razon, mochilas.umbral, mochilas.n, mochilas.k) == ("cubierta", 0.5, 120, 0)
    assert (relojes.razon, relojes.n, relojes.k) == ("excluida", 10, 5)
    assert relojes.e_exclusion >= 1 / DELTA
    assert (nueva.razon, nueva.n) == ("pocas_aprobaciones", 0)
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
    cob = cobertura("mochilas", CLAVE, _mapa(conjunta), _secuencia(25, 1), TODO)
    cubierta = estado_cubierto(cob, CLAVE, conjunta, AHORA)
    assert (cubierta.familia, cubierta.abierta, cubierta.umbral) == ("mochilas", True, 0.8)
    assert (cubierta.motivo, cubierta.abierta_por) == ("cubierta_por_conjunta", "automatico")
    assert (cubierta.n, cubierta.k) == (26, 1)
    assert cubierta.conjunta_actualizada_en == ABIERTA_EN and cubierta.actualizada_en == AHORA
    assert cubierta.origen_datos.startswith("cobertura:sombra; conjunta certificada el 2026-12-01")
    aplicada = umbral_aplicable(cubierta)
    assert aplicada is not None and aplicada.conjunta_certificada_en == ABIERTA_EN
    with pytest.raises(ValueError, match="not covered"):
        estado_cubierto(cob, CLAVE, _conjunta(umbral=0.5), AHORA)


def test_el_minimo_propio_se_cuenta_en_el_umbral_conjunto() -> None:
    conjunta = _conjunta(umbral=0.9)
    casi = cobertura("ropa", CLAVE, _mapa(conjunta), _secuencia(MINIMO_PROPIO - 1), TODO)
    justo = cobertura("ropa", CLAVE, _mapa(conjunta), _secuencia(MINIMO_PROPIO), TODO)
    assert (casi.razon, justo.razon) == ("pocas_aprobaciones", "cubierta")
    # approvals scored under the pooled λ do not count for it
    bajas = cobertura("ropa", CLAVE, _mapa(conjunta), _secuencia(100, 0, 0.85), TODO)
    assert (bajas.razon, bajas.n) == ("pocas_aprobaciones", 0)


def test_cada_condicion_en_su_orden() -> None:
    conjunta = _conjunta()
    sec = _secuencia(60)
    propia = conjunta.model_copy(update={"familia": "ropa", "umbral": 0.9})
    casos: list[tuple[Alcance, dict[str, EstadoPuerta], str]] = [
        (Alcance(conjunta=False), _mapa(conjunta), "sin_conjunta"),
        (Alcance(frozenset({"tv"})), _mapa(conjunta), "fuera_de_alcance"),
        (
            TODO,
            _mapa(conjunta, registro_retencion("ropa", CLAVE, True, "ana", None, AHORA)),
            "retenida",
        ),
        (TODO, _mapa(conjunta, propia), "propia"),
        (
            TODO,
            _mapa(conjunta, registro_retencion(FAMILIA_TODAS, CLAVE, True, "ana", None, AHORA)),
            "conjunta_retenida",
        ),
        (TODO, {}, "conjunta_cerrada"),
        (TODO, _mapa(conjunta.model_copy(update={"abierta": False})), "conjunta_cerrada"),
        (TODO, _mapa(_conjunta(umbral=0.8123)), "umbral_fuera_de_rejilla"),
        (TODO, _mapa(conjunta), "cubierta"),
    ]
    for alcance, estados, razon in casos:
        assert cobertura("ropa", CLAVE, estados, sec, alcance).razon == razon, razon
    liberada = registro_retencion("ropa", CLAVE, False, "ana", None, AHORA)
    assert cobertura("ropa", CLAVE, _mapa(conjunta, liberada), sec, TODO).cubierta
    with pytest.raises(ValueError, match="not itself"):
        cobertura(FAMILIA_TODAS, CLAVE, _mapa(conjunta), sec, TODO)


def test_escribir_solo_lo_que_el_topic_aun_no_dice() -> None:
    conjunta = _conjunta()
    cob = cobertura("ropa", CLAVE, _mapa(conjunta), _secuencia(30), TODO)
    cubierta = escritura(cob, CLAVE, _mapa(conjunta), AHORA)
    assert cubierta is not None
    # already on the topic: nothing more
    assert escritura(cob, CLAVE, _mapa(conjunta, cubierta), AHORA) is None
    # the pooled gate re-certified at another λ: the family is covered again, on the new one
    nueva = _conjunta(umbral=0.8, abierta_en=AHORA)
    cob_nueva = cobertura("ropa", CLAVE, _mapa(nueva, cubierta), _secuencia(30), TODO)
    otra = escritura(cob_nueva, CLAVE, _mapa(nueva, cubierta), AHORA + timedelta(1))
    assert otra is not None and otra.conjunta_actualizada_en == AHORA and otra.umbral == 0.8


def test_una_cubierta_cuya_evidencia_la_excluye_se_cierra() -> None:
    """Excluded while its covered record is in force (e.g. a restart found more decisions):
    closed with motivo excluida_de_conjunta; an excluded family without a record: no write."""
    conjunta = _conjunta()
    cubierta = escritura(
        cobertura("ropa", CLAVE, _mapa(conjunta), _secuencia(30), TODO),
        CLAVE,
        _mapa(conjunta),
        AHORA,
    )
    assert cubierta is not None
    estados = _mapa(conjunta, cubierta)
    excluida = cobertura("ropa", CLAVE, estados, _secuencia(30, 12), TODO)
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
