"""The headers of the worker's records: what a consumer routes on without parsing the value."""

from __future__ import annotations

from stream.cabeceras import cabeceras_rechazo, cabeceras_resultado

EVENTO = {"event_id": "e-1", "sku": "ZAP-1", "version": 12, "otro": "no va en cabeceras"}


def test_un_resultado_lleva_sku_version_event_id_y_esquema() -> None:
    assert cabeceras_resultado("fichas.publicadas", EVENTO) == [
        ("sku", b"ZAP-1"),
        ("version", b"12"),
        ("event_id", b"e-1"),
        ("esquema", b"FichaPublicada"),
        ("esquema_version", b"1.5"),
    ]
    revision = dict(cabeceras_resultado("fichas.revision_manual", EVENTO))
    assert revision["esquema"] == b"FichaEnRevision"
    # Same outcome, same headers: a redelivery is byte-identical.
    assert cabeceras_resultado("fichas.publicadas", dict(EVENTO)) == cabeceras_resultado(
        "fichas.publicadas", EVENTO
    )


def test_la_dlq_reenvia_las_cabeceras_originales_y_nombra_su_esquema() -> None:
    originales = [("traza", b"t-1"), ("esquema", b"EventoCambio"), ("vacia", None)]
    assert cabeceras_rechazo(originales) == [  # type: ignore[arg-type]
        ("traza", b"t-1"),
        ("vacia", b""),
        ("esquema", b"EventoRechazado"),
        ("esquema_version", b"1.5"),
    ]
    assert cabeceras_rechazo(None) == [
        ("esquema", b"EventoRechazado"),
        ("esquema_version", b"1.5"),
    ]
