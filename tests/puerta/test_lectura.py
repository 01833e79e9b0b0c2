"""Reading ``fichas.puerta`` fail closed (``puerta.lectura``): a gate record this version cannot
interpret closes the gate its key names, a hold record reads as held; no Kafka here."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from esquemas.estado_puerta import EstadoPuerta, id_puerta, id_retencion
from harness.estados_puerta import clave_fake, estado
from harness.version_siguiente import siguiente
from puerta.lectura import Ilegible, Instantanea, leer_registro
from puerta.resolucion import resolver
from puerta.retencion import registro_retencion

CLAVE = clave_fake()
TV = id_puerta("tv", CLAVE)
HOLD = id_retencion("tv", CLAVE)
AHORA = datetime(2026, 12, 1, 4, 0, tzinfo=UTC)


def _bytes(datos: Any) -> bytes:
    return json.dumps(datos).encode()


def _siguiente(e: EstadoPuerta, **nuevos: Any) -> bytes:
    return _bytes(siguiente(EstadoPuerta, e.model_dump(mode="json"), nuevos))


def _abierta() -> EstadoPuerta:
    return estado(CLAVE, umbral=0.8, familia="tv", actualizada_en=AHORA)


def _leer(*registros: tuple[str, bytes | None]) -> Instantanea:
    instantanea = Instantanea()
    for clave, valor in registros:
        instantanea.aplicar(clave, leer_registro(clave, valor))
    return instantanea


def _razon(instantanea: Instantanea) -> str:
    return resolver("tv", CLAVE, instantanea.estados()).razon


def test_el_cierre_de_una_version_nueva_cierra_la_puerta_abierta() -> None:
    """The issue's case: an open gate, then a closure with a field and a motivo v1.6 does not
    know. Before: skipped, the gate stayed open. Now: closed, and why is kept."""
    abierta = _abierta()
    cierre = _siguiente(estado(CLAVE, familia="tv", abierta=False), motivo="deriva_detectada")
    instantanea = _leer((TV, _bytes(abierta.model_dump(mode="json"))))
    assert _razon(instantanea) == "propia"
    cambiadas = instantanea.aplicar(TV, leer_registro(TV, cierre))
    assert cambiadas == [TV]
    assert _razon(instantanea) == "sin_registro"
    ilegible = instantanea.ilegibles()[TV]
    assert "deriva_detectada" in ilegible.razon and not ilegible.retencion


@pytest.mark.parametrize(
    "valor",
    [
        # an opening for a reason this version does not know: closed, not opened
        lambda: _siguiente(_abierta(), motivo="abierta_por_mezcla"),
        # a key with a mode this version does not know: the id is no longer its own
        lambda: _siguiente(_abierta(), **{"clave.modo_evaluador": "jurado"}),
        # a field this version cannot read, a value that is not JSON, an empty object
        lambda: _bytes(_abierta().model_dump(mode="json") | {"umbral": "alto"}),
        lambda: b"\xff{no es json",
        lambda: b"{}",
        # a valid state of another gate, or a hold's value, under this gate's key
        lambda: _bytes(estado(CLAVE, familia="nevera").model_dump(mode="json")),
        lambda: _bytes(
            registro_retencion("tv", CLAVE, True, "ana", None, AHORA).model_dump(mode="json")
        ),
    ],
)
def test_lo_que_no_puede_interpretar_en_una_puerta_la_cierra(valor: Any) -> None:
    instantanea = _leer((TV, _bytes(_abierta().model_dump(mode="json"))), (TV, valor()))
    assert TV not in instantanea.estados() and TV in instantanea.ilegibles()
    assert _razon(instantanea) == "sin_registro"
    # A record this version reads, written later at the same key, decides again.
    instantanea.aplicar(TV, leer_registro(TV, _bytes(_abierta().model_dump(mode="json"))))
    assert _razon(instantanea) == "propia" and not instantanea.ilegibles()


def test_una_version_nueva_con_solo_campos_nuevos_se_lee_entera() -> None:
    """Fields are ignored at every level: a next-version opening with a known motivo opens."""
    instantanea = _leer((TV, _siguiente(_abierta())))
    assert instantanea.estados() == {TV: _abierta()} and not instantanea.ilegibles()
    retenida = registro_retencion("tv", CLAVE, True, "ana", "tallas", AHORA)
    instantanea.aplicar(HOLD, leer_registro(HOLD, _siguiente(retenida)))
    assert _razon(instantanea) == "retenida"
    liberada = registro_retencion("tv", CLAVE, False, "luis", None, AHORA)
    instantanea.aplicar(HOLD, leer_registro(HOLD, _siguiente(liberada)))
    assert _razon(instantanea) == "propia"


def test_una_retencion_que_no_puede_leer_retiene() -> None:
    """A hold record with a motivo this version does not know is read as held, signed by whom
    the record names; one with nothing readable is held on the gate record's family and key,
    whichever of the two arrives first."""
    nueva = registro_retencion("tv", CLAVE, True, "ana", None, AHORA).model_dump(mode="json")
    instantanea = _leer(
        (TV, _bytes(_abierta().model_dump(mode="json"))),
        (HOLD, _bytes(siguiente(EstadoPuerta, nueva, {"motivo": "retenida_hasta"}))),
    )
    res = resolver("tv", CLAVE, instantanea.estados())
    assert res.razon == "retenida" and res.estado is not None
    assert res.estado.retenida_por == "ana" and res.estado.actualizada_en == AHORA
    assert res.estado.nota is not None and "retenida_hasta" in res.estado.nota
    # Nothing readable at the hold id, before the gate's own record arrives: held once it does.
    instantanea = _leer((HOLD, b"basura"))
    assert instantanea.estados() == {}
    assert instantanea.aplicar(
        TV, leer_registro(TV, _bytes(_abierta().model_dump(mode="json")))
    ) == [
        TV,
        HOLD,
    ]
    res = resolver("tv", CLAVE, instantanea.estados())
    assert res.razon == "retenida" and res.estado is not None
    assert res.estado.retenida_por == "desconocido"
    # Only a record that says 'liberada' releases it (or a tombstone, as ever).
    liberada = registro_retencion("tv", CLAVE, False, "luis", None, AHORA)
    instantanea.aplicar(HOLD, leer_registro(HOLD, _bytes(liberada.model_dump(mode="json"))))
    assert _razon(instantanea) == "propia"
    instantanea.aplicar(HOLD, leer_registro(HOLD, b"basura"))
    assert _razon(instantanea) == "retenida"
    instantanea.aplicar(HOLD, leer_registro(HOLD, None))
    assert _razon(instantanea) == "propia"


def test_solo_se_salta_un_registro_cuya_clave_no_nombra_ninguna_puerta() -> None:
    for clave in (None, "basura", "tv", f"{TV}|otra_cosa", "tv|XYZ"):
        with pytest.raises(ValueError, match="names no gate"):
            leer_registro(clave, _bytes(_abierta().model_dump(mode="json")))
    assert isinstance(leer_registro(TV, b"{}"), Ilegible)
    assert isinstance(leer_registro(HOLD, b"{}"), Ilegible)
    assert leer_registro(TV, None) is None  # a tombstone
