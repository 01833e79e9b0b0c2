"""The gate's contract models (v1.5): key fields left out of the id when null, holds at their own
key, and the new motivo values refused without the fields that give them meaning."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from pydantic import ValidationError

from esquemas.constantes import FAMILIA_TODAS, MAX_NOTA_RETENCION
from esquemas.estado_puerta import (
    ClavePuerta,
    EstadoPuerta,
    PuertaAplicada,
    id_puerta,
    id_retencion,
)

AHORA = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
CLAVE = ClavePuerta(
    modelo="qwen",
    prompt_evaluador_sha256="a" * 64,
    criterios_version="2-1",
    modo_evaluador="veredicto",
    prompt_generador_sha256="b" * 64,
)


def _estado(**cambios: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "familia": "zapatillas",
        "clave": CLAVE.model_dump(),
        "abierta": False,
        "umbral": None,
        "objetivo": 0.9,
        "delta": 0.05,
        "n": 0,
        "k": 0,
        "origen_datos": "persona",
        "motivo": "retenida",
        "actualizada_en": AHORA.isoformat(),
        "retenida_por": "ana",
        "nota": "la temporada cambia las tallas",
    }
    return base | cambios


def test_un_registro_v1_4_conserva_su_id_y_es_otra_clave() -> None:
    """A null v1.5 field is left out of the id: the id a v1.4 record was written under."""
    v14 = CLAVE.model_dump(mode="json", exclude_none=True)
    assert set(v14) == {
        "modelo",
        "prompt_evaluador_sha256",
        "criterios_version",
        "modo_evaluador",
        "prompt_generador_sha256",
    }
    assert (
        ClavePuerta.model_validate(v14).texto() == CLAVE.texto() == "4a3697fa45cba643"
    )  # computed by the v1.4 code
    v15 = CLAVE.model_copy(update={"modelo_servido": "max_model_len=32768 root=Qwen/Qwen3"})
    assert v15.texto() != CLAVE.texto() and v15 != CLAVE
    muestreos = {
        CLAVE.model_copy(update={campo: "temperature=0.2"}).texto()
        for campo in ("muestreo_generador", "muestreo_evaluador")
    }
    assert len(muestreos) == 2 and CLAVE.texto() not in muestreos


def test_la_retencion_vive_en_su_propia_clave() -> None:
    retenida = EstadoPuerta.model_validate(_estado())
    liberada = EstadoPuerta.model_validate(_estado(motivo="liberada", nota=None))
    assert retenida.retencion and liberada.retencion
    assert retenida.id == liberada.id == id_retencion("zapatillas", CLAVE)
    assert retenida.id == id_puerta("zapatillas", CLAVE) + "|retencion"
    conjunta = EstadoPuerta.model_validate(_estado(familia=FAMILIA_TODAS))
    assert conjunta.id == f"*|{CLAVE.texto()}|retencion"
    abierta = EstadoPuerta.model_validate(
        _estado(
            abierta=True,
            umbral=0.8,
            motivo="certificada",
            retenida_por=None,
            nota=None,
            origen_datos="secuencial:sombra",
        )
    )
    assert not abierta.retencion and abierta.id == id_puerta("zapatillas", CLAVE)


@pytest.mark.parametrize(
    ("cambios", "mensaje"),
    [
        ({"abierta": True, "umbral": 0.8}, "retenida_por"),
        ({"retenida_por": None}, "retenida_por"),
        ({"retenida_por": ""}, "at least 1"),
        ({"nota": "x" * (MAX_NOTA_RETENCION + 1)}, "at most"),
        ({"motivo": "certificada", "abierta": True, "umbral": 0.8}, "hold records only"),
        ({"motivo": "liberada", "abierta": True, "umbral": None}, "retenida_por"),
    ],
)
def test_una_retencion_mal_formada_se_rechaza(cambios: dict[str, Any], mensaje: str) -> None:
    with pytest.raises(ValidationError, match=mensaje):
        EstadoPuerta.model_validate(_estado(**cambios))


def _cubierta(**cambios: Any) -> dict[str, Any]:
    return (
        _estado(
            abierta=True,
            umbral=0.8,
            motivo="cubierta_por_conjunta",
            retenida_por=None,
            nota=None,
            origen_datos="cobertura:sombra",
            n=22,
            k=1,
            conjunta_actualizada_en=AHORA.isoformat(),
        )
        | cambios
    )


def test_una_cubierta_nombra_la_certificacion_conjunta() -> None:
    cubierta = EstadoPuerta.model_validate(_cubierta())
    assert cubierta.conjunta_actualizada_en == AHORA and cubierta.id == id_puerta(
        "zapatillas", CLAVE
    )
    for malo in (
        {"conjunta_actualizada_en": None},
        {"abierta": False, "umbral": None},
        {"familia": FAMILIA_TODAS},
        {"motivo": "certificada"},  # the field without the motivo
    ):
        with pytest.raises(ValidationError):
            EstadoPuerta.model_validate(_cubierta(**malo))


def test_puerta_aplicada_sigue_siendo_hashable_con_la_conjunta() -> None:
    aplicada = PuertaAplicada(
        umbral=0.8,
        objetivo=0.9,
        clave=CLAVE,
        familia="zapatillas",
        certificada_en=AHORA,
        n=22,
        k=1,
        conjunta_certificada_en=AHORA,
    )
    assert {aplicada: 1}[aplicada.model_copy()] == 1
    sin = PuertaAplicada.model_validate(aplicada.model_dump() | {"conjunta_certificada_en": None})
    assert sin != aplicada
