"""The wire format (``esquemas.wire``): value bytes and headers per record kind."""

from __future__ import annotations

from datetime import UTC, datetime

from esquemas import EstadoPuerta
from esquemas.estado_puerta import ClavePuerta
from esquemas.wire import (
    cabeceras_decision,
    cabeceras_estado,
    cabeceras_rechazo,
    cabeceras_resultado,
    encode_value,
)

EVENTO = {"event_id": "e-1", "sku": "ZAP-1", "version": 12, "otro": "no va en cabeceras"}

# An outcome as the store keeps it: non-ASCII text, nested object, float, null, bool, escapes.
SALIDA = {
    "event_id": "e-1",
    "sku": "ZAP-1",
    "version": 12,
    "titulo": "Zapatilla «Ñandú» 42",
    "atributos": {"talla": "42", "peso_g": 310.5},
    "intentos": 2,
    "puntuacion": 0.875,
    "revision": None,
    "ok": True,
    "emoji": "✓",
    "lista": [1, 2.0, 'a"b\\c\n'],
}
# Its bytes as every writer wrote them before the wire format had one place (the handler's
# ``encode``, the DLQ's, the person's publication, the app's ``valor_json``). A redelivered
# outcome is re-emitted from the stored value: any other byte here is a second, different
# record for a read_committed reader.
SALIDA_BYTES = (
    b'{"event_id":"e-1","sku":"ZAP-1","version":12,'
    b'"titulo":"Zapatilla \xc2\xab\xc3\x91and\xc3\xba\xc2\xbb 42",'
    b'"atributos":{"talla":"42","peso_g":310.5},"intentos":2,"puntuacion":0.875,'
    b'"revision":null,"ok":true,"emoji":"\xe2\x9c\x93","lista":[1,2.0,"a\\"b\\\\c\\n"]}'
)


def test_la_codificacion_de_un_valor_es_la_de_siempre_byte_a_byte() -> None:
    assert encode_value(SALIDA) == SALIDA_BYTES
    assert encode_value(dict(SALIDA)) == encode_value(SALIDA)


def _estado(umbral: float | None) -> EstadoPuerta:
    clave = ClavePuerta(
        modelo="qwen", prompt_evaluador_sha256="b" * 64, criterios_version="3",
        modo_evaluador="veredicto",
    )  # fmt: skip
    return EstadoPuerta(
        familia="tv ñ", clave=clave, abierta=umbral is not None, umbral=umbral, objetivo=0.9,
        delta=0.05, n=30, k=0, origen_datos="prueba",
        motivo="certificada" if umbral is not None else "cota_en_linea_bajo_objetivo",
        actualizada_en=datetime(2025, 3, 1, 12, 0, tzinfo=UTC),
    )  # fmt: skip


def test_un_estado_de_puerta_se_escribe_como_lo_escribe_pydantic() -> None:
    """A model keeps pydantic's own JSON (the gate topic's bytes since v1.2), which differs
    from ``json.dumps`` in a float's exponent: the one thing that would change its bytes."""
    pequeno = _estado(6.5e-9)
    assert encode_value(pequeno) == pequeno.model_dump_json().encode("utf-8")
    assert b'"umbral":6.5e-9' in encode_value(pequeno)
    assert b'"familia":"tv \xc3\xb1"' in encode_value(pequeno)
    assert EstadoPuerta.model_validate_json(encode_value(pequeno)) == pequeno


def test_un_resultado_lleva_sku_version_event_id_y_esquema() -> None:
    assert cabeceras_resultado("fichas.publicadas", EVENTO) == [
        ("sku", b"ZAP-1"),
        ("version", b"12"),
        ("event_id", b"e-1"),
        ("esquema", b"FichaPublicada"),
        ("esquema_version", b"1.6"),
    ]
    revision = dict(cabeceras_resultado("fichas.revision_manual", EVENTO))
    assert revision["esquema"] == b"FichaEnRevision"
    # Same outcome, same headers: a redelivery is byte-identical.
    assert cabeceras_resultado("fichas.publicadas", dict(EVENTO)) == cabeceras_resultado(
        "fichas.publicadas", EVENTO
    )


def test_una_decision_lleva_las_cabeceras_de_su_ficha_y_su_esquema() -> None:
    assert cabeceras_decision(EVENTO) == [
        ("sku", b"ZAP-1"),
        ("version", b"12"),
        ("event_id", b"e-1"),
        ("esquema", b"DecisionRevision"),
        ("esquema_version", b"1.6"),
    ]


def test_un_estado_de_puerta_lleva_solo_el_esquema() -> None:
    assert cabeceras_estado() == [("esquema", b"EstadoPuerta"), ("esquema_version", b"1.6")]


def test_la_dlq_reenvia_las_cabeceras_originales_y_nombra_su_esquema() -> None:
    originales = [("traza", b"t-1"), ("esquema", b"EventoCambio"), ("vacia", None)]
    assert cabeceras_rechazo(originales) == [
        ("traza", b"t-1"),
        ("vacia", b""),
        ("esquema", b"EventoRechazado"),
        ("esquema_version", b"1.6"),
    ]
    assert cabeceras_rechazo(None) == [
        ("esquema", b"EventoRechazado"),
        ("esquema_version", b"1.6"),
    ]
