"""``revision.web.pagina_puertas.filas`` with holds (pure): a hold record is shown on its gate's
row, never as a gate of its own; a held gate is neither open nor offered for opening; a gate known
only by
its hold still gets its row."""

from __future__ import annotations

from datetime import UTC, datetime

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import id_puerta
from harness.estados_puerta import clave_fake, estado
from puerta.retencion import registro_retencion
from revision.web.pagina_puertas import _clave_de, filas

CLAVE = clave_fake()
AHORA = datetime(2026, 12, 1, tzinfo=UTC)


def test_la_retencion_va_en_la_fila_de_su_puerta() -> None:
    abierta = estado(CLAVE, 0.9, "zapatillas")
    hold = registro_retencion("zapatillas", CLAVE, True, "ana", "quejas", AHORA)
    solo_hold = registro_retencion(FAMILIA_TODAS, CLAVE, True, "luis", None, AHORA)
    liberada = registro_retencion("camisetas", CLAVE, False, "ana", "ya", AHORA)
    estados = {e.id: e for e in (abierta, hold, solo_hold, liberada)}
    zapatillas = id_puerta("zapatillas", CLAVE)
    por_id = {f.id: f for f in filas(estados, [], {}, {zapatillas})}
    assert set(por_id) == {
        zapatillas,
        id_puerta(FAMILIA_TODAS, CLAVE),
        id_puerta("camisetas", CLAVE),
    }
    fila = por_id[zapatillas]
    assert fila.estado == abierta and fila.retencion == hold
    assert fila.retenida and not fila.abierta and not fila.lista
    conjunta = por_id[id_puerta(FAMILIA_TODAS, CLAVE)]
    assert conjunta.estado is None and conjunta.retenida
    camisetas = por_id[id_puerta("camisetas", CLAVE)]
    assert camisetas.retencion == liberada and not camisetas.retenida

    sin_hold = {f.id: f for f in filas({abierta.id: abierta}, [], {}, set())}
    assert sin_hold[zapatillas].abierta and not sin_hold[zapatillas].retenida


def test_la_clave_de_un_formulario_es_una_que_la_app_conoce() -> None:
    estados = {e.id: e for e in (estado(CLAVE, 0.9, "zapatillas"),)}
    assert _clave_de(id_puerta("camisetas", CLAVE), estados, []) == CLAVE
    assert _clave_de(id_puerta("*", CLAVE), estados, []) == CLAVE
    assert _clave_de(f"bicicletas|{CLAVE.texto()}", estados, []) is None  # no such family
    assert _clave_de("zapatillas|" + "0" * 16, estados, []) is None  # no such key
