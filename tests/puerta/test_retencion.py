"""A person's hold and release: the record at the gate's hold id, and whether a gate is held."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from esquemas.constantes import DELTA_PUERTA, FAMILIA_TODAS, MAX_NOTA_RETENCION, OBJETIVO_PUERTA
from esquemas.estado_puerta import ClavePuerta, id_retencion
from puerta.retencion import registro_retencion, retencion

CLAVE = ClavePuerta(
    modelo="qwen",
    prompt_evaluador_sha256="a" * 64,
    criterios_version="2-1",
    modo_evaluador="veredicto",
    prompt_generador_sha256="b" * 64,
)
AHORA = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_el_registro_de_una_retencion_es_cerrado_y_neutro() -> None:
    retenida = registro_retencion("zapatillas", CLAVE, True, " Ana ", "  tallas nuevas ", AHORA)
    assert retenida.id == id_retencion("zapatillas", CLAVE)
    assert (retenida.motivo, retenida.abierta, retenida.umbral) == ("retenida", False, None)
    assert (retenida.retenida_por, retenida.nota) == ("Ana", "tallas nuevas")
    assert (retenida.objetivo, retenida.delta, retenida.n, retenida.k) == (
        OBJETIVO_PUERTA,
        DELTA_PUERTA,
        0,
        0,
    )
    assert retenida.origen_datos == "persona" and retenida.abierta_por is None
    liberada = registro_retencion("zapatillas", CLAVE, False, "luis", "  ", AHORA)
    assert (liberada.motivo, liberada.nota, liberada.id) == ("liberada", None, retenida.id)


def test_un_nombre_vacio_o_una_nota_larga_se_rechazan_sin_cortar() -> None:
    with pytest.raises(ValidationError):
        registro_retencion("zapatillas", CLAVE, True, "   ", None, AHORA)
    with pytest.raises(ValidationError):
        registro_retencion("zapatillas", CLAVE, True, "ana", "x" * (MAX_NOTA_RETENCION + 1), AHORA)


def test_retenida_solo_mientras_el_registro_mas_nuevo_dice_retenida() -> None:
    retenida = registro_retencion(FAMILIA_TODAS, CLAVE, True, "ana", None, AHORA)
    estados = {retenida.id: retenida}
    assert retencion(FAMILIA_TODAS, CLAVE, estados) == retenida
    assert retencion("zapatillas", CLAVE, estados) is None
    otra = CLAVE.model_copy(update={"modelo_servido": "root=otro"})
    assert retencion(FAMILIA_TODAS, otra, estados) is None  # a hold does not follow a key change
    liberada = registro_retencion(FAMILIA_TODAS, CLAVE, False, "luis", None, AHORA + timedelta(1))
    assert retencion(FAMILIA_TODAS, CLAVE, {liberada.id: liberada}) is None
    # a value of another gate stored at this hold id holds nothing
    ajena = registro_retencion("zapatillas", CLAVE, True, "ana", None, AHORA)
    assert retencion(FAMILIA_TODAS, CLAVE, {retenida.id: ajena}) is None
