"""Which gate state governs a family: own when open or closed by the bound, else pooled."""

from __future__ import annotations

from datetime import UTC, datetime

from esquemas.constantes import FAMILIA_TODAS
from esquemas.puerta import ClavePuerta, EstadoPuerta
from puerta.resolucion import puerta_para, umbral_aplicable

CLAVE = ClavePuerta(
    modelo="qwen",
    prompt_evaluador_sha256="a" * 64,
    criterios_version="3",
    modo_evaluador="veredicto",
)
OTRA = CLAVE.model_copy(update={"modelo": "otro"})
AHORA = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def _estado(
    familia: str,
    abierta: bool,
    motivo: str = "certificada",
    clave: ClavePuerta = CLAVE,
    umbral: float | None = 0.8,
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
        actualizada_en=AHORA,
    )


def _mapa(*estados: EstadoPuerta) -> dict[str, EstadoPuerta]:
    return {e.id: e for e in estados}


def test_sin_registros_es_cerrada() -> None:
    assert puerta_para("tv", CLAVE, {}) is None
    assert umbral_aplicable(None) is None


def test_la_propia_abierta_manda_sobre_la_conjunta() -> None:
    propia = _estado("tv", True, umbral=0.95)
    conjunta = _estado(FAMILIA_TODAS, True, umbral=0.7)
    assert puerta_para("tv", CLAVE, _mapa(propia, conjunta)) == propia
    assert puerta_para("nevera", CLAVE, _mapa(propia, conjunta)) == conjunta


def test_la_propia_cerrada_por_la_cota_no_se_reabre_con_la_conjunta() -> None:
    propia = _estado("tv", False, "cota_en_linea_bajo_objetivo")
    conjunta = _estado(FAMILIA_TODAS, True)
    assert puerta_para("tv", CLAVE, _mapa(propia, conjunta)) == propia
    assert umbral_aplicable(puerta_para("tv", CLAVE, _mapa(propia, conjunta))) is None


def test_la_propia_cerrada_por_falta_de_datos_cede_a_la_conjunta() -> None:
    for motivo in ("sin_datos_suficientes", "precision_no_certificada"):
        propia = _estado("tv", False, motivo)
        conjunta = _estado(FAMILIA_TODAS, True)
        assert puerta_para("tv", CLAVE, _mapa(propia, conjunta)) == conjunta
        assert puerta_para("tv", CLAVE, _mapa(propia)) is None


def test_la_conjunta_cerrada_cierra() -> None:
    conjunta = _estado(FAMILIA_TODAS, False, "cota_en_linea_bajo_objetivo")
    assert puerta_para("tv", CLAVE, _mapa(conjunta)) == conjunta
    assert umbral_aplicable(conjunta) is None


def test_otra_clave_nunca_casa() -> None:
    otras = _mapa(_estado("tv", True, clave=OTRA), _estado(FAMILIA_TODAS, True, clave=OTRA))
    assert puerta_para("tv", CLAVE, otras) is None
    # a record stored under this key's id but whose value names another key is ignored too
    falsa = _estado("tv", True, clave=OTRA)
    assert puerta_para("tv", CLAVE, {_estado("tv", True).id: falsa}) is None


def test_umbral_aplicable() -> None:
    estado = _estado("tv", True, umbral=0.83)
    aplicada = umbral_aplicable(estado)
    assert aplicada is not None
    assert aplicada.umbral == 0.83 and aplicada.objetivo == 0.9
    assert (aplicada.familia, aplicada.clave, aplicada.n, aplicada.k) == ("tv", CLAVE, 40, 1)
    assert aplicada.certificada_en == AHORA
