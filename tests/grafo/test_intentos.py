"""The one count of rejections by criterion (worker metric, ``fichas informe``, ``fichas
evaluar``), from the loop's own history and from a review outcome's ``historial``."""

from __future__ import annotations

import dataclasses

from esquemas.constantes import CRITERIO_SALIDA_INVALIDA
from grafo.intentos import (
    POR_DESCONOCIDO,
    Rechazo,
    ResumenIntento,
    contar_rechazos,
    resumen_intentos,
)


def _veredicto(*criterios: str) -> dict[str, object]:
    problemas = [{"criterio": c, "detalle": "x"} for c in criterios]
    return {"aprobada": not criterios, "problemas": problemas}


def test_the_loops_history_says_who_rejected() -> None:
    historial = [
        {
            "intento": 1,
            "veredicto": _veredicto("C01", "C04"),
            "rechazos": [
                {"criterio": "C01", "por": "codigo"},
                {"criterio": "C04", "por": "evaluador"},
            ],
        },
        {
            "intento": 2,
            "veredicto": _veredicto("C01"),
            "rechazos": [{"criterio": "C01", "por": "codigo"}],
        },
        {"intento": 3, "veredicto": _veredicto(CRITERIO_SALIDA_INVALIDA), "rechazos": []},
    ]
    intentos = resumen_intentos(historial)
    assert contar_rechazos(intentos) == {
        Rechazo("C01", "codigo"): 2,
        Rechazo("C04", "evaluador"): 1,
    }
    assert [i.invalida for i in intentos] == [False, False, True]


def test_a_review_outcomes_historial_counts_its_problems_but_an_invalid_answer() -> None:
    historial = [
        {"intento": 1, "veredicto": _veredicto("C02", "C03")},
        {"intento": 2, "veredicto": _veredicto(CRITERIO_SALIDA_INVALIDA)},
    ]
    intentos = resumen_intentos(historial)
    assert contar_rechazos(intentos) == {
        Rechazo("C02", POR_DESCONOCIDO): 1,
        Rechazo("C03", POR_DESCONOCIDO): 1,
    }
    assert sum(i.invalida for i in intentos) == 1


def test_a_summary_comes_back_from_its_json_form() -> None:
    intento = ResumenIntento(2, False, (Rechazo("C01", "codigo"),), False, 0.25)
    assert ResumenIntento.de_dict(dataclasses.asdict(intento)) == intento
