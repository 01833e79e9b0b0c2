"""The live key and a candidate key side by side, per family: what the Puertas page compares.

A candidate loop (issue 41) runs in shadow beside the live one under a key of its own; the app
knows a key is a candidate's from its items (``Almacen.claves_candidatas``) and the live key as
the key of the newest live review item (``Almacen.clave_viva``). Per family (and the pooled
``*``), each side shows its gate's state on ``fichas.puerta``, the decided prefix against the
arrivals, how many consecutive approvals would still open it at the λ where its walk stops
(its measured scores), and the e-value there. A candidate key that became the live one (after
a promotion) is no longer compared. Pure: the page and its tests build it from what the
certifier computed. Why: docs/revision.md, "La vista candidata".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from esquemas.constantes import FAMILIA_TODAS
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta
from puerta.retencion import retencion
from revision.certificador.secuencias import Secuencia


@dataclass(frozen=True)
class Lado:
    """One key's gate of one family, as the comparison shows it.

    ``estado``: ``abierta``, ``retenida``, ``certificada`` (its evidence certifies a λ, the
    gate not open yet) or ``cerrada``. ``umbral``: the open record's λ, or the certified one.
    ``faltan``: consecutive approvals that would open it at ``bloqueo`` (None when it opens
    already or has no evidence). ``e_valor``: the evidence at ``bloqueo``.
    """

    estado: str
    umbral: float | None = None
    decididas: int = 0
    llegadas: int = 0
    faltan: int | None = None
    bloqueo: float | None = None
    e_valor: float | None = None


@dataclass(frozen=True)
class FilaComparada:
    """One family (or ``*``): the live key's side and the candidate's."""

    familia: str
    viva: Lado | None  # None when there is no live key known
    candidata: Lado


@dataclass(frozen=True)
class Comparacion:
    """A candidate key against the live key, family by family, pooled first."""

    viva: ClavePuerta | None
    candidata: ClavePuerta
    filas: list[FilaComparada]


def lado(
    familia: str,
    clave: ClavePuerta,
    estados: Mapping[str, EstadoPuerta],
    secuencia: Secuencia | None,
) -> Lado:
    """One key's gate of one family, from its record and its sequence. Pure."""
    registro = estados.get(id_puerta(familia, clave))
    if retencion(familia, clave, estados) is not None:
        base = Lado("retenida")
    elif registro is not None and registro.abierta:
        base = Lado("abierta", umbral=registro.umbral)
    else:
        base = Lado("cerrada")
    if secuencia is None:
        return base
    res = secuencia.resultado
    en_bloqueo = next((u for u in res.umbrales if u.umbral == res.bloqueo), None)
    estado = base.estado
    if estado == "cerrada" and res.umbral is not None:
        estado = "certificada"
    return Lado(
        estado=estado,
        umbral=base.umbral if base.umbral is not None else res.umbral,
        decididas=secuencia.decididas,
        llegadas=secuencia.llegadas,
        faltan=res.faltan,
        bloqueo=res.bloqueo,
        e_valor=None if en_bloqueo is None else en_bloqueo.e_valor,
    )


def comparar(
    viva: ClavePuerta | None,
    candidatas: Mapping[str, ClavePuerta],
    estados: Mapping[str, EstadoPuerta],
    secuencias: Sequence[Secuencia],
) -> list[Comparacion]:
    """Every candidate key (but the live one) against the live key. Pure."""
    resultado = []
    for clave_id, candidata in sorted(candidatas.items()):
        if viva is not None and clave_id == viva.texto():
            continue  # promoted: it is the live key now
        claves = [c for c in (viva, candidata) if c is not None]
        por_id = {(s.familia, s.clave.texto()): s for s in secuencias if s.clave in claves}
        familias = {f for f, _ in por_id}
        familias |= {e.familia for e in estados.values() if e.clave in claves}
        orden = sorted(familias, key=lambda f: (f != FAMILIA_TODAS, f))
        filas = [
            FilaComparada(
                familia=f,
                viva=None
                if viva is None
                else lado(f, viva, estados, por_id.get((f, viva.texto()))),
                candidata=lado(f, candidata, estados, por_id.get((f, clave_id))),
            )
            for f in orden
        ]
        resultado.append(Comparacion(viva, candidata, filas))
    return resultado
