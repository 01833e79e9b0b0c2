"""Which gate governs a family (v1.5): its own open record, or a covered record while the pooled
certification it rests on is in force; holds close; the pooled record never governs directly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta, id_retencion
from puerta.resolucion import puerta_para, resolver, umbral_aplicable
from puerta.retencion import registro_retencion

CLAVE = ClavePuerta(
    modelo="qwen",
    prompt_evaluador_sha256="a" * 64,
    criterios_version="3",
    modo_evaluador="veredicto",
)
OTRA = CLAVE.model_copy(update={"modelo": "otro"})
AHORA = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
ANTES = AHORA - timedelta(hours=1)


def _estado(
    familia: str,
    abierta: bool,
    motivo: str = "certificada",
    clave: ClavePuerta = CLAVE,
    umbral: float | None = 0.8,
    actualizada_en: datetime = AHORA,
) -> EstadoPuerta:
    return EstadoPuerta(
        familia=familia,
        clave=clave,
        abierta=abierta,
        umbral=umbral if abierta else None,
        objetivo=0.9,
        delta=0.05,
        n=40,
        k=1,
        origen_datos="test",
        motivo=motivo,  # type: ignore[arg-type]
        actualizada_en=actualizada_en,
    )


def _conjunta(abierta: bool = True, actualizada_en: datetime = ANTES) -> EstadoPuerta:
    motivo = "certificada" if abierta else "cota_en_linea_bajo_objetivo"
    return _estado(FAMILIA_TODAS, abierta, motivo, umbral=0.7, actualizada_en=actualizada_en)


def _cubierta(familia: str, conjunta: EstadoPuerta, clave: ClavePuerta = CLAVE) -> EstadoPuerta:
    return EstadoPuerta(
        familia=familia,
        clave=clave,
        abierta=True,
        umbral=conjunta.umbral,
        objetivo=0.9,
        delta=0.05,
        n=25,
        k=0,
        origen_datos="cobertura:sombra; test",
        motivo="cubierta_por_conjunta",
        actualizada_en=AHORA,
        abierta_por="automatico",
        conjunta_actualizada_en=conjunta.actualizada_en,
    )


def _retencion(familia: str, retener: bool = True, clave: ClavePuerta = CLAVE) -> EstadoPuerta:
    return registro_retencion(familia, clave, retener, "ana", "prueba", AHORA)


def _mapa(*estados: EstadoPuerta) -> dict[str, EstadoPuerta]:
    return {e.id: e for e in estados}


def test_sin_registros_es_cerrada() -> None:
    res = resolver("tv", CLAVE, {})
    assert (res.razon, res.estado, res.abierta) == ("sin_registro", None, False)
    assert puerta_para("tv", CLAVE, {}) is None
    assert umbral_aplicable(None) is None


def test_la_conjunta_abierta_no_rige_a_una_familia_sin_registro() -> None:
    """The heart of issue 38: ``*`` open never publishes a family it did not measure."""
    conjunta = _conjunta()
    res = resolver("relojes", CLAVE, _mapa(conjunta))
    assert (res.razon, res.estado, res.conjunta) == ("sin_registro", None, conjunta)
    assert umbral_aplicable(puerta_para("relojes", CLAVE, _mapa(conjunta))) is None
    # and the pooled gate's own resolution is its record
    assert resolver(FAMILIA_TODAS, CLAVE, _mapa(conjunta)).razon == "propia"


def test_la_propia_abierta_rige() -> None:
    propia = _estado("tv", True, umbral=0.95)
    res = resolver("tv", CLAVE, _mapa(propia, _conjunta()))
    assert (res.razon, res.estado, res.abierta) == ("propia", propia, True)
    # its own gate governs even while the pooled gate is held or closed
    for otros in (_retencion(FAMILIA_TODAS), _conjunta(abierta=False)):
        assert resolver("tv", CLAVE, _mapa(propia, otros)).razon == "propia"


@pytest.mark.parametrize(
    "motivo", ["sin_datos_suficientes", "precision_no_certificada", "cota_en_linea_bajo_objetivo"]
)
def test_la_propia_cerrada_cierra_aunque_la_conjunta_este_abierta(motivo: str) -> None:
    propia = _estado("tv", False, motivo)
    res = resolver("tv", CLAVE, _mapa(propia, _conjunta()))
    assert (res.razon, res.estado) == ("cerrada", propia)
    assert umbral_aplicable(res.estado) is None


def test_la_cubierta_rige_mientras_la_conjunta_sigue_en_esa_certificacion() -> None:
    conjunta = _conjunta()
    cubierta = _cubierta("tv", conjunta)
    res = resolver("tv", CLAVE, _mapa(cubierta, conjunta))
    assert (res.razon, res.estado, res.abierta) == ("conjunta", cubierta, True)
    aplicada = umbral_aplicable(res.estado)
    assert aplicada is not None
    assert (aplicada.familia, aplicada.umbral) == ("tv", 0.7)
    assert aplicada.certificada_en == AHORA and aplicada.conjunta_certificada_en == ANTES


def test_cerrar_o_recertificar_la_conjunta_cierra_a_las_cubiertas() -> None:
    conjunta = _conjunta()
    cubierta = _cubierta("tv", conjunta)
    cerrada = _conjunta(abierta=False, actualizada_en=AHORA)
    res = resolver("tv", CLAVE, _mapa(cubierta, cerrada))
    assert (res.razon, res.estado) == ("conjunta_cerrada", cerrada)
    assert umbral_aplicable(res.estado) is None
    # re-certified (another actualizada_en): the coverage rested on the old one, so closed
    nueva = _conjunta(actualizada_en=AHORA)
    res = resolver("tv", CLAVE, _mapa(cubierta, nueva))
    assert (res.razon, res.estado) == ("conjunta_cerrada", None)
    # the pooled record gone (a tombstone): closed too
    assert resolver("tv", CLAVE, _mapa(cubierta)).razon == "conjunta_cerrada"


def test_retener_la_conjunta_cierra_a_las_cubiertas_sin_segunda_escritura() -> None:
    conjunta = _conjunta()
    retencion = _retencion(FAMILIA_TODAS)
    estados = _mapa(_cubierta("tv", conjunta), _cubierta("ropa", conjunta), conjunta, retencion)
    for familia in ("tv", "ropa"):
        res = resolver(familia, CLAVE, estados)
        assert (res.razon, res.estado) == ("conjunta_retenida", retencion)
        assert umbral_aplicable(puerta_para(familia, CLAVE, estados)) is None
    # the pooled gate itself is held too
    assert resolver(FAMILIA_TODAS, CLAVE, estados).razon == "retenida"
    # released: the covered families are governed again
    estados[retencion.id] = _retencion(FAMILIA_TODAS, retener=False)
    assert {resolver(f, CLAVE, estados).razon for f in ("tv", "ropa")} == {"conjunta"}


def test_una_retencion_cierra_su_puerta_y_liberar_la_reabre() -> None:
    propia = _estado("tv", True)
    retencion = _retencion("tv")
    assert retencion.id == id_retencion("tv", CLAVE) != id_puerta("tv", CLAVE)
    estados = _mapa(propia, retencion)
    res = resolver("tv", CLAVE, estados)
    assert (res.razon, res.estado, res.propia) == ("retenida", retencion, propia)
    assert umbral_aplicable(puerta_para("tv", CLAVE, estados)) is None
    # another family is not held, and a hold of another key holds nothing here
    assert resolver("ropa", CLAVE, _mapa(_estado("ropa", True), retencion)).razon == "propia"
    ajena = _retencion("tv", clave=OTRA)
    assert resolver("tv", CLAVE, _mapa(propia, ajena)).razon == "propia"
    estados[retencion.id] = _retencion("tv", retener=False)
    assert resolver("tv", CLAVE, estados).razon == "propia"


def test_otra_clave_nunca_casa() -> None:
    otras = _mapa(_estado("tv", True, clave=OTRA), _estado(FAMILIA_TODAS, True, clave=OTRA))
    assert puerta_para("tv", CLAVE, otras) is None
    # a record stored under this key's id but whose value names another key is ignored too
    falsa = _estado("tv", True, clave=OTRA)
    assert puerta_para("tv", CLAVE, {_estado("tv", True).id: falsa}) is None
    # a hold's value stored at the gate id is not the gate's state
    assert puerta_para("tv", CLAVE, {id_puerta("tv", CLAVE): _retencion("tv")}) is None
    # a covered record of this key resting on another key's pooled gate: closed
    ajena = _estado(FAMILIA_TODAS, True, clave=OTRA, umbral=0.7, actualizada_en=ANTES)
    assert resolver("tv", CLAVE, _mapa(_cubierta("tv", ajena), ajena)).razon == ("conjunta_cerrada")


def test_umbral_aplicable() -> None:
    estado = _estado("tv", True, umbral=0.83)
    aplicada = umbral_aplicable(estado)
    assert aplicada is not None
    assert aplicada.umbral == 0.83 and aplicada.objetivo == 0.9
    assert (aplicada.familia, aplicada.clave, aplicada.n, aplicada.k) == ("tv", CLAVE, 40, 1)
    assert aplicada.certificada_en == AHORA and aplicada.conjunta_certificada_en is None
