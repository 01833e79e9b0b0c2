"""Certify a score threshold against people: Learn then Test with fixed-sequence testing (pure).

The question a gate answers: from which evaluator score on may a ficha be published without a
person, so that the precision of those automatic approvals is at least ``objetivo``, with risk
at most ``delta`` that it is not. On a labelled batch each distinct score λ is a null
"precision(λ) < objetivo" with the exact binomial p-value P(Binomial(n, 1 - objetivo) <= k);
the thresholds are tested strictest first, each at the full ``delta``, from the first one that
approves at least ``minimo_aprobaciones`` candidates, and the walk certifies the last that
passed (Angelopoulos et al. 2021, "Learn then Test"). Per family and pooled
(``certificar_por_familia``); a family without its own gate is covered by the pooled
certification only with enough approvals of its own at the pooled λ and no evidence that its
precision there is below the objective (``cubrir_por_lote``). Invariants: the order of the walk
and its start depend on the scores only, never on the labels; a candidate without a score is
never approved. This is a fixed-n test: it must not be re-run after every new label (optional
stopping; ``puerta.secuencial`` is the tool for a live sequence). Why, with the proofs:
docs/puerta.md, "Certifying a threshold" and "Coverage".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from esquemas.constantes import (
    ABIERTA_POR_CALIBRAR,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_CERTIFICADA,
    MOTIVO_PUERTA_CUBIERTA,
    MOTIVO_PUERTA_NO_CERTIFICADA,
    MOTIVO_PUERTA_SIN_DATOS,
    OBJETIVO_PUERTA,
    ORIGEN_COBERTURA_LOTE,
    MotivoPuerta,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta


@dataclass(frozen=True)
class Candidata:
    """One people-labelled candidate ficha with the evaluator's score of it."""

    puntuacion: float | None
    aprobada_por_personas: bool
    familia: str = FAMILIA_TODAS
    event_id: str | None = None


@dataclass(frozen=True)
class PuntoCurva:
    """One threshold: the approvals it gives, their errors, the p-value, whether it was tested."""

    umbral: float
    n: int
    k: int
    p: float
    probado: bool = False


@dataclass(frozen=True)
class Certificacion:
    """The outcome of a walk: the certified threshold (None: the gate stays closed) and why.

    ``n``, ``k`` and ``p`` are those of the certified threshold. When none passed they describe
    the data as a whole, i.e. the most lenient threshold (every scored candidate), so that the
    audit shows how far the data were from certifying. ``curva`` holds every distinct score as a
    threshold, strictest first; ``recorrido`` the ones the walk tested, in order, the failing
    one included (nothing after it was tested).
    """

    umbral: float | None
    n: int
    k: int
    p: float
    motivo: MotivoPuerta
    objetivo: float
    delta: float
    candidatas: int = 0
    aprobadas_por_personas: int = 0
    curva: tuple[PuntoCurva, ...] = field(default_factory=tuple)

    @property
    def recorrido(self) -> tuple[PuntoCurva, ...]:
        """The thresholds the walk tested, in walk order."""
        return tuple(p for p in self.curva if p.probado)

    @property
    def certificada(self) -> bool:
        """Whether a threshold passed (the gate may open)."""
        return self.umbral is not None


