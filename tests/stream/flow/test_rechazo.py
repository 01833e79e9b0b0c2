"""The DLQ record is always producible and says exactly what it kept of the original."""

from __future__ import annotations

import base64
import hashlib
import json

from esquemas import EventoInvalido, EventoRechazado
from stream.flow.rechazo import MAX_PAYLOAD_BYTES, evento_rechazado

ERROR = EventoInvalido("demasiado_grande", "demasiado grande")


def test_valor_enorme_no_utf8_se_corta_con_hash_del_original() -> None:
    crudo = b"\xff" * (4 * 1024 * 1024)
    registro = evento_rechazado(ERROR, crudo, "proveedor.cambios", 2, 41)
    EventoRechazado.model_validate(registro)
    assert registro["truncado"] is True
    assert registro["payload_codificacion"] == "base64"
    assert base64.b64decode(registro["payload"]) == crudo[:MAX_PAYLOAD_BYTES]
    assert registro["payload_sha256"] == hashlib.sha256(crudo).hexdigest()
    assert "truncado" in registro["error"]["mensaje"]
    assert len(json.dumps(registro).encode()) < 1024 * 1024  # the producer's default maximum


def test_valor_pequeno_utf8_se_guarda_entero_como_texto() -> None:
    crudo = '{"sku": "Ñ"'.encode()
    registro = evento_rechazado(ERROR, crudo, "t", 0, 0)
    assert registro["payload"] == '{"sku": "Ñ"'
    assert registro["payload_codificacion"] == "texto"
    assert registro["truncado"] is False
    assert registro["payload_sha256"] == hashlib.sha256(crudo).hexdigest()


def test_corte_que_parte_un_caracter_pasa_a_base64() -> None:
    crudo = b"a" * (MAX_PAYLOAD_BYTES - 1) + "ñ".encode() + b"b" * 10
    registro = evento_rechazado(ERROR, crudo, "t", 0, 0)
    assert registro["truncado"] is True
    assert registro["payload_codificacion"] == "base64"
    assert base64.b64decode(registro["payload"]) == crudo[:MAX_PAYLOAD_BYTES]


def test_dlq_key_is_cut_and_headers_forwarded_within_budget() -> None:
    from stream.flow.rechazo import MAX_HEADERS_BYTES, MAX_KEY_BYTES, cabeceras_dlq, clave_dlq

    assert clave_dlq(None) is None
    assert clave_dlq(b"SKU-1") == b"SKU-1"
    assert clave_dlq(b"k" * (10 * MAX_KEY_BYTES)) == b"k" * MAX_KEY_BYTES
    assert cabeceras_dlq(None) == []
    assert cabeceras_dlq([("a", b"1"), ("b", None)]) == [("a", b"1"), ("b", b"")]
    big = [(f"h{i}", b"x" * 1000) for i in range(200)]
    kept = cabeceras_dlq(big)
    assert kept == big[: len(kept)]
    assert (
        sum(len(n) + len(v) for n, v in kept)
        <= MAX_HEADERS_BYTES
        < sum(len(n) + len(v) for n, v in big)
    )
