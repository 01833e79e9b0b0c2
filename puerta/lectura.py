"""A record of ``fichas.puerta`` as this version reads it: a gate it cannot read is closed (pure).

``leer_registro`` reads one record's key and value through the contract's decode
(``esquemas.decode``: fields this version does not know are ignored at every level). What it
gives: the ``EstadoPuerta``; None for a tombstone; or ``Ilegible`` when the key names a gate or a
hold (``<familia>|<key id>`` or ``<familia>|<key id>|retencion``) but the value cannot be
interpreted (a motivo or any value this version does not know, a field it cannot read, a key
that is not the value's own id). ``en_vigor`` says what stands at that key then: nothing at a
gate id (no record: closed), a hold at a hold id (held), made from whatever names the gate's
family and key, the value's own or the gate record's. Only a key that names no gate is refused
(``ValueError``): the reader skips that record.

Invariant: no record the reader cannot interpret ever leaves a gate open or a hold released,
whatever came before it at that key. Why: docs/puerta.md, "The topic fichas.puerta", and
docs/contrato.md, "Readers never fail open".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from esquemas.constantes import MAX_NOTA_RETENCION, MAX_RETENIDA_POR, SUFIJO_RETENCION
from esquemas.decode import decode
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta
from puerta.retencion import registro_retencion

# A record key that names a gate: ``<familia or *>|<16 hex digits>``, then ``|retencion`` for
# the gate's hold (``esquemas.estado_puerta.id_puerta``, ``id_retencion``).
ID_NOMBRA_PUERTA = re.compile(
    rf"^(?P<puerta>[^|]+\|[0-9a-f]{{16}})(?P<retencion>\|{SUFIJO_RETENCION})?$"
)
# Who a hold this version made of an unreadable record names, when the record says nobody.
RETENIDA_POR_DESCONOCIDO = "desconocido"
# When such a hold says it was written, when the record does not say.
SIN_FECHA = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Ilegible:
    """A record at a key that names a gate, which this version cannot interpret.

    ``familia`` and ``clave`` are the gate's when the value gives them and they make exactly
    this id; ``retenida_por`` and ``actualizada_en`` what it says of itself, when readable.
    """

    id: str
    razon: str
    familia: str | None = None
    clave: ClavePuerta | None = None
    retenida_por: str | None = None
    actualizada_en: datetime | None = None

    @property
    def retencion(self) -> bool:
        """Whether the key is a gate's hold id (then the record reads as held)."""
        return self.id.endswith(f"|{SUFIJO_RETENCION}")

    @property
    def puerta(self) -> str:
        """The gate id the key names (the hold id without its suffix)."""
        return self.id.removesuffix(f"|{SUFIJO_RETENCION}")


def nombra_puerta(id_registro: str) -> bool:
    """Whether a record key is a gate id or a hold id."""
    return ID_NOMBRA_PUERTA.match(id_registro) is not None


def leer_registro(id_registro: str | None, valor: bytes | None) -> EstadoPuerta | Ilegible | None:
    """One record of the topic: its state, None for a tombstone, or ``Ilegible``.

    ``ValueError`` only when the key names no gate (no key, or not a gate id or hold id).
    """
    if id_registro is None or not nombra_puerta(id_registro):
        raise ValueError(f"the key {id_registro!r} names no gate")
    if valor is None:
        return None
    try:
        datos = json.loads(valor)
    except ValueError as exc:  # not JSON, or not UTF-8
        return Ilegible(id_registro, f"not JSON: {exc}")
    return leer_datos(id_registro, datos)


def leer_datos(id_registro: str, datos: Any) -> EstadoPuerta | Ilegible:
    """A parsed state at a key that names a gate (an audit file's entries too)."""
    try:
        leido = decode(EstadoPuerta, datos)
    except ValidationError as exc:
        error = exc.errors()[0]
        donde = ".".join(str(p) for p in error["loc"]) or "the value"
        return _ilegible(id_registro, f"not an EstadoPuerta: {donde}: {error['msg']}", datos)
    if not leido.understood():
        return _ilegible(
            id_registro, f"a value this version does not know: {leido.reasons()}", datos
        )
    if leido.value.id != id_registro:
        return _ilegible(id_registro, f"the key is not the state's id {leido.value.id!r}", datos)
    return leido.value