def _comprobar_parametros(objetivo: float, delta: float) -> None:
    """Refuse parameters for which the test means nothing (precision 0 or 1, risk 0 or 1)."""
    if not 0.0 < objetivo < 1.0:
        raise ValueError(f"objetivo must be in (0, 1), got {objetivo}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def cola_binomial(k: int, n: int, q: float) -> float:
    """P(Binomial(n, q) <= k), exact up to float rounding, summed in log space.

    Log space because ``math.comb(n, i)`` overflows a float beyond n ≈ 1000 and ``q**i``
    underflows; each term is exp(log C(n, i) + i log q + (n - i) log(1 - q)).
    """
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    log_q, log_1q = math.log(q), math.log1p(-q)
    terminos = [
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * log_q
        + (n - i) * log_1q
        for i in range(k + 1)
    ]
    mayor = max(terminos)
    return min(1.0, math.exp(mayor) * math.fsum(math.exp(t - mayor) for t in terminos))


def cola_binomial_superior(k: int, n: int, q: float) -> float:
    """P(Binomial(n, q) >= k), exact up to float rounding (the complement's terms, in log space).

    Summed over i = k..n directly rather than as 1 - P(<= k - 1), which loses every digit when
    the tail is tiny.
    """
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    log_q, log_1q = math.log(q), math.log1p(-q)
    terminos = [
        math.lgamma(n + 1)
        - math.lgamma(i + 1)
        - math.lgamma(n - i + 1)
        + i * log_q
        + (n - i) * log_1q
        for i in range(k, n + 1)
    ]
    mayor = max(terminos)
    return min(1.0, math.exp(mayor) * math.fsum(math.exp(t - mayor) for t in terminos))


def minimo_aprobaciones(objetivo: float = OBJETIVO_PUERTA, delta: float = DELTA_PUERTA) -> int:
    """The fewest people-approved candidates with which a threshold can certify at all.

    The smallest n with objetivo^n <= delta (zero errors among n approvals): 29 for 0.9/0.05.
    Computed, then checked against the exact tail so that float rounding of the logarithms
    cannot be off by one.
    """
    _comprobar_parametros(objetivo, delta)
    n = max(1, math.ceil(math.log(delta) / math.log(objetivo)))
    while n > 1 and cola_binomial(0, n - 1, 1 - objetivo) <= delta:
        n -= 1
    while cola_binomial(0, n, 1 - objetivo) > delta:
        n += 1
    return n


def curva(candidatas: Sequence[Candidata], objetivo: float = OBJETIVO_PUERTA) -> list[PuntoCurva]:
    """Every distinct score as a threshold, strictest first, with n, k and the p-value."""
    puntuadas = sorted(
        ((c.puntuacion, c.aprobada_por_personas) for c in candidatas if c.puntuacion is not None),
        key=lambda par: par[0],
        reverse=True,
    )
    puntos: list[PuntoCurva] = []
    n = k = 0
    for i, (puntuacion, aprobada) in enumerate(puntuadas):
        n += 1
        k += 0 if aprobada else 1
        siguiente = puntuadas[i + 1][0] if i + 1 < len(puntuadas) else None
        if siguiente == puntuacion:
            continue  # ties: a threshold approves every candidate with that score at once
        puntos.append(PuntoCurva(puntuacion, n, k, cola_binomial(k, n, 1 - objetivo)))
    return puntos


def certificar(
    candidatas: Sequence[Candidata],
    objetivo: float = OBJETIVO_PUERTA,
    delta: float = DELTA_PUERTA,
) -> Certificacion:
    """Walk the thresholds strictest first while p <= delta; certify the last that passed.

    The walk starts at the first threshold approving at least ``minimo_aprobaciones``
    candidates (the module's docstring says why that keeps the guarantee).
    """
    _comprobar_parametros(objetivo, delta)
    minimo = minimo_aprobaciones(objetivo, delta)
    todos = curva(candidatas, objetivo)
    marcados: list[PuntoCurva] = []
    ultimo: PuntoCurva | None = None
    andando = True
    for punto in todos:
        probado = andando and punto.n >= minimo
        marcados.append(replace(punto, probado=probado))
        if not probado:
            continue
        if punto.p > delta:
            andando = False
            continue
        ultimo = punto
    limpias = sum(1 for c in candidatas if c.puntuacion is not None and c.aprobada_por_personas)
    global_ = todos[-1] if todos else PuntoCurva(1.0, 0, 0, 1.0)
    elegido = ultimo or global_
    if ultimo is not None:
        motivo: MotivoPuerta = MOTIVO_PUERTA_CERTIFICADA
    elif limpias < minimo:
        motivo = MOTIVO_PUERTA_SIN_DATOS
    else:
        motivo = MOTIVO_PUERTA_NO_CERTIFICADA
    return Certificacion(
        umbral=ultimo.umbral if ultimo is not None else None,
        n=elegido.n,
        k=elegido.k,
        p=elegido.p,
        motivo=motivo,
        objetivo=objetivo,
        delta=delta,
        candidatas=len(candidatas),
        aprobadas_por_personas=limpias,
        curva=tuple(marcados),
    )


def certificar_por_familia(
    candidatas: Sequence[Candidata],
    objetivo: float = OBJETIVO_PUERTA,
    delta: float = DELTA_PUERTA,
) -> dict[str, Certificacion]:
    """The pooled certification under ``*``, plus each family whose own data certify alone.

    A family that does not certify alone is published by the pooled gate only where
    ``cubrir_por_lote`` covers it (v1.5: the pooled record never governs a family directly).
    Each gate is certified at ``delta`` on its own: the guarantee is per gate, not jointly.
    """
    resultado = {FAMILIA_TODAS: certificar(candidatas, objetivo, delta)}
    familias = sorted({c.familia for c in candidatas if c.familia != FAMILIA_TODAS})
    for familia in familias:
        propia = certificar([c for c in candidatas if c.familia == familia], objetivo, delta)
        if propia.certificada:
            resultado[familia] = propia
    return resultado


def estado_puerta(
    familia: str,
    clave: ClavePuerta,
    certificacion: Certificacion,
    origen_datos: str,
    ahora: datetime,
    abierta_por: str | None = None,
) -> EstadoPuerta:
    """The state to publish for one certification: open at its threshold, or closed and why.
    ``abierta_por``: who signs an opening (v1.3); a closed state carries no signer."""
    return EstadoPuerta(
        familia=familia,
        clave=clave,
        abierta_por=abierta_por if certificacion.certificada else None,
        abierta=certificacion.certificada,
        umbral=certificacion.umbral,
        objetivo=certificacion.objetivo,
        delta=certificacion.delta,
        n=certificacion.n,
        k=certificacion.k,
        origen_datos=origen_datos,
        motivo=certificacion.motivo,
        actualizada_en=ahora,
    )


RazonCoberturaLote = Literal[
    "cubierta", "propia", "conjunta_cerrada", "excluida", "umbral_propio", "sin_certificar"
]


@dataclass(frozen=True)
class CoberturaLote:
    """Whether the batch's pooled certification covers ``familia``, and its own data at λ_*.

    ``n``, ``k``: the family's candidates the pooled gate would approve (score >= λ_*) and how
    many of them people rejected; ``p``: the p-value of its own certification at λ_*,
    P(Binomial(n, 1 - objetivo) <= k) (1.0 when not computed); ``p_exclusion``: of "its
    precision at λ_* is at least ``objetivo``", P(Binomial(n, 1 - objetivo) >= k).
    """

    familia: str
    razon: RazonCoberturaLote
    umbral: float | None = None
    n: int = 0
    k: int = 0
    p: float = 1.0
    p_exclusion: float = 1.0

    @property
    def cubierta(self) -> bool:
        """Whether the family may be published at the pooled λ."""
        return self.razon == "cubierta"


def cubrir_por_lote(
    candidatas: Sequence[Candidata],
    certificaciones: Mapping[str, Certificacion],
    objetivo: float = OBJETIVO_PUERTA,
    delta: float = DELTA_PUERTA,
) -> dict[str, CoberturaLote]:
    """For every family of the batch, whether the pooled certification covers it (v1.6).

    ``certificaciones`` is ``certificar_por_familia``'s answer on the same batch. A family with
    its own certification is ``propia``; with no certified pooled gate every family is
    ``conjunta_cerrada``. Otherwise the family is covered only when its own approvals at λ_*
    certify it: one exact binomial test at ``delta``, P(Binomial(n, 1 - objetivo) <= k) <= δ.
    For that test to be at a λ its own labels did not choose, λ_* must be what the pooled walk
    certifies on the batch without the family (leave one family out); if not, ``umbral_propio``.
    A family whose own data reject "precision >= objetivo" at λ_* is ``excluida``.
    """
    _comprobar_parametros(objetivo, delta)
    conjunta = certificaciones.get(FAMILIA_TODAS)
    umbral = conjunta.umbral if conjunta is not None else None
    resultado: dict[str, CoberturaLote] = {}
    for familia in sorted({c.familia for c in candidatas if c.familia != FAMILIA_TODAS}):
        if familia in certificaciones:
            resultado[familia] = CoberturaLote(familia, "propia")
            continue
        if umbral is None:
            resultado[familia] = CoberturaLote(familia, "conjunta_cerrada")
            continue
        aprobadas = [
            c.aprobada_por_personas
            for c in candidatas
            if c.familia == familia and c.puntuacion is not None and c.puntuacion >= umbral
        ]
        n, k = len(aprobadas), aprobadas.count(False)
        p = cola_binomial(k, n, 1 - objetivo) if n else 1.0
        p_exclusion = cola_binomial_superior(k, n, 1 - objetivo)
        sin_ella = certificar([c for c in candidatas if c.familia != familia], objetivo, delta)
        razon: RazonCoberturaLote = "cubierta"
        if p_exclusion <= delta:
            razon = "excluida"
        elif sin_ella.umbral != umbral:
            razon = "umbral_propio"
        elif p > delta:
            razon = "sin_certificar"
        resultado[familia] = CoberturaLote(familia, razon, umbral, n, k, p, p_exclusion)
    return resultado


def estado_cubierto_lote(
    cob: CoberturaLote, conjunta: EstadoPuerta, origen_datos: str
) -> EstadoPuerta:
    """The covered record ``fichas calibrar`` writes beside the pooled ``conjunta`` it opens on
    the same batch: open at the pooled λ, resting on that certification (its
    ``actualizada_en``), with the family's own approvals at λ and people's rejections among
    them; signed ``calibrar``. ``ValueError`` unless ``cob`` is covered by ``conjunta``."""
    if (
        not cob.cubierta
        or not conjunta.abierta
        or conjunta.familia != FAMILIA_TODAS
        or cob.umbral != conjunta.umbral
    ):
        raise ValueError(f"{cob.familia} is not covered by this pooled certification")
    return EstadoPuerta(
        familia=cob.familia,
        clave=conjunta.clave,
        abierta=True,
        umbral=conjunta.umbral,
        objetivo=conjunta.objetivo,
        delta=conjunta.delta,
        n=cob.n,
        k=cob.k,
        origen_datos=(
            f"{ORIGEN_COBERTURA_LOTE}; {origen_datos}; conjunta λ = {conjunta.umbral} "
            f"(n={conjunta.n} k={conjunta.k}); propia en λ: n={cob.n} k={cob.k}, p={cob.p:.4g}"
        ),
        motivo=MOTIVO_PUERTA_CUBIERTA,
        actualizada_en=conjunta.actualizada_en,
        abierta_por=ABIERTA_POR_CALIBRAR,
        conjunta_actualizada_en=conjunta.actualizada_en,
    )
