"""When the open pooled gate covers a family, and the records that say so (pure).

The pooled gate certifies the mix of families, which says nothing of one family. So (v1.6) a
family f is covered by the pooled gate open at λ_* (its record R_*) only when its own evidence
certifies λ_*: f's e-process at that single λ (``puerta.secuencial`` on the grid (λ_*,), no walk
from 0.95), started at the pooled certification so that λ_*, chosen on data that include f's,
is fixed before any of the fichas it tests, reaches 1/δ; and (1) the scope includes f and the
pooled gate, (2) f has no own open gate, f and ``*`` are not held, (3) f's exclusion e-process at
λ_* never crossed, (4) f's own record was not closed by what people said of its publications
(``MOTIVOS_VIGILANCIA``): such a family needs its own gate. The app writes f's covered record
(motivo ``cubierta_por_conjunta``), which governs f only while R_* stays that certification
(``puerta.resolucion``); a covered family whose exclusion crosses gets its record closed
(``excluida_de_conjunta``). Invariants: coverage needs f's own certification under the running
key, never the pooled evidence alone; λ_* is a λ of the grid (off the grid covers nobody). The
proof and the measured cost: docs/puerta.md, "Coverage".
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_CUBIERTA,
    MOTIVO_PUERTA_EXCLUIDA,
    MOTIVOS_VIGILANCIA,
    ORIGEN_COBERTURA_SOMBRA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from puerta.alcance import Alcance
from puerta.resolucion import cobertura_vigente, registro
from puerta.retencion import retencion
from puerta.secuencial import EstadoSecuencia, inicial, leer

RazonCobertura = Literal[
    "cubierta",
    "sin_conjunta",
    "fuera_de_alcance",
    "retenida",
    "propia",
    "conjunta_retenida",
    "conjunta_cerrada",
    "umbral_fuera_de_rejilla",
    "excluida",
    "cerrada_por_vigilancia",
    "sin_certificar",
]


@dataclass(frozen=True)
class Cobertura:
    """Whether the pooled gate covers ``familia`` now, why, and its own evidence at λ_*.

    ``umbral``: λ_* (None when no pooled gate is open); ``n``, ``k``: the family's fichas at
    λ_* since the pooled certification and how many of them were not approved as is;
    ``e_valor``: its e-process at λ_* since then; ``e_exclusion``: its exclusion mixture at λ_*
    over its whole sequence (1.0 when not read).
    """

    familia: str
    razon: RazonCobertura
    umbral: float | None = None
    n: int = 0
    k: int = 0
    e_exclusion: float = 1.0
    e_valor: float = 1.0

    @property
    def cubierta(self) -> bool:
        """Whether the family may be published at the pooled λ."""
        return self.razon == "cubierta"


def secuencia_de_cobertura(
    conjunta: EstadoPuerta, desde: int, objetivo: float, delta: float
) -> EstadoSecuencia:
    """A family's coverage sequence for the pooled certification ``conjunta``: the e-process at
    its λ alone, from arrival position ``desde`` (the first after the certification was seen)."""
    if conjunta.umbral is None:
        raise ValueError("a closed pooled gate has no λ to cover at")
    return inicial(objetivo, delta, (conjunta.umbral,), desde=desde, pesos=(1.0,))


def cobertura(
    familia: str,
    clave: ClavePuerta,
    estados: Mapping[str, EstadoPuerta],
    secuencia: EstadoSecuencia,
    alcance: Alcance,
    desde_conjunta: EstadoSecuencia | None = None,
) -> Cobertura:
    """The coverage of ``familia`` under ``clave`` by the pooled gate, from the gate records,
    the family's own sequence state (of this key, since its last restart) and its coverage
    sequence since the pooled certification (``secuencia_de_cobertura``; None: not begun)."""
    if familia == FAMILIA_TODAS:
        raise ValueError("the pooled gate covers families, not itself")
    if not alcance.conjunta:
        return Cobertura(familia, "sin_conjunta")
    if not alcance.incluye(familia):
        return Cobertura(familia, "fuera_de_alcance")
    if retencion(familia, clave, estados) is not None:
        return Cobertura(familia, "retenida")
    propia = registro(familia, clave, estados)
    if propia is not None and propia.abierta and propia.motivo != MOTIVO_PUERTA_CUBIERTA:
        return Cobertura(familia, "propia")
    if retencion(FAMILIA_TODAS, clave, estados) is not None:
        return Cobertura(familia, "conjunta_retenida")
    conjunta = registro(FAMILIA_TODAS, clave, estados)
    if conjunta is None or not conjunta.abierta or conjunta.umbral is None:
        return Cobertura(familia, "conjunta_cerrada")
    umbral = conjunta.umbral
    if propia is not None and not propia.abierta and propia.motivo in MOTIVOS_VIGILANCIA:
        return Cobertura(familia, "cerrada_por_vigilancia", umbral)
    evidencia = leer(secuencia).en(umbral)
    if evidencia is None:
        return Cobertura(familia, "umbral_fuera_de_rejilla", umbral)
    if evidencia.excluido:
        return Cobertura(
            familia, "excluida", umbral, evidencia.n, evidencia.k, evidencia.e_exclusion
        )
    propio = leer(desde_conjunta).en(umbral) if desde_conjunta is not None else None
    if propio is None:
        return Cobertura(familia, "sin_certificar", umbral, e_exclusion=evidencia.e_exclusion)
    razon: RazonCobertura = "cubierta" if propio.cruzado else "sin_certificar"
    return Cobertura(
        familia, razon, umbral, propio.n, propio.k, evidencia.e_exclusion, propio.e_max
    )


def estado_cubierto(
    cob: Cobertura, clave: ClavePuerta, conjunta: EstadoPuerta, ahora: datetime
) -> EstadoPuerta:
    """The covered record of a family: open at the pooled λ, resting on ``conjunta``'s
    certification; n and k are the family's own evidence at that λ."""
    if not cob.cubierta or conjunta.umbral is None or cob.umbral != conjunta.umbral:
        raise ValueError(f"{cob.familia} is not covered by this pooled certification")
    return EstadoPuerta(
        familia=cob.familia,
        clave=clave,
        abierta=True,
        umbral=conjunta.umbral,
        objetivo=conjunta.objetivo,
        delta=conjunta.delta,
        n=cob.n,
        k=cob.k,
        origen_datos=(
            f"{ORIGEN_COBERTURA_SOMBRA}; conjunta certificada el "
            f"{conjunta.actualizada_en.isoformat()} con λ = {conjunta.umbral} "
            f"(n={conjunta.n} k={conjunta.k}); propia en λ desde entonces: n={cob.n} "
            f"k={cob.k}, e-valor {cob.e_valor:.3g} >= 1/δ; e-valor de exclusión "
            f"{cob.e_exclusion:.3g}"
        ),
        motivo=MOTIVO_PUERTA_CUBIERTA,
        actualizada_en=ahora,
        abierta_por=ABIERTA_POR_AUTOMATICO,
        conjunta_actualizada_en=conjunta.actualizada_en,
    )