def en_vigor(ilegible: Ilegible, legibles: Mapping[str, EstadoPuerta]) -> EstadoPuerta | None:
    """What stands at an unreadable record's key: at a gate id nothing (the gate is closed); at
    a hold id a hold, of the gate the value names or, failing that, of the gate record at the
    gate id (None when neither names one: that gate has no record, so it is closed anyway)."""
    if not ilegible.retencion:
        return None
    familia, clave = ilegible.familia, ilegible.clave
    if familia is None or clave is None:
        puerta = legibles.get(ilegible.puerta)
        if puerta is None or id_puerta(puerta.familia, puerta.clave) != ilegible.puerta:
            return None
        familia, clave = puerta.familia, puerta.clave
    nota = f"this version cannot read the hold record: {ilegible.razon}"
    return registro_retencion(
        familia,
        clave,
        True,
        ilegible.retenida_por or RETENIDA_POR_DESCONOCIDO,
        nota[:MAX_NOTA_RETENCION],
        ilegible.actualizada_en or SIN_FECHA,
    )


def _ilegible(id_registro: str, razon: str, datos: Any) -> Ilegible:
    """The unreadable record, with what can be read of the gate it names."""
    if not isinstance(datos, dict):
        return Ilegible(id_registro, razon)
    familia, clave = datos.get("familia"), _clave(datos.get("clave"))
    nombrada = id_registro.removesuffix(f"|{SUFIJO_RETENCION}")
    if not isinstance(familia, str) or clave is None or id_puerta(familia, clave) != nombrada:
        familia, clave = None, None
    por = datos.get("retenida_por")
    por = por.strip() if isinstance(por, str) else ""
    return Ilegible(
        id_registro,
        razon,
        familia,
        clave,
        por if 0 < len(por) <= MAX_RETENIDA_POR else None,
        _fecha(datos),
    )


def _clave(datos: Any) -> ClavePuerta | None:
    """A gate key this version reads whole, or None."""
    try:
        leida = decode(ClavePuerta, datos)
    except ValidationError:
        return None
    return leida.value if leida.understood() else None


def _fecha(datos: Mapping[str, Any]) -> datetime | None:
    """``actualizada_en`` when it is a timestamp with its zone."""
    texto = datos.get("actualizada_en")
    try:
        fecha = datetime.fromisoformat(texto) if isinstance(texto, str) else None
    except ValueError:
        return None
    return fecha if fecha is not None and fecha.tzinfo is not None else None


class Instantanea:
    """The gates as they stand: the newest record per key, read as ``en_vigor`` says.

    What ``puerta.topico.LectorPuertas.estados`` serves; the readable records and the
    unreadable ones are kept apart so that a hold made of a gate record follows that record.
    """

    def __init__(self) -> None:
        self._legibles: dict[str, EstadoPuerta] = {}
        self._ilegibles: dict[str, Ilegible] = {}
        self._vista: dict[str, EstadoPuerta] = {}

    def estados(self) -> dict[str, EstadoPuerta]:
        """A copy of the state at every key (an unreadable gate's key absent: closed)."""
        return dict(self._vista)

    def ilegibles(self) -> dict[str, Ilegible]:
        """The records this version could not read that are still the newest at their key."""
        return dict(self._ilegibles)

    def aplicar(self, id_registro: str, lectura: EstadoPuerta | Ilegible | None) -> list[str]:
        """Take in the newest record at ``id_registro``; the keys whose state changed."""
        self._legibles.pop(id_registro, None)
        self._ilegibles.pop(id_registro, None)
        if isinstance(lectura, Ilegible):
            self._ilegibles[id_registro] = lectura
        elif lectura is not None:
            self._legibles[id_registro] = lectura
        puerta = id_registro.removesuffix(f"|{SUFIJO_RETENCION}")
        cambiadas = []
        for clave in dict.fromkeys((id_registro, f"{puerta}|{SUFIJO_RETENCION}")):
            nuevo = self._en(clave)
            if nuevo == self._vista.get(clave):
                continue
            cambiadas.append(clave)
            if nuevo is None:
                del self._vista[clave]
            else:
                self._vista[clave] = nuevo
        return cambiadas

    def _en(self, clave: str) -> EstadoPuerta | None:
        """What stands at one key: its readable record, or what an unreadable one leaves."""
        ilegible = self._ilegibles.get(clave)
        if ilegible is not None:
            return en_vigor(ilegible, self._legibles)
        return self._legibles.get(clave)
