"""Open a gate from shadow-mode decisions with a guarantee that holds however often one looks.

For each threshold λ of a grid fixed in advance (``REJILLA``) a betting e-process
(``puerta.apuestas.ProcesoE``) tests "the precision at λ is below the objective" over the
decided approvals at λ in arrival order (code checks passed, score >= λ; x = 1 approved as is,
0 rejected or edited or obsolete); by Ville's inequality it ever reaches 1/δ with probability at
most δ under the null. Here: the walk, strictest first, which opens at the most lenient λ whose
capital, and every stricter one's, has crossed its level; beside it, per λ, the family's
exclusion e-process (``puerta.exclusion``) for the pooled gate's coverage; and the state of a
whole sequence (``EstadoSecuencia``), immutable and JSON-serialisable, which ``avanzar`` moves by
newly decided fichas only, so the app's cost per round does not grow with history. Invariants:
the bets, the grid and the walk define the guarantee and must not change silently;
``certificar_secuencia(obs)`` is exactly ``leer(avanzar(inicial(...), obs))``, so a
recomputation from scratch equals a stored state advanced in steps, bit for bit; a position
already consumed is never consumed again. The proofs, the choice of bet, truncation and grid,
and the measured false openings: docs/puerta.md, "Opening the gate" and "The sequence's state".
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from puerta.apuestas import ProcesoE, exponencial
from puerta.exclusion import APUESTAS_EXCLUSION, ProcesoExclusion, comprobar_apuestas

REJILLA: tuple[float, ...] = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5)
"""The thresholds, strictest first, fixed before any data (docs/puerta.md says why 0.95 at the
strict end, 0.5 at the lenient one, and a step of 0.05)."""

PESOS: tuple[float, ...] = (0.9, 0.0, 0.0, 0.0, 0.1, 0.0, 0.0, 0.0, 0.0, 0.0)
"""The walk's weights on ``REJILLA``, fixed before any data: most of δ enters at the strictest
λ, as the fixed-sequence walk did, and a share at the grid's middle, so a judge whose scores
rarely reach 0.95 does not block opening (docs/puerta.md, "The walk")."""

FORMATO: Final = "fichas-secuencia/2"  # the stored state's format (``EstadoSecuencia.formato``)


@dataclass(frozen=True)
class Observacion:
    """One ficha of the shadow-mode sequence, in arrival order, as people decided it.

    ``puntuacion``: the evaluator's score of the final attempt (None: no score, never
    approvable). ``codigo_ok``: its code checks passed. ``aprobada``: True approved as is;
    False rejected or edited; None closed as obsolete before anyone decided it, which counts
    as a failure at every λ it reaches (v1.6: leaving a ficha undecided until a newer version
    supersedes it can never help a gate open; docs/puerta.md, "Obsolete fichas").
    """

    puntuacion: float | None
    codigo_ok: bool
    aprobada: bool | None

    def __post_init__(self) -> None:
        """Refuse a score outside [0, 1] (or NaN): it would silently match no threshold."""
        p = self.puntuacion
        if p is not None and (isinstance(p, bool) or not 0.0 <= p <= 1.0):
            raise ValueError(f"puntuacion must be in [0, 1] or None, got {p!r}")

    def alcanza(self, umbral: float) -> bool:
        """Whether an open gate at ``umbral`` would publish this ficha (decided or not)."""
        return self.codigo_ok and self.puntuacion is not None and self.puntuacion >= umbral

    def cuenta(self, rejilla: Sequence[float]) -> bool:
        """Whether this ficha could be an approval at some λ of the grid, decided or not."""
        return self.codigo_ok and self.puntuacion is not None and self.puntuacion >= min(rejilla)


@dataclass(frozen=True)
class EstadoUmbral:
    """One λ of the grid after the sequence.

    ``n`` fichas at λ consumed (code ok, score >= λ), ``k`` of them not approved as is by
    people (rejected, edited, or obsolete before anyone decided: ``obsoletas`` of them);
    ``e_valor`` the e-process now, ``e_max`` its running maximum, ``nivel`` the e-value the walk
    asks of it now (``inf``: the walk does not test it yet), ``cruzado`` whether e_max reached
    it (once rejected it stays rejected). ``e_exclusion``: the family's
    exclusion mixture at λ now; ``excluido``: whether it ever reached ``1/delta`` (its
    precision at λ shown below the objective, at risk delta; ``puerta.exclusion``).
    """

    umbral: float
    n: int
    k: int
    e_valor: float
    e_max: float
    cruzado: bool
    e_exclusion: float = 1.0
    excluido: bool = False
    obsoletas: int = 0
    nivel: float = math.inf


@dataclass(frozen=True)
class ResultadoSecuencial:
    """What the walk certifies now, and how far the gate is from opening (further).

    ``umbral``: the most lenient λ certified by the walk (None: the gate stays closed), with its
    ``n`` and ``k`` (0, 0 when none). ``umbrales``: the whole grid, strictest first.
    ``bloqueo``: the strictest λ not yet crossed, where the walk stops (None if all crossed).
    ``faltan``: how many more consecutive people-approved fichas at ``bloqueo`` would make it
    cross under the same betting rule (None if all crossed, or more than ``LIMITE_FALTAN``).
    """

    umbral: float | None
    n: int
    k: int
    umbrales: tuple[EstadoUmbral, ...]
    bloqueo: float | None
    faltan: int | None
    objetivo: float
    delta: float

    @property
    def abierta(self) -> bool:
        """Whether some threshold is certified (the gate may open)."""
        return self.umbral is not None

    def en(self, umbral: float) -> EstadoUmbral | None:
        """The grid's entry at exactly ``umbral``; None when it is not a λ of the grid."""
        return next((e for e in self.umbrales if e.umbral == umbral), None)


