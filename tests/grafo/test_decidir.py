"""The pure routing functions: the model can neither lengthen nor shorten the loop."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from grafo.nodos import decidir, forzar_rechazo, tras_generar

UMBRAL = 0.8
PUERTA = {"umbral": UMBRAL}  # decidir reads only the threshold of the gate snapshot
OK = {"C01": {"ok": True}, "C02": {"ok": True}}
FALLA = {"C01": {"ok": False, "detalle": "título de 90 caracteres"}, "C02": {"ok": True}}


def _estado(
    aprobada: bool,
    intentos: int,
    invalida: bool = False,
    puntuacion: float | None = None,
    puerta: dict[str, Any] | None = None,
    comprobaciones: dict[str, Any] | None = OK,
    sombra: bool | None = None,
) -> Any:
    estado: dict[str, Any] = {
        "veredicto": {"aprobada": aprobada, "problemas": [], "puntuacion": puntuacion},
        "intentos": intentos,
        "invalida": {"agente": "evaluador", "detalle": "x"} if invalida else None,
        "puerta": puerta,
    }
    if sombra is not None:  # absent in checkpoints older than v1.6: not in the share
        estado["sombra"] = sombra
    if comprobaciones is not None:
        estado["comprobaciones"] = comprobaciones
    return estado


# FICHAS_PUERTA=veredicto: the rule before v1.2, unchanged (the gate snapshot is not read).
@pytest.mark.parametrize(
    ("aprobada", "intentos", "max_intentos", "invalida", "ruta"),
    [
        (True, 1, 3, False, "publicar"),
        (True, 3, 3, False, "publicar"),
        (False, 1, 3, False, "generar"),
        (False, 2, 3, False, "generar"),
        (False, 3, 3, False, "enviar_a_revision"),
        (False, 4, 3, False, "enviar_a_revision"),
        (False, 1, 1, False, "enviar_a_revision"),
        (True, 1, 3, True, "enviar_a_revision"),
        (False, 1, 3, True, "enviar_a_revision"),
    ],
)
def test_decidir_modo_veredicto(
    aprobada: bool, intentos: int, max_intentos: int, invalida: bool, ruta: str
) -> None:
    estado = _estado(aprobada, intentos, invalida)
    assert decidir(estado, max_intentos, "veredicto") == ruta


def test_modo_veredicto_no_lee_la_puerta() -> None:
    # Kills "veredicto mode applies the gate too": a yes publishes with the gate closed, and
    # a no retries with an open gate and a score above it.
    assert decidir(_estado(True, 1, puntuacion=0.1), 3, "veredicto") == "publicar"
    abierta = _estado(False, 1, puntuacion=0.99, puerta=PUERTA)
    assert decidir(abierta, 3, "veredicto") == "generar"


# FICHAS_PUERTA=certificada (the default): one loop whatever the gate says (docs/grafo.md).
# Retries depend on the code checks and the judge only; the gate decides where the final ficha
# goes. Each row names the mutation of ``decidir`` it kills.
CERTIFICADA = [
    # s exactly at λ publishes: kills ">=" written as ">".
    pytest.param(
        dict(aprobada=True, puntuacion=UMBRAL, puerta=PUERTA), 1, 3, "publicar", id="s=umbral"
    ),
    # the judge approved just below λ: the loop is done, the ficha goes to review; kills the
    # v1.2 rule "an open gate retries a score below λ" (which made the published population
    # differ from the certified one) and a rounded or ">= umbral - eps" comparison.
    pytest.param(
        dict(aprobada=True, puntuacion=UMBRAL - 1e-9, puerta=PUERTA),
        1,
        3,
        "enviar_a_revision",
        id="s=umbral-eps",
    ),
    # no score is "not approvable", even at λ = 0: kills "None counts as 0" and "None passes".
    pytest.param(
        dict(aprobada=True, puntuacion=None, puerta=PUERTA),
        1,
        3,
        "enviar_a_revision",
        id="sin-puntuacion",
    ),
    pytest.param(
        dict(aprobada=True, puntuacion=None, puerta={"umbral": 0.0}),
        1,
        3,
        "enviar_a_revision",
        id="sin-puntuacion-l0",
    ),
    # the judge rejects on the last attempt: review; kills "intentos > max" for ">=".
    pytest.param(
        dict(puntuacion=0.5, puerta=PUERTA), 3, 3, "enviar_a_revision", id="ultimo-intento"
    ),
    pytest.param(dict(puntuacion=0.5, puerta=PUERTA), 2, 3, "generar", id="penultimo-intento"),
    # code failure with an open gate and a high score retries: kills "publish on score
    # alone" (the code checks must veto).
    pytest.param(
        dict(puntuacion=0.99, puerta=PUERTA, comprobaciones=FALLA),
        1,
        3,
        "generar",
        id="codigo-falla-abierta",
    ),
    pytest.param(
        dict(puntuacion=0.99, puerta=PUERTA, comprobaciones=FALLA),
        3,
        3,
        "enviar_a_revision",
        id="codigo-falla-ultimo",
    ),
    # no code checks recorded is not "they passed": kills "missing checks = passed".
    pytest.param(
        dict(aprobada=True, puntuacion=0.99, puerta=PUERTA, comprobaciones=None),
        1,
        3,
        "enviar_a_revision",
        id="sin-comprobaciones",
    ),
    # closed gate (shadow mode): the loop still retries a rejection; kills the v1.2 rule
    # "a closed gate sends the first attempt to review".
    pytest.param(dict(puntuacion=0.2, puerta=None), 1, 3, "generar", id="cerrada-no"),
    pytest.param(
        dict(puntuacion=0.99, puerta=None, comprobaciones=FALLA),
        1,
        3,
        "generar",
        id="cerrada-codigo-falla",
    ),
    pytest.param(dict(puntuacion=0.2, puerta=None), 3, 3, "enviar_a_revision", id="cerrada-ultimo"),
    # closed gate, the judge approves: review, never published; kills "closed gate falls back
    # to the judge's yes".
    pytest.param(
        dict(aprobada=True, puntuacion=1.0, puerta=None), 1, 3, "enviar_a_revision", id="cerrada-si"
    ),
    # where the final ficha goes, the score decides, not the judge's yes/no: kills
    # "certificada publishes on aprobada". A rejection still retries first: kills "retries
    # read the score".
    pytest.param(
        dict(aprobada=False, puntuacion=0.9, puerta=PUERTA), 3, 3, "publicar", id="no-s-alta-final"
    ),
    pytest.param(
        dict(aprobada=False, puntuacion=0.9, puerta=PUERTA), 1, 3, "generar", id="no-s-alta"
    ),
    # an invalid answer goes to review whatever the gate: kills a dropped invalida check.
    pytest.param(
        dict(invalida=True, puntuacion=0.99, puerta=PUERTA),
        1,
        3,
        "enviar_a_revision",
        id="invalida",
    ),
    # v1.6, the blind shadow share: an open gate's final ficha in the share goes to review
    # whatever its score (kills "the share is ignored" and "the share only takes fichas under
    # λ"); it never stops a retry (kills "the share ends the loop early").
    pytest.param(
        dict(aprobada=True, puntuacion=0.99, puerta=PUERTA, sombra=True),
        1,
        3,
        "enviar_a_revision",
        id="sombra-s-alta",
    ),
    pytest.param(
        dict(aprobada=True, puntuacion=0.99, puerta=PUERTA, sombra=False),
        1,
        3,
        "publicar",
        id="fuera-de-sombra",
    ),
    pytest.param(
        dict(puntuacion=0.99, puerta=PUERTA, sombra=True), 1, 3, "generar", id="sombra-no"
    ),
]


@pytest.mark.parametrize(("campos", "intentos", "max_intentos", "ruta"), CERTIFICADA)
def test_decidir_modo_certificada(
    campos: dict[str, Any], intentos: int, max_intentos: int, ruta: str
) -> None:
    aprobada = campos.pop("aprobada", False)
    estado = _estado(aprobada, intentos, **campos)
    assert decidir(estado, max_intentos, "certificada") == ruta


@pytest.mark.parametrize("aprobada", [True, False])
@pytest.mark.parametrize("codigo", [OK, FALLA, None])
@pytest.mark.parametrize("puntuacion", [None, 0.0, 0.5, UMBRAL, 0.99])
@pytest.mark.parametrize("intentos", [1, 2, 3])
def test_la_puerta_no_cambia_los_reintentos(
    aprobada: bool, codigo: dict[str, Any] | None, puntuacion: float | None, intentos: int
) -> None:
    """Shadow mode runs the loop an open gate runs: whether the loop tries again never depends
    on the gate, only where the final ficha goes does. Kills any gate-dependent retry."""
    rutas = {
        nombre: decidir(
            _estado(
                aprobada, intentos, puntuacion=puntuacion, puerta=puerta, comprobaciones=codigo
            ),
            3,
            "certificada",
        )
        for nombre, puerta in {"cerrada": None, "abierta": PUERTA, "l0": {"umbral": 0.0}}.items()
    }
    reintenta = {nombre: ruta == "generar" for nombre, ruta in rutas.items()}
    assert len(set(reintenta.values())) == 1, rutas
    assert rutas["cerrada"] in {"generar", "enviar_a_revision"}


def test_decidir_es_pura() -> None:
    estado = _estado(False, 1, puntuacion=UMBRAL, puerta=PUERTA)
    copia = copy.deepcopy(estado)
    assert decidir(estado, 3, "certificada") == decidir(estado, 3, "certificada")
    assert estado == copia


def test_tras_generar() -> None:
    assert tras_generar({"invalida": None}) == "evaluar"
    assert tras_generar({}) == "evaluar"
    assert (
        tras_generar({"invalida": {"agente": "generador", "detalle": "x"}}) == "enviar_a_revision"
    )


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
