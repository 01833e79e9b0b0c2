"""Which gate governs a family under the running key, and why; none means closed (pure).

The worker decides on a snapshot of ``fichas.puerta`` (``puerta.topico``) with no I/O. The rule
(v1.5), for family f under key c, with its record R_f, the pooled record R_*, and the holds:

1. f held: closed (``retenida``);
2. R_f open on its own certification: R_f governs (``propia``);
3. R_f open as covered by the pooled gate (motivo ``cubierta_por_conjunta``): it governs only
   while ``*`` is not held and R_* is open with ``actualizada_en`` equal to the certification
   R_f names (``conjunta``); otherwise closed (``conjunta_retenida``, ``conjunta_cerrada``);
4. anything else closed: R_f closed for any reason (``cerrada``), or no R_f (``sin_registro``).

The pooled record never governs a family directly: a family is published by the pooled gate
only through a covered record, which the reviewer app writes when the family's own evidence
qualifies it (``puerta.cobertura``). Invariants: only records of the running key count, and
only at their own id; holding or closing ``*`` closes every covered family with no second
write. Why: docs/puerta.md, "Which gate governs a family".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from esquemas.constantes import FAMILIA_TODAS, MOTIVO_PUERTA_CUBIERTA
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, PuertaAplicada, id_puerta
from puerta.retencion import retencion

RazonPuerta = Literal[
    "propia",
    "conjunta",
    "retenida",
    "conjunta_retenida",
    "conjunta_cerrada",
    "cerrada",
    "sin_registro",
]
RAZONES_ABIERTA: tuple[RazonPuerta, ...] = ("propia", "conjunta")


@dataclass(frozen=True)
class Resolucion:
    """Which gate governs a family now, and why.

    ``estado``: the open record that governs it (``propia``, ``conjunta``), or the record that
    explains why it is closed (the hold; R_f closed; the pooled record closed), or None. It is
    never an open record when the family is closed. ``propia`` and ``conjunta`` are the
    family's own and the pooled record of the running key, for display.
    """

    familia: str
    razon: RazonPuerta
    estado: EstadoPuerta | None
    propia: EstadoPuerta | None
    conjunta: EstadoPuerta | None

    @property
    def abierta(self) -> bool:
        """Whether a gate lets this family's fichas through now."""
        return self.razon in RAZONES_ABIERTA


def registro(
    familia: str, clave: ClavePuerta, estados: Mapping[str, EstadoPuerta]
) -> EstadoPuerta | None:
    """The state of exactly this gate (family and key), if there is one and it is what its id
    says (a hold record never is: it lives at the hold id)."""
    estado = estados.get(id_puerta(familia, clave))
    if estado is None or estado.familia != familia or estado.clave != clave or estado.retencion:
        return None
    return estado


def cobertura_vigente(propia: EstadoPuerta, conjunta: EstadoPuerta | None) -> bool:
    """Whether a covered record still rests on the pooled gate's current open certification."""
    return (
        conjunta is not None
        and conjunta.abierta
        and conjunta.umbral is not None
        and propia.conjunta_actualizada_en is not None
        and conjunta.actualizada_en == propia.conjunta_actualizada_en
    )


def resolver(familia: str, clave: ClavePuerta, estados: Mapping[str, EstadoPuerta]) -> Resolucion:
    """The gate that governs ``familia`` under the running ``clave``, with the reason code."""
    propia = registro(familia, clave, estados)
    conjunta = registro(FAMILIA_TODAS, clave, estados)

    def resultado(razon: RazonPuerta, estado: EstadoPuerta | None) -> Resolucion:
        return Resolucion(familia, razon, estado, propia, conjunta)

    retenida = retencion(familia, clave, estados)
    if retenida is not None:
        return resultado("retenida", retenida)
    if propia is None:
        return resultado("sin_registro", None)
    if not propia.abierta or propia.umbral is None:
        return resultado("cerrada", propia)
    if propia.motivo != MOTIVO_PUERTA_CUBIERTA:
        return resultado("propia", propia)
    retenida_conjunta = retencion(FAMILIA_TODAS, clave, estados)
    if retenida_conjunta is not None:
        return resultado("conjunta_retenida", retenida_conjunta)
    if not cobertura_vigente(propia, conjunta):
        cerrada = conjunta if conjunta is not None and not conjunta.abierta else None
        return resultado("conjunta_cerrada", cerrada)
    return resultado("conjunta", propia)


def puerta_para(
    familia: str, clave: ClavePuerta, estados: Mapping[str, EstadoPuerta]
) -> EstadoPuerta | None:
    """The record ``resolver`` names: open only when it governs ``familia`` (None: closed)."""
    return resolver(familia, clave, estados).estado


def umbral_aplicable(estado: EstadoPuerta | None) -> PuertaAplicada | None:
    """What a published ficha carries of an open gate; None when the gate is closed.

    ``certificada_en`` is when the state was written (``actualizada_en``): the moment this
    threshold became the one in force. A covered family's also names the pooled certification
    its coverage rests on (``conjunta_certificada_en``), so that a verdict on it can count for
    the family's own online bound and for the pooled gate's.
    """
    if estado is None or not estado.abierta or estado.umbral is None:
        return None
    return PuertaAplicada(
        umbral=estado.umbral,
        objetivo=estado.objetivo,
        clave=estado.clave,
        familia=estado.familia,
        certificada_en=estado.actualizada_en,
        n=estado.n,
        k=estado.k,
        conjunta_certificada_en=estado.conjunta_actualizada_en,
    )
