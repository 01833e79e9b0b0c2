"""``grafo.repeticion.seguir``: where the loop would stop on a stored history under a new judge,
attempt by attempt, with the loop's own ``decidir`` and the feedback its generator gets (pure)."""

from __future__ import annotations

from typing import Any

import pytest

from esquemas.constantes import MAX_DETALLE
from grafo.nodos import forzar_rechazo
from grafo.repeticion import CONSERVADA, MOTIVOS, Juicio, seguir

CODIGO = {"criterio": "C01", "detalle": "el título pasa de 80 caracteres"}
JUEZ_VIEJO = {"criterio": "C06", "detalle": "la descripción no dice para qué sirve"}
JUEZ_NUEVO = {"criterio": "C04", "detalle": "el tono es publicitario"}
FICHA = {"titulo": "t", "descripcion": "d", "atributos": {}}


def _guardado(*problemas_por_intento: list[dict[str, str]]) -> list[dict[str, Any]]:
    """A stored history: one attempt per list of problems (the last one is the labelled)."""
    return [
        {
            "intento": i,
            "ficha": FICHA,
            "veredicto": {"aprobada": not problemas, "problemas": problemas},
        }
        for i, problemas in enumerate(problemas_por_intento, start=1)
    ]


def _juez(
    aprueba: bool,
    problemas: list[dict[str, str]] | None = None,
    codigo: list[dict[str, str]] | None = None,
) -> Juicio:
    """The new judge's answer on an attempt, vetoed by its code failures as the loop does."""
    veredicto = forzar_rechazo({"aprobada": aprueba, "problemas": problemas or []}, codigo or [])
    return Juicio(veredicto | {"puntuacion": 0.9 if aprueba else 0.1})


def test_un_intento_se_conserva_si_el_juez_nuevo_lo_aprueba_o_no_quedan_intentos() -> None:
    historial = _guardado([])
    assert seguir(historial, [_juez(True)], max_intentos=3) == CONSERVADA
    assert seguir(historial, [_juez(False, [JUEZ_NUEVO])], max_intentos=3) == "reintentaria"
    # a loop that never retries ends on its first attempt whatever the judge says
    assert seguir(historial, [_juez(False, [JUEZ_NUEVO])], max_intentos=1) == CONSERVADA


def test_un_reintento_por_el_codigo_se_reproduce_si_el_juez_nuevo_no_anade_nada() -> None:
    """Attempt 1 failed a code check and the old judge listed nothing of its own: the retry's
    feedback came from the code alone, so the new judge, approving it (vetoed by the same
    check), gives the generator the same problems, and attempt 2 is what the new loop writes."""
    historial = _guardado([CODIGO], [])
    primero = _juez(True, codigo=[CODIGO])
    assert not primero.veredicto["aprobada"]  # the code veto
    assert seguir(historial, [primero], max_intentos=3) is None  # judge the next one
    assert seguir(historial, [primero, _juez(True)], max_intentos=3) == CONSERVADA
    # The new judge adds a problem of its own to attempt 1: attempt 2 would be written from it.
    otro = _juez(False, [JUEZ_NUEVO], codigo=[CODIGO])
    assert seguir(historial, [otro], max_intentos=3) == "otra_retroalimentacion"


def test_un_reintento_por_el_juez_solo_se_reproduce_con_los_mismos_problemas() -> None:
    historial = _guardado([JUEZ_VIEJO], [])
    assert seguir(historial, [_juez(False, [JUEZ_NUEVO])], 3) == "otra_retroalimentacion"
    assert seguir(historial, [_juez(False, [JUEZ_VIEJO])], 3) is None
    # A rejection without problems gives the generator none: not what attempt 2 was written from.
    assert seguir(historial, [_juez(False)], 3) == "otra_retroalimentacion"


def test_el_juez_nuevo_aprueba_antes_o_contesta_mal_antes() -> None:
    historial = _guardado([CODIGO], [])
    sin_veto = _guardado([JUEZ_VIEJO], [])
    assert seguir(sin_veto, [_juez(True)], 3) == "aprobada_antes"
    invalida = Juicio({"aprobada": False, "problemas": [], "puntuacion": None}, invalida=True)
    assert seguir(historial, [invalida], 3) == "invalida_antes"
    # on the labelled attempt an invalid answer ends the loop there: kept (never approvable)
    assert seguir(historial, [_juez(True, codigo=[CODIGO]), invalida], 3) == CONSERVADA


def test_mas_intentos_que_el_tope_del_bucle() -> None:
    historial = _guardado([CODIGO], [CODIGO], [])
    uno = _juez(True, codigo=[CODIGO])
    assert seguir(historial, [uno], 2) is None
    assert seguir(historial, [uno, uno], 2) == "tope_antes"
    assert seguir(historial, [uno, uno, _juez(True)], 3) == CONSERVADA


def test_la_retroalimentacion_es_la_acumulada_y_se_compara_como_se_guarda() -> None:
    """The generator gets every distinct problem so far: a problem the new judge does not
    repeat on attempt 2 is still in attempt 3's feedback. A detail longer than the contract
    allows is stored cut, and compared cut."""
    historial = _guardado([JUEZ_VIEJO], [JUEZ_VIEJO], [])
    juicios = [_juez(False, [JUEZ_VIEJO]), _juez(False)]
    assert seguir(historial, juicios, 3) is None
    largo = {"criterio": "C07", "detalle": "x" * (MAX_DETALLE + 40)}
    cortado = {"criterio": "C07", "detalle": "x" * (MAX_DETALLE - 1) + "…"}
    assert seguir(_guardado([cortado], []), [_juez(True, codigo=[largo])], 3) is None


def test_motivos_y_limites() -> None:
    assert set(MOTIVOS) == {
        "aprobada_antes", "invalida_antes", "tope_antes", "otra_retroalimentacion",
        "reintentaria",
    }  # fmt: skip
    with pytest.raises(ValueError):
        seguir(_guardado([]), [], 3)
    with pytest.raises(ValueError):
        seguir(_guardado([]), [_juez(True), _juez(True)], 3)
