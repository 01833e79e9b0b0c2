"""Reading raw input: every bad message gets the contract's code and a clear message."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from esquemas import EventoInvalido, Ficha, Problema, leer_evento, payload_texto
from harness.eventos import evento_dict

FAMILIAS = {"zapatillas", "camisetas"}


def _raw(**cambios: Any) -> bytes:
    return json.dumps(evento_dict(**cambios)).encode()


def test_evento_valido_ignora_campos_desconocidos() -> None:
    datos = evento_dict(otra_cosa={"x": 1})
    evento = leer_evento(json.dumps(datos).encode(), FAMILIAS)
    assert evento.sku == "ZAP-000123"
    assert evento.cifras == {"peso_g": 280}
    assert "otra_cosa" not in evento.model_dump()


@pytest.mark.parametrize(
    ("raw", "codigo", "campo"),
    [
        (b"\xff\xfe\x00garbage", "json_invalido", None),
        (b"{not json", "json_invalido", None),
        (None, "json_invalido", None),
        (b"[" * 50_000 + b"]" * 50_000, "demasiado_grande", None),
        (b"[" * 20_000 + b"]" * 20_000, "json_invalido", None),
        (b"x" * (1024 * 1024), "demasiado_grande", None),
        (b"[1, 2]", "esquema_invalido", None),
        (_raw(version="7"), "esquema_invalido", "version"),
        (_raw(version=0), "esquema_invalido", "version"),
        (_raw(version=True), "esquema_invalido", "version"),
        (_raw(sku="-mal"), "esquema_invalido", "sku"),
        (_raw(sku="A" * 65), "esquema_invalido", "sku"),
        (_raw(event_id=""), "esquema_invalido", "event_id"),
        (_raw(event_id="x" * 129), "esquema_invalido", "event_id"),
        (_raw(ocurrido_en="ayer"), "esquema_invalido", "ocurrido_en"),
        (_raw(ocurrido_en="2026-11-29T10:00:00"), "esquema_invalido", "ocurrido_en"),
        (_raw(familia="tostadoras"), "familia_desconocida", "familia"),
        (
            _raw(ficha_proveedor={"titulo": "t" * 501, "descripcion": "d", "atributos": {}}),
            "esquema_invalido",
            "ficha_proveedor.titulo",
        ),
        (
            _raw(
                ficha_proveedor={
                    "titulo": "t",
                    "descripcion": "d",
                    "atributos": {f"a{i}": "v" for i in range(101)},
                }
            ),
            "esquema_invalido",
            "ficha_proveedor.atributos",
        ),
        (
            _raw(ficha_proveedor={"titulo": "t", "descripcion": "d", "atributos": {"a": 1}}),
            "esquema_invalido",
            "ficha_proveedor.atributos.a",
        ),
    ],
)
def test_mensajes_invalidos(raw: bytes | None, codigo: str, campo: str | None) -> None:
    with pytest.raises(EventoInvalido) as info:
        leer_evento(raw, FAMILIAS)
    assert info.value.codigo == codigo
    assert info.value.campo == campo
    assert info.value.mensaje


def test_falta_un_campo_obligatorio() -> None:
    datos = evento_dict()
    del datos["proveedor"]
    with pytest.raises(EventoInvalido) as info:
        leer_evento(json.dumps(datos), FAMILIAS)
    assert (info.value.codigo, info.value.campo) == ("esquema_invalido", "proveedor")


def test_payload_texto_o_base64() -> None:
    assert payload_texto(b'{"a": "\xc3\xb1"}') == ('{"a": "ñ"}', "texto")
    crudo = b"\xff\x00\x01"
    texto, codificacion = payload_texto(crudo)
    assert codificacion == "base64" and base64.b64decode(texto) == crudo
    assert payload_texto(None) == ("", "texto")


def test_ficha_rechaza_titulo_de_81_caracteres() -> None:
    Ficha(titulo="ñ" * 80, descripcion="d", atributos={})
    with pytest.raises(ValueError):
        Ficha(titulo="ñ" * 81, descripcion="d", atributos={})


def test_problema_recorta_detalle_largo() -> None:
    problema = Problema(criterio="C04", detalle="x" * 500)
    assert len(problema.detalle) == 200


@pytest.mark.parametrize(
    ("raw", "campo"),
    [
        (_raw(version=2**53), "version"),
        (_raw(version=2**63), "version"),
        (_raw(version=2**64 + 1), "version"),
        (_raw(cifras={"peso_g": 2**64}), "cifras.peso_g"),
        (_raw(cifras={"peso_g": 1e300}), "cifras.peso_g"),
        (_raw(cifras={"nota": "x" * 201}), "cifras.nota"),
        (_raw(cifras={"peso_g": True}), "cifras.peso_g"),
        (b'{"version": 1, "version": 2}', "version"),
        (json.dumps(evento_dict(cifras={"peso_g": float("nan")})).encode(), None),
        (json.dumps(evento_dict(cifras={"peso_g": float("inf")})).encode(), None),
        (json.dumps(evento_dict(cifras={"peso_g": float("-inf")})).encode(), None),
    ],
)
def test_numeros_sin_cota_claves_repetidas_y_nan_son_esquema_invalido(
    raw: bytes, campo: str | None
) -> None:
    """Values that once wedged a lane (checkpoint msgpack, integer columns) stop at the door."""
    with pytest.raises(EventoInvalido) as exc:
        leer_evento(raw, FAMILIAS)
    assert exc.value.codigo == "esquema_invalido"
    if campo is not None:
        assert exc.value.campo is not None and exc.value.campo.startswith(campo)


def test_limites_exactos_se_aceptan() -> None:
    """The largest accepted version and figures round-trip unchanged."""
    cifras = {"a": 2**53 - 1, "b": -(2**53 - 1), "c": 0.28, "d": "x" * 200}
    evento = leer_evento(_raw(version=2**53 - 1, cifras=cifras), FAMILIAS)
    assert evento.version == 2**53 - 1
    assert evento.cifras == cifras
