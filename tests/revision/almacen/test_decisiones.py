"""revision.almacen.decisiones: the app judges an edited or approved ficha with the worker's own
origin."""

from __future__ import annotations

import pytest

from criterios import comprobar, fallos
from grafo.estado import origen_de as origen_del_worker
from harness.eventos import evento_dict
from harness.revisor import ficha_en_revision
from revision.almacen.decisiones import errores_por_campo, origen_de
from revision.almacen.item import Item


def _item(sku: str, familia: str = "zapatillas") -> Item:
    datos = ficha_en_revision(sku, familia=familia) if familia == "zapatillas" else {}
    evento = evento_dict(sku)
    datos = {
        **datos,
        "origen": {"ficha_proveedor": evento["ficha_proveedor"], "cifras": evento["cifras"]},
    }
    return Item(
        event_id=f"{sku}-v1",
        tipo="revision",
        motivo="sin_garantia",
        sku=sku,
        version=1,
        familia=familia,
        criterios=[],
        datos=datos,
        recibido_en=0.0,
        estado="abierta",
        cerrado_en=None,
    )


def test_el_origen_de_la_app_es_el_del_worker() -> None:
    """Kills a reviewer app that checks against less than the loop did (the SKU, the family's
    required attributes): it would refuse to approve a ficha the loop's checks passed."""
    evento = evento_dict("OT-07")
    worker = origen_del_worker(evento, ("marca", "talla"))
    app = origen_de(_item("OT-07"))
    assert app["sku"] == worker["sku"] == "OT-07"
    assert set(app) == set(worker)
    assert app["ficha_proveedor"] == worker["ficha_proveedor"]


def test_un_titulo_con_los_numeros_del_sku_pasa_en_la_app() -> None:
    """C11 accepts the numbers of the SKU in the app as in the loop (the fake LLM's titles
    carry them: "Producto OT-07")."""
    item = _item("OT-07")
    ficha = {"titulo": "Producto OT-07", "descripcion": "x", "atributos": {}}
    resultado = comprobar(ficha, origen_de(item))
    assert resultado["C11"]["ok"], resultado["C11"]


def test_una_familia_que_las_tablas_no_conocen_no_rompe_la_app() -> None:
    item = _item("XX-1", familia="desconocida")
    origen = origen_de(item)
    assert origen["atributos_obligatorios"] == []
    assert fallos(comprobar({"titulo": "t", "descripcion": "d", "atributos": {}}, origen))


@pytest.mark.parametrize("sku", ["PU-00", "AB-123"])
def test_sku_en_el_origen(sku: str) -> None:
    assert origen_de(_item(sku))["sku"] == sku


def test_errores_por_campo():
    resultado = {
        "C01": {"ok": False, "detalle": "el título tiene 90 caracteres"},
        "C02": {"ok": True, "detalle": ""},
        "C05": {"ok": False, "detalle": "la descripción cita un precio"},
        "C07": {"ok": False, "detalle": "atributo peso: 300 g no está en el origen"},
    }
    campos = errores_por_campo(resultado)
    assert campos["titulo"][0].startswith("C01")
    assert campos["descripcion"][0].startswith("C05")
    assert campos["atributos"][0].startswith("C07")
