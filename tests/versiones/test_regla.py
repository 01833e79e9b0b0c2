"""The claim rule, pure: the fingerprint, and what ``dictaminar`` and ``decidir_reclamo``
decide for each case of what the store knows."""

from __future__ import annotations

from esquemas import EventoCambio
from harness.eventos import evento_dict
from versiones.regla import (
    Clave,
    Dictamen,
    ResultadoGuardado,
    decidir_reclamo,
    dictaminar,
    huella,
    mas_nueva,
    obsoleta,
)


def _guardado(sku: str, version: int, event_id: str = "e", huella_: str = "h") -> ResultadoGuardado:
    return ResultadoGuardado(event_id, sku, version, huella_, "fichas.publicadas", {"v": version})


def test_huella_ignores_key_order() -> None:
    evento = EventoCambio.model_validate(evento_dict("HUE-1", 1))
    reordered = EventoCambio.model_validate(dict(reversed(evento.model_dump(mode="json").items())))
    assert huella(evento) == huella(reordered)
    changed = evento.model_copy(update={"proveedor": "Otro SL"})
    assert huella(changed) != huella(evento)
    assert Clave.de_evento(evento) == Clave("HUE-1", 1, huella(evento))


def test_dictaminar_reuse_first_then_obsolete_then_registered() -> None:
    clave = Clave("S", 5, "h")
    assert dictaminar(clave, None, None) is Dictamen.NUEVO
    assert dictaminar(clave, 5, None) is Dictamen.NUEVO  # the same version is not newer
    assert dictaminar(clave, 6, None) is Dictamen.OBSOLETO
    assert dictaminar(clave, None, _guardado("S", 5)) is Dictamen.REGISTRADO
    assert dictaminar(clave, 6, _guardado("S", 5)) is Dictamen.OBSOLETO
    for otro in (_guardado("T", 5), _guardado("S", 4), _guardado("S", 5, huella_="x")):
        assert dictaminar(clave, 6, otro) is Dictamen.REUTILIZADO  # reuse wins over obsolete


def test_decidir_reclamo_lets_emit_the_stored_outcome_or_none() -> None:
    nuevo, guardado = _guardado("S", 5, "a"), _guardado("S", 5, "a")
    assert decidir_reclamo(nuevo, 4, None).guardado is nuevo
    assert decidir_reclamo(nuevo, 6, None).guardado is None
    registrado = decidir_reclamo(nuevo, 5, guardado)
    assert registrado.dictamen is Dictamen.REGISTRADO and registrado.guardado is guardado
    otro = _guardado("S", 7, "a")
    assert decidir_reclamo(nuevo, None, otro).guardado is otro  # REUTILIZADO: what is stored


def test_obsoleta_and_mas_nueva() -> None:
    assert not obsoleta(1, None) and not obsoleta(1, 0) and not obsoleta(3, 3)
    assert obsoleta(3, 4)
    assert mas_nueva(None, None) is None
    assert mas_nueva(None, 2, 7, None) == 7
