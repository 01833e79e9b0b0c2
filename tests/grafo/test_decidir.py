"""The pure routing functions: the model can neither lengthen nor shorten the loop."""

from __future__ import annotations

from typing import Any

import pytest

from grafo.nodos import decidir, forzar_rechazo, tras_generar


def _estado(aprobada: bool, intentos: int, invalida: bool = False) -> Any:
    return {
        "veredicto": {"aprobada": aprobada, "problemas": []},
        "intentos": intentos,
        "invalida": {"agente": "evaluador", "detalle": "x"} if invalida else None,
    }


@pytest.mark.parametrize(
    ("aprobada", "intentos", "max_intentos", "invalida", "ruta"),
    [
        (True, 1, 3, False, "publicar"),
        (True, 3, 3, False, "publicar"),
        (False, 1, 3, False, "generar"),
        (False, 2, 3, False, "generar"),
        (False, 3, 3, False, "descartar"),
        (False, 4, 3, False, "descartar"),
        (False, 1, 1, False, "descartar"),
        (True, 1, 3, True, "descartar"),
        (False, 1, 3, True, "descartar"),
    ],
)
def test_decidir(
    aprobada: bool, intentos: int, max_intentos: int, invalida: bool, ruta: str
) -> None:
    assert decidir(_estado(aprobada, intentos, invalida), max_intentos) == ruta


def test_tras_generar() -> None:
    assert tras_generar({"invalida": None}) == "evaluar"
    assert tras_generar({}) == "evaluar"
    assert tras_generar({"invalida": {"agente": "generador", "detalle": "x"}}) == "descartar"


def test_forzar_rechazo_veta_la_aprobacion_del_evaluador() -> None:
    fallos = [{"criterio": "C01", "detalle": "título de 90 caracteres"}]
    veredicto = forzar_rechazo({"aprobada": True, "problemas": []}, fallos)
    assert veredicto == {"aprobada": False, "problemas": fallos}


def test_forzar_rechazo_conserva_problemas_del_evaluador_sin_duplicar() -> None:
    fallos = [{"criterio": "C01", "detalle": "largo"}]
    modelo = [{"criterio": "C01", "detalle": "largo"}, {"criterio": "C04", "detalle": "inventa"}]
    veredicto = forzar_rechazo({"aprobada": False, "problemas": modelo}, fallos)
    assert veredicto["problemas"] == [fallos[0], modelo[1]]


def test_aprobada_con_problemas_se_lee_como_rechazo() -> None:
    veredicto = forzar_rechazo(
        {"aprobada": True, "problemas": [{"criterio": "C06", "detalle": "repite"}]}, []
    )
    assert veredicto["aprobada"] is False


def test_sin_fallos_y_aprobada_se_aprueba() -> None:
    assert forzar_rechazo({"aprobada": True, "problemas": []}, []) == {
        "aprobada": True,
        "problemas": [],
    }
