"""``herramientas.calibrar.recalificar``: which stored decided fichas are replayed, with which
history, why the others are not, and when nothing can be certified (pure; the command is tested
as a process in test_calibrar_recalificar)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.estados_puerta import clave_fake
from harness.revisor import ficha_en_revision
from herramientas.calibrar.recalificar import (
    GeneradorDistinto,
    etiquetas_del_almacen,
    intentos_guardados,
    lote_del_almacen,
    mismo_generador,
    sin_poblacion,
)
from revision.almacen.item import Item

CLAVE = clave_fake()


def _item(n: int, clave: Any, **cambios: Any) -> Item:
    datos = ficha_en_revision(f"R-{n}") | {"clave": clave} | cambios
    return Item(
        event_id=datos["event_id"], tipo="revision", motivo="sin_garantia", sku=datos["sku"],
        version=1, familia=datos["familia"], criterios=[], datos=datos, recibido_en=float(n),
        estado="decidida", cerrado_en=None,
    )  # fmt: skip


def test_solo_las_del_generador_en_marcha_con_su_historial_y_cuenta_las_demas() -> None:
    evaluador_nuevo = CLAVE.model_copy(update={"prompt_evaluador_sha256": "b" * 64})
    otro = CLAVE.model_copy(update={"modelo": "otro"}).model_dump()
    propia = CLAVE.model_dump()
    cerrados: list[tuple[Item, str | None, bool | None]] = [
        (_item(0, propia), "aprobada", True),
        (_item(1, propia), "editada", True),
        (_item(2, otro), "aprobada", True),
        (_item(3, None), "aprobada", None),
        (_item(4, propia), "obsoleta", True),
        (_item(5, propia, ficha=None), "rechazada", True),
        (_item(6, {"modelo": 3}), "aprobada", True),
        # Held back or sampled by an open gate: chosen by the gate, never counted (issue 38).
        (_item(7, propia), "aprobada", False),
        (_item(8, propia), "rechazada", None),
        # Two attempts but none kept: where the loop stopped cannot be replayed (issue 47).
        (_item(9, propia, historial=[]), "aprobada", True),
        # One attempt and no history kept: its only input is the origin, nothing to replay.
        (_item(10, propia, historial=[], intentos=1), "rechazada", True),
    ]
    lote = lote_del_almacen(cerrados, evaluador_nuevo, "almacen test")
    assert [h.aprobada for h in lote.historias] == [True, False, False]
    primera = lote.historias[0]
    assert primera.evento["ficha_proveedor"] == cerrados[0][0].datos["origen"]["ficha_proveedor"]
    assert [i["intento"] for i in primera.intentos] == [1, 2]
    assert primera.intentos[0]["veredicto"]["problemas"][0]["criterio"] == "C06"
    assert lote.historias[2].intentos == [{"intento": 1, "ficha": cerrados[10][0].datos["ficha"]}]
    assert lote.fuera == {
        "otro_generador": 1, "anterior_v1_3": 1, "obsoletas": 1, "sin_ficha": 1,
        "clave_invalida": 1, "fuera_de_sombra": 1, "sombra_desconocida": 1, "sin_historial": 1,
    }  # fmt: skip
    # The store's labels of one generator: the same identity whatever the evaluator.
    assert lote.etiquetas == etiquetas_del_almacen(CLAVE) == etiquetas_del_almacen(evaluador_nuevo)
    assert lote.etiquetas != etiquetas_del_almacen(CLAVE.model_copy(update={"modelo": "otro"}))
    assert mismo_generador(CLAVE, evaluador_nuevo)
    with pytest.raises(GeneradorDistinto, match="needs new labels"):
        lote_del_almacen(cerrados[2:3], CLAVE, "almacen test")


def test_un_historial_que_no_acaba_en_la_ficha_etiquetada_no_se_repite() -> None:
    datos = ficha_en_revision("H-1")
    assert intentos_guardados(datos) is not None
    otra = {**datos["ficha"], "titulo": "Otra ficha"}
    assert intentos_guardados(datos | {"ficha": otra}) is None  # a person's edit, say
    assert intentos_guardados(datos | {"intentos": 3}) is None  # an attempt missing
    saltado = [dict(datos["historial"][0]), dict(datos["historial"][1], intento=3)]
    assert intentos_guardados(datos | {"historial": saltado}) is None
    roto = [dict(datos["historial"][0], veredicto="no"), datos["historial"][1]]
    assert intentos_guardados(datos | {"historial": roto}) is None
    # A field a newer writer added to an attempt is ignored, not a reason to drop it.
    nuevo = [dict(i, campo_nuevo=1) for i in datos["historial"]]
    assert intentos_guardados(datos | {"historial": nuevo}) is not None


def test_sin_poblacion_solo_cuando_nada_se_conserva_porque_el_bucle_reintenta() -> None:
    caidas = {"candidatas": 0, "sin_historial": 2, "reintentaria": 3, "aprobada_antes": 1}
    porque = sin_poblacion([caidas], max_intentos=3)
    assert porque is not None
    assert "2 sin_historial, 1 aprobada_antes, 3 reintentaria" in porque
    assert "FICHAS_MAX_INTENTOS=3" in porque and "shadow mode" in porque
    assert sin_poblacion([caidas, {"candidatas": 1}], max_intentos=3) is None
    assert sin_poblacion([caidas], max_intentos=1) is None
    # nothing dropped for the replay (an empty store, everything obsolete): a closed gate
    assert sin_poblacion([{"candidatas": 0, "obsoletas": 4}], max_intentos=3) is None
