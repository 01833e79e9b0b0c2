"""``herramientas.calibrar.recalificar.lote_del_almacen``: which stored decided fichas are
re-scored, and
why the others are not (pure; the command is tested as a process in test_calibrar_recalificar)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.estados_puerta import clave_fake
from harness.revisor import ficha_en_revision
from herramientas.calibrar.recalificar import GeneradorDistinto, lote_del_almacen, mismo_generador
from revision.almacen.item import Item

CLAVE = clave_fake()


def _item(n: int, clave: Any, **cambios: Any) -> Item:
    datos = ficha_en_revision(f"R-{n}") | {"clave": clave} | cambios
    return Item(
        event_id=datos["event_id"], tipo="revision", motivo="sin_garantia", sku=datos["sku"],
        version=1, familia=datos["familia"], criterios=[], datos=datos, recibido_en=float(n),
        estado="decidida", cerrado_en=None,
    )  # fmt: skip


def test_solo_las_del_generador_en_marcha_y_cuenta_las_demas() -> None:
    evaluador_nuevo = CLAVE.model_copy(update={"prompt_evaluador_sha256": "b" * 64})
    otro = CLAVE.model_copy(update={"modelo": "otro"}).model_dump()
    cerrados: list[tuple[Item, str | None, bool | None]] = [
        (_item(0, CLAVE.model_dump()), "aprobada", True),
        (_item(1, CLAVE.model_dump()), "editada", True),
        (_item(2, otro), "aprobada", True),
        (_item(3, None), "aprobada", None),
        (_item(4, CLAVE.model_dump()), "obsoleta", True),
        (_item(5, CLAVE.model_dump(), ficha=None), "rechazada", True),
        (_item(6, {"modelo": 3}), "aprobada", True),
        # Held back or sampled by an open gate: chosen by the gate, never counted (issue 38).
        (_item(7, CLAVE.model_dump()), "aprobada", False),
        (_item(8, CLAVE.model_dump()), "rechazada", None),
    ]
    lote = lote_del_almacen(cerrados, evaluador_nuevo, "almacen test")
    assert [c["candidatas"][0]["aprobada"] for c in lote.casos] == [True, False]
    assert (
        lote.casos[0]["evento"]["ficha_proveedor"]
        == cerrados[0][0].datos["origen"]["ficha_proveedor"]
    )
    assert lote.fuera == {
        "otro_generador": 1, "anterior_v1_3": 1, "obsoletas": 1, "sin_ficha": 1,
        "clave_invalida": 1, "fuera_de_sombra": 1, "sombra_desconocida": 1,
    }  # fmt: skip
    assert mismo_generador(CLAVE, evaluador_nuevo)
    with pytest.raises(GeneradorDistinto, match="needs new labels"):
        lote_del_almacen(cerrados[2:3], CLAVE, "almacen test")