def _comprobar_parametros(objetivo: float, delta: float, rejilla: Sequence[float]) -> None:
    """Refuse parameters for which the test means nothing, and a grid that is not a walk."""
    if not 0.0 < objetivo < 1.0:
        raise ValueError(f"objetivo must be in (0, 1), got {objetivo!r}")
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if not rejilla:
        raise ValueError("the grid of thresholds is empty")
    for umbral in rejilla:
        if not 0.0 <= umbral <= 1.0:
            raise ValueError(f"a threshold must be in [0, 1], got {umbral!r}")
    for anterior, siguiente in itertools.pairwise(rejilla):
        if not siguiente < anterior:
            raise ValueError(
                "the grid must be strictly decreasing (strictest first): "
                f"{anterior} then {siguiente}"
            )


def _estado_umbral(
    umbral: float,
    proceso: ProcesoE,
    exclusion: ProcesoExclusion,
    obsoletas: int,
    nivel_log: float,
) -> EstadoUmbral:
    """The public view of λ's opener (and of its exclusion), tested at the walk's level
    exp(``nivel_log``) for it."""
    return EstadoUmbral(
        umbral=umbral,
        n=proceso.n,
        k=proceso.n - proceso.aprobadas,
        e_valor=proceso.e_valor,
        e_max=proceso.e_max,
        cruzado=proceso.cruza(nivel_log),
        e_exclusion=exponencial(exclusion.log_valor),
        excluido=exclusion.cruzado,
        obsoletas=obsoletas,
        nivel=exponencial(nivel_log),
    )