def estado_excluido(cob: Cobertura, cubierto: EstadoPuerta, ahora: datetime) -> EstadoPuerta:
    """The closed record of a covered family whose own evidence excluded it."""
    if cob.razon != "excluida":
        raise ValueError(f"{cob.familia} is not excluded")
    return EstadoPuerta(
        familia=cubierto.familia,
        clave=cubierto.clave,
        abierta=False,
        umbral=None,
        objetivo=cubierto.objetivo,
        delta=cubierto.delta,
        n=cob.n,
        k=cob.k,
        origen_datos=(
            f"excluida de la conjunta por su propia evidencia en λ = {cob.umbral}: n={cob.n} "
            f"k={cob.k}, e-valor de exclusión {cob.e_exclusion:.3g} >= 1/δ "
            f"(cubierta desde {cubierto.actualizada_en.isoformat()})"
        ),
        motivo=MOTIVO_PUERTA_EXCLUIDA,
        actualizada_en=ahora,
    )


def escritura(
    cob: Cobertura, clave: ClavePuerta, estados: Mapping[str, EstadoPuerta], ahora: datetime
) -> EstadoPuerta | None:
    """The record the app must write for ``cob`` now, or None when the topic already says it.

    Covered and its record does not rest on the pooled gate's current certification: the
    covered record. Excluded while its covered record is in force: the closed record. Any other
    case needs no write: a covered record that no longer rests on R_* is closed by the
    resolution itself.
    """
    propia = registro(cob.familia, clave, estados)
    conjunta = registro(FAMILIA_TODAS, clave, estados)
    en_vigor = (
        propia is not None
        and propia.motivo == MOTIVO_PUERTA_CUBIERTA
        and cobertura_vigente(propia, conjunta)
    )
    if cob.cubierta and conjunta is not None and not en_vigor:
        return estado_cubierto(cob, clave, conjunta, ahora)
    if cob.razon == "excluida" and en_vigor and propia is not None:
        return estado_excluido(cob, propia, ahora)
    return None
