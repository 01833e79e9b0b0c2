"""esquemas.canonico, the one canonical JSON: equal values give one text and one hash, and
what is stored from it (an event's fingerprint, a setting's text in the gate key) is what the
releases before it wrote."""

from __future__ import annotations

from esquemas import EventoCambio
from esquemas.canonico import json_canonico, sha256_canonico
from grafo.fuente_puerta import texto_ajustes
from harness.eventos import evento_dict
from versiones.regla import huella


def test_el_orden_de_las_claves_no_cuenta_y_los_caracteres_quedan() -> None:
    uno = {"b": [1, 2.5], "a": {"y": "ñandú", "x": None}}
    otro = {"a": {"x": None, "y": "ñandú"}, "b": [1, 2.5]}
    assert json_canonico(uno) == json_canonico(otro) == '{"a":{"x":null,"y":"ñandú"},"b":[1,2.5]}'
    assert sha256_canonico(uno) == sha256_canonico(otro)
    assert json_canonico({"y": "ñ"}, solo_ascii=True) == '{"y":"\\u00f1"}'
    assert sha256_canonico({"y": "ñ"}) != sha256_canonico({"y": "ñ"}, solo_ascii=True)


def test_lo_guardado_antes_sigue_valiendo() -> None:
    """Values written by the release before the one canonical JSON (issue 49)."""
    datos = evento_dict("ZAP-1", 2, event_id="ev-1")
    datos["ficha_proveedor"]["titulo"] = "Zapatilla señora ñandú"
    evento = EventoCambio.model_validate(datos)
    assert huella(evento) == "0ceb1282db1d67034bf49104b508be6c05773dcfd0d8c4e7178115ba26c4ebe2"
    ajustes = {"b": {"x": "ñ", "a": [1, 2.5]}, "a": "two words"}
    assert texto_ajustes(ajustes) == 'a="two words" b={"a":[1,2.5],"x":"ñ"}'