class SecuenciaPuerta:
    """The e-processes of a whole grid, fed one observation at a time in arrival order.

    Per λ, the opener's ``ProcesoE`` and the exclusion's ``ProcesoExclusion``, and how many
    obsolete fichas each saw. The walk is the fallback procedure over the grid with the weights
    ``pesos`` (one per λ, summing to at most 1): λ_j is rejected at level
    δ (w_j + α_(j-1)) when the λ just stricter was rejected at α_(j-1), else δ w_j. The mutable
    engine behind ``avanzar`` and ``certificar_secuencia``; the simulation in ``bench`` feeds it
    directly to look after every decision without recomputing the prefix.
    """

    def __init__(
        self,
        objetivo: float,
        delta: float,
        rejilla: Sequence[float] = REJILLA,
        apuestas: Sequence[float] = APUESTAS_EXCLUSION,
        pesos: Sequence[float] | None = None,
    ) -> None:
        _comprobar_parametros(objetivo, delta, rejilla)
        comprobar_apuestas(apuestas)
        self.objetivo = objetivo
        self.delta = delta
        self.rejilla = tuple(rejilla)
        self.apuestas = tuple(apuestas)
        self.pesos = pesos_de(self.rejilla) if pesos is None else tuple(pesos)
        _comprobar_pesos(self.pesos, self.rejilla)
        self.procesos = [ProcesoE(objetivo, delta) for _ in self.rejilla]
        self.exclusiones = [ProcesoExclusion(objetivo, delta, apuestas) for _ in self.rejilla]
        self.obsoletas = [0 for _ in self.rejilla]

    def actualizar(self, observacion: Observacion) -> None:
        """Consume ``observacion`` at every threshold it reaches.

        Approved as is: a success for the opener and the exclusion. Rejected or edited: a
        failure for both. Obsolete before anyone decided it: a failure for the opener (it can
        never help a gate open) and a success for the exclusion (it can never wrongly exclude a
        family): each side takes the reading that keeps its own guarantee.
        """
        for i, umbral in enumerate(self.rejilla):
            if observacion.alcanza(umbral):
                self.procesos[i].actualizar(observacion.aprobada is True)
                self.exclusiones[i].actualizar(observacion.aprobada is not False)
                self.obsoletas[i] += observacion.aprobada is None

    def niveles(self) -> list[float]:
        """Per λ, the log of the e-value it must reach now (``inf``: none, its weight is 0 and
        the λ just stricter is not rejected); and which are rejected, through the fallback."""
        return self._caminar()[0]

    def _caminar(self) -> tuple[list[float], list[bool]]:
        """The fallback walk: each λ's level (log 1/α) and whether it is rejected."""
        niveles: list[float] = []
        rechazados: list[bool] = []
        alfa = 0.0
        for peso, proceso in zip(self.pesos, self.procesos, strict=True):
            alfa = self.delta * peso + (alfa if rechazados and rechazados[-1] else 0.0)
            nivel = math.log(1.0 / alfa) if alfa > 0.0 else math.inf
            niveles.append(nivel)
            rechazados.append(proceso.cruza(nivel))
        return niveles, rechazados

    def umbral(self) -> float | None:
        """The certified threshold alone, cheap enough to ask after every decision: the most
        lenient λ the walk rejects (None: none)."""
        _, rechazados = self._caminar()
        return next(
            (u for u, r in zip(reversed(self.rejilla), reversed(rechazados), strict=True) if r),
            None,
        )

    def resultado(self) -> ResultadoSecuencial:
        """The walk's certified λ (the most lenient rejected), and where it waits: the
        strictest λ with a level it has not reached."""
        niveles, rechazados = self._caminar()
        umbral = self.umbral()
        certificado = self.procesos[self.rejilla.index(umbral)] if umbral is not None else None
        espera = next(
            (
                i
                for i, (nivel, r) in enumerate(zip(niveles, rechazados, strict=True))
                if not r and nivel < math.inf
            ),
            None,
        )
        return ResultadoSecuencial(
            umbral=umbral,
            n=certificado.n if certificado else 0,
            k=certificado.n - certificado.aprobadas if certificado else 0,
            umbrales=tuple(
                _estado_umbral(u, p, e, o, nivel)
                for u, p, e, o, nivel in zip(
                    self.rejilla,
                    self.procesos,
                    self.exclusiones,
                    self.obsoletas,
                    niveles,
                    strict=True,
                )
            ),
            bloqueo=self.rejilla[espera] if espera is not None else None,
            faltan=self.procesos[espera].faltan(niveles[espera]) if espera is not None else None,
            objetivo=self.objetivo,
            delta=self.delta,
        )


def pesos_de(rejilla: Sequence[float]) -> tuple[float, ...]:
    """The walk's weights for a grid: ``PESOS`` on the default grid; all on the strictest λ
    of any other (the fixed-sequence walk, a grid the weights were not chosen for)."""
    if tuple(rejilla) == REJILLA:
        return PESOS
    return (1.0,) + (0.0,) * (len(rejilla) - 1)


def _comprobar_pesos(pesos: Sequence[float], rejilla: Sequence[float]) -> None:
    """Refuse weights that do not fit the grid, are negative, or sum past 1 (δ would not hold)."""
    if len(pesos) != len(rejilla):
        raise ValueError(f"{len(pesos)} weights for a grid of {len(rejilla)} thresholds")
    if any(p < 0.0 for p in pesos) or math.fsum(pesos) > 1.0 + 1e-12:
        raise ValueError(f"the walk's weights must be >= 0 and sum to at most 1, got {pesos}")


class EstadoProceso(BaseModel):
    """The stored state of one λ: the opener's e-process (its plug-in capital, the counts the
    mixture is a function of, the running maximum of their average), the obsolete fichas among
    the failures, and whether the exclusion's mixture ever crossed (``puerta.exclusion``: its
    value is a function of the counts, obsolete ones read as successes)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    umbral: float = Field(ge=0.0, le=1.0)
    n: int = Field(ge=0)
    aprobadas: int = Field(ge=0)
    obsoletas: int = Field(ge=0)
    log_plugin: float
    log_maximo: float = Field(ge=0.0)
    excluido: bool

    @model_validator(mode="after")
    def _coherente(self) -> Self:
        """Refuse counts no sequence could have produced."""
        if self.aprobadas + self.obsoletas > self.n:
            raise ValueError(f"inconsistent state at λ {self.umbral}")
        return self


class EstadoSecuencia(BaseModel):
    """One gate's sequence after its decided prefix: everything ``avanzar`` needs to go on.

    ``desde``: the arrival position the sequence starts at (its last restart); ``posicion``: the
    last arrival position consumed (``desde - 1`` before any); ``decididas``: consumed fichas
    that could count at some λ (``Observacion.cuenta``), obsolete ones included; ``pesos``: the
    walk's weights; ``umbrales``: per λ of the grid, strictest first. Immutable;
    ``a_json``/``de_json`` round-trip it exactly. A state of another format (v1.5's
    ``fichas-secuencia/1`` skipped obsolete fichas) is not read: the sequence is recomputed.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    formato: Literal["fichas-secuencia/2"] = FORMATO
    objetivo: float
    delta: float
    apuestas_exclusion: tuple[float, ...]
    pesos: tuple[float, ...]
    desde: int
    posicion: int
    decididas: int = Field(ge=0)
    umbrales: tuple[EstadoProceso, ...]

    @model_validator(mode="after")
    def _coherente(self) -> Self:
        """The same checks as a fresh sequence's, plus positions and bet counts that fit."""
        _comprobar_parametros(self.objetivo, self.delta, self.rejilla)
        comprobar_apuestas(self.apuestas_exclusion)
        _comprobar_pesos(self.pesos, self.rejilla)
        if self.posicion < self.desde - 1:
            raise ValueError("posicion is before the sequence's start")
        return self

    @property
    def rejilla(self) -> tuple[float, ...]:
        """The grid of thresholds, strictest first."""
        return tuple(u.umbral for u in self.umbrales)

    def a_json(self) -> str:
        """Canonical JSON text; floats as Python's shortest round-tripping repr."""
        return json.dumps(self.model_dump(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def de_json(cls, texto: str) -> EstadoSecuencia | None:
        """The state back from ``a_json``'s text; None for a state of an older format (the
        caller recomputes it); ``ValueError`` if it is not a state at all."""
        datos = json.loads(texto)
        if isinstance(datos, dict) and datos.get("formato") != FORMATO:
            return None
        return cls.model_validate(datos)


def inicial(
    objetivo: float,
    delta: float,
    rejilla: Sequence[float] = REJILLA,
    desde: int = 0,
    apuestas: Sequence[float] = APUESTAS_EXCLUSION,
    pesos: Sequence[float] | None = None,
) -> EstadoSecuencia:
    """The state of a sequence that starts at arrival position ``desde`` with nothing seen."""
    motor = SecuenciaPuerta(objetivo, delta, rejilla, apuestas, pesos)
    return _instantanea(motor, desde, desde - 1, 0)


def _motor(estado: EstadoSecuencia) -> SecuenciaPuerta:
    """The mutable engine in exactly the state ``estado`` describes."""
    secuencia = SecuenciaPuerta(
        estado.objetivo, estado.delta, estado.rejilla, estado.apuestas_exclusion, estado.pesos
    )
    for i, guardado in enumerate(estado.umbrales):
        proceso, exclusion = secuencia.procesos[i], secuencia.exclusiones[i]
        proceso.n = guardado.n
        proceso.aprobadas = guardado.aprobadas
        proceso.log_plugin = guardado.log_plugin
        proceso.log_maximo = guardado.log_maximo
        exclusion.aprobadas = guardado.aprobadas + guardado.obsoletas
        exclusion.rechazadas = guardado.n - guardado.aprobadas - guardado.obsoletas
        exclusion.cruzado = guardado.excluido
        secuencia.obsoletas[i] = guardado.obsoletas
    return secuencia


def _instantanea(
    secuencia: SecuenciaPuerta, desde: int, posicion: int, decididas: int
) -> EstadoSecuencia:
    """The immutable state of the engine ``secuencia``."""
    return EstadoSecuencia(
        objetivo=secuencia.objetivo,
        delta=secuencia.delta,
        apuestas_exclusion=secuencia.apuestas,
        pesos=secuencia.pesos,
        desde=desde,
        posicion=posicion,
        decididas=decididas,
        umbrales=tuple(
            EstadoProceso(
                umbral=umbral,
                n=proceso.n,
                aprobadas=proceso.aprobadas,
                obsoletas=obsoletas,
                log_plugin=proceso.log_plugin,
                log_maximo=proceso.log_maximo,
                excluido=exclusion.cruzado,
            )
            for umbral, proceso, exclusion, obsoletas in zip(
                secuencia.rejilla,
                secuencia.procesos,
                secuencia.exclusiones,
                secuencia.obsoletas,
                strict=True,
            )
        ),
    )


def avanzar(
    estado: EstadoSecuencia, observaciones: Iterable[tuple[int, Observacion]]
) -> EstadoSecuencia:
    """The state after the newly decided prefix ``observaciones``: (arrival position, ficha).

    Positions must increase strictly within one call (``ValueError`` otherwise: the caller's
    order is not an arrival order). A position at or before ``estado.posicion`` was consumed
    already and is skipped, so feeding the same prefix twice changes nothing; the caller passes
    only the prefix in which every ficha that counts was decided (docs/puerta.md).
    """
    secuencia: SecuenciaPuerta | None = None
    posicion, decididas = estado.posicion, estado.decididas
    anterior: int | None = None
    for llegada, observacion in observaciones:
        if anterior is not None and llegada <= anterior:
            raise ValueError(f"arrival positions must increase: {anterior} then {llegada}")
        anterior = llegada
        if llegada <= posicion:
            continue
        if secuencia is None:
            secuencia = _motor(estado)
        secuencia.actualizar(observacion)
        posicion = llegada
        decididas += observacion.cuenta(secuencia.rejilla)
    if secuencia is None:
        return estado
    return _instantanea(secuencia, estado.desde, posicion, decididas)


def leer(estado: EstadoSecuencia) -> ResultadoSecuencial:
    """What the walk certifies in ``estado``, and how far the gate is from opening."""
    return _motor(estado).resultado()


def certificar_secuencia(
    observaciones: Sequence[Observacion],
    objetivo: float,
    delta: float,
    rejilla: Sequence[float] = REJILLA,
) -> ResultadoSecuencial:
    """The walk's result after the decided prefix ``observaciones`` (in arrival order).

    Valid at every look: the app may call this after every decision and open the first time
    ``umbral`` is not None. Since a crossed threshold stays crossed, the certified λ only ever
    moves toward the lenient end as decisions arrive. Exactly the stored state's read-out:
    ``leer(avanzar(inicial(objetivo, delta, rejilla), enumerate(observaciones)))``.
    """
    return leer(avanzar(inicial(objetivo, delta, rejilla), enumerate(observaciones)))
