"""Open a gate from shadow-mode decisions with a guarantee that holds however often one looks.

For each threshold λ of a grid fixed in advance (``REJILLA``) a betting e-process tests "the
precision at λ is below the objective" over the decided approvals at λ in arrival order (code
checks passed, score >= λ; x = 1 approved as is, 0 rejected or edited; obsolete skipped): the
capital prod (1 + b_i (x_i - objetivo)) with a predictable truncated-Kelly bet b_i. By Ville's
inequality it ever reaches 1/δ with probability at most δ under the null; the walk, strictest
first, opens at the most lenient λ whose capital, and every stricter one's, has crossed. Beside
it, per λ, the family's exclusion e-process (``puerta.exclusion``) for the pooled gate's
coverage. The state of a whole sequence (``EstadoSecuencia``) is immutable and JSON-serialisable
and ``avanzar`` moves it by newly decided fichas only, so the app's cost per round does not grow
with history. Invariants: the bets, the grid and the walk define the guarantee and must not
change silently; ``certificar_secuencia(obs)`` is exactly ``leer(avanzar(inicial(...), obs))``,
so a recomputation from scratch equals a stored state advanced in steps, bit for bit; a position
already consumed is never consumed again. The proofs, the choice of bet, truncation and grid,
and the measured false openings: docs/puerta.md, "Opening the gate" and "The sequence's state".
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from puerta.exclusion import APUESTAS_EXCLUSION, ProcesoExclusion, comprobar_apuestas

REJILLA: tuple[float, ...] = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5)
"""The thresholds, strictest first, fixed before any data (docs/puerta.md says why 0.95 at the
strict end, 0.5 at the lenient one, and a step of 0.05)."""

TRUNCAMIENTO = 0.75  # a bet never stakes more than 0.75 / objetivo: a rejection keeps >= 1/4
LIMITE_FALTAN = 100_000  # beyond this many approvals ``faltan`` says "cannot say" (None)
FORMATO: Final = "fichas-secuencia/1"  # the stored state's format (``EstadoSecuencia.formato``)


@dataclass(frozen=True)
class Observacion:
    """One ficha of the shadow-mode sequence, in arrival order, as people decided it.

    ``puntuacion``: the evaluator's score of the final attempt (None: no score, never
    approvable). ``codigo_ok``: its code checks passed. ``aprobada``: True approved as is;
    False rejected or edited; None closed as obsolete (skipped: nobody judged it).
    """

    puntuacion: float | None
    codigo_ok: bool
    aprobada: bool | None

    def __post_init__(self) -> None:
        """Refuse a score outside [0, 1] (or NaN): it would silently match no threshold."""
        p = self.puntuacion
        if p is not None and (isinstance(p, bool) or not 0.0 <= p <= 1.0):
            raise ValueError(f"puntuacion must be in [0, 1] or None, got {p!r}")

    def aprobacion_en(self, umbral: float) -> bool:
        """Whether an open gate at ``umbral`` would publish this ficha (and it was decided)."""
        return (
            self.aprobada is not None
            and self.codigo_ok
            and self.puntuacion is not None
            and self.puntuacion >= umbral
        )

    def cuenta(self, rejilla: Sequence[float]) -> bool:
        """Whether this ficha could be an approval at some λ of the grid, decided or not."""
        return self.codigo_ok and self.puntuacion is not None and self.puntuacion >= min(rejilla)


@dataclass(frozen=True)
class EstadoUmbral:
    """One λ of the grid after the sequence.

    ``n`` approvals at λ seen (code ok, score >= λ, decided), ``k`` of them rejected by people;
    ``e_valor`` the e-process now, ``e_max`` its running maximum, ``cruzado`` whether e_max
    reached ``1/delta`` (once crossed it stays rejected). ``e_exclusion``: the family's
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


class ProcesoE:
    """The betting e-process of one threshold, one decided approval at a time.

    Keeps the log of the capital (a product of hundreds of factors under- or overflows a
    float); ``e_valor`` and ``e_max`` give it back as a number (``inf`` past float range).
    """

    def __init__(self, objetivo: float, delta: float) -> None:
        self.objetivo = objetivo
        self.limite_log = math.log(1.0 / delta)
        self.tope = TRUNCAMIENTO / objetivo
        self.n = 0
        self.aprobadas = 0
        self.log_capital = 0.0
        self.log_maximo = 0.0

    def apuesta(self) -> float:
        """b for the next outcome: the Kelly bet at the shrunk running mean, clipped."""
        estimada = (self.aprobadas + 1) / (self.n + 1)
        q = self.objetivo
        return min(max((estimada - q) / (q * (1.0 - q)), 0.0), self.tope)

    def actualizar(self, aprobada: bool) -> None:
        """Bet on one decided approval (True: people approved it as is)."""
        x = 1.0 if aprobada else 0.0
        self.log_capital += math.log1p(self.apuesta() * (x - self.objetivo))
        self.log_maximo = max(self.log_maximo, self.log_capital)
        self.n += 1
        self.aprobadas += aprobada

    @property
    def cruzado(self) -> bool:
        """Whether the capital ever reached 1/delta (H_λ rejected for good)."""
        return self.log_maximo >= self.limite_log

    def faltan(self) -> int | None:
        """How many more consecutive approvals would bring the capital to 1/delta from now.

        Plays the same betting rule forward on a copy; 0 when already crossed. None when
        more than ``LIMITE_FALTAN`` would be needed (a capital sunk by a long mixed history).
        """
        if self.cruzado:
            return 0
        copia = copy.copy(self)
        for i in range(1, LIMITE_FALTAN + 1):
            copia.actualizar(True)
            if copia.log_capital >= copia.limite_log:
                return i
        return None

    def estado(self, umbral: float, exclusion: ProcesoExclusion | None = None) -> EstadoUmbral:
        """The public view of this process (and of its threshold's exclusion) at ``umbral``."""
        return EstadoUmbral(
            umbral=umbral,
            n=self.n,
            k=self.n - self.aprobadas,
            e_valor=_exp(self.log_capital),
            e_max=_exp(self.log_maximo),
            cruzado=self.cruzado,
            e_exclusion=_exp(exclusion.log_valor) if exclusion is not None else 1.0,
            excluido=exclusion.cruzado if exclusion is not None else False,
        )


def _exp(logaritmo: float) -> float:
    """exp, with ``inf`` instead of OverflowError for a capital beyond float range."""
    return math.exp(logaritmo) if logaritmo < 709.0 else math.inf


class SecuenciaPuerta:
    """The e-processes of a whole grid, fed one observation at a time in arrival order.

    Per λ, the opener's ``ProcesoE`` and the exclusion's ``ProcesoExclusion``. The mutable
    engine behind ``avanzar`` and ``certificar_secuencia``; the simulation in ``bench`` feeds it
    directly to look after every decision without recomputing the prefix.
    """

    def __init__(
        self,
        objetivo: float,
        delta: float,
        rejilla: Sequence[float] = REJILLA,
        apuestas: Sequence[float] = APUESTAS_EXCLUSION,
    ) -> None:
        _comprobar_parametros(objetivo, delta, rejilla)
        comprobar_apuestas(apuestas)
        self.objetivo = objetivo
        self.delta = delta
        self.rejilla = tuple(rejilla)
        self.apuestas = tuple(apuestas)
        self.procesos = [ProcesoE(objetivo, delta) for _ in self.rejilla]
        self.exclusiones = [ProcesoExclusion(objetivo, delta, apuestas) for _ in self.rejilla]

    def actualizar(self, observacion: Observacion) -> None:
        """Bet on ``observacion`` at every threshold where it is a decided approval."""
        for i, umbral in enumerate(self.rejilla):
            if observacion.aprobacion_en(umbral):
                aprobada = bool(observacion.aprobada)
                self.procesos[i].actualizar(aprobada)
                self.exclusiones[i].actualizar(aprobada)

    def cruzados(self) -> int:
        """How many thresholds the walk passes: the grid's crossed prefix, strictest first."""
        for i, proceso in enumerate(self.procesos):
            if not proceso.cruzado:
                return i
        return len(self.procesos)

    def umbral(self) -> float | None:
        """The certified threshold alone, cheap enough to ask after every decision."""
        pasados = self.cruzados()
        return self.rejilla[pasados - 1] if pasados else None

    def resultado(self) -> ResultadoSecuencial:
        """Walk the grid strictest first while crossed; certify the last crossed threshold."""
        pasados = self.cruzados()
        certificado = self.procesos[pasados - 1] if pasados else None
        bloqueo = self.procesos[pasados] if pasados < len(self.procesos) else None
        return ResultadoSecuencial(
            umbral=self.umbral(),
            n=certificado.n if certificado else 0,
            k=certificado.n - certificado.aprobadas if certificado else 0,
            umbrales=tuple(
                p.estado(u, e)
                for u, p, e in zip(self.rejilla, self.procesos, self.exclusiones, strict=True)
            ),
            bloqueo=self.rejilla[pasados] if bloqueo else None,
            faltan=bloqueo.faltan() if bloqueo else None,
            objetivo=self.objetivo,
            delta=self.delta,
        )


class EstadoProceso(BaseModel):
    """The stored state of one λ: the opener's e-process and whether the exclusion's mixture
    ever crossed (its value is a function of ``n`` and ``aprobadas``, ``puerta.exclusion``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    umbral: float = Field(ge=0.0, le=1.0)
    n: int = Field(ge=0)
    aprobadas: int = Field(ge=0)
    log_capital: float
    log_maximo: float = Field(ge=0.0)
    excluido: bool

    @model_validator(mode="after")
    def _coherente(self) -> Self:
        """Refuse counts or a running maximum no sequence could have produced."""
        if self.aprobadas > self.n or self.log_maximo < self.log_capital:
            raise ValueError(f"inconsistent state at λ {self.umbral}")
        return self


class EstadoSecuencia(BaseModel):
    """One gate's sequence after its decided prefix: everything ``avanzar`` needs to go on.

    ``desde``: the arrival position the sequence starts at (its last restart); ``posicion``: the
    last arrival position consumed (``desde - 1`` before any); ``decididas``: consumed fichas
    that could count at some λ (``Observacion.cuenta``), obsolete ones included; ``umbrales``:
    per λ of the grid, strictest first. Immutable; ``a_json``/``de_json`` round-trip it exactly.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    formato: Literal["fichas-secuencia/1"] = FORMATO
    objetivo: float
    delta: float
    apuestas_exclusion: tuple[float, ...]
    desde: int
    posicion: int
    decididas: int = Field(ge=0)
    umbrales: tuple[EstadoProceso, ...]

    @model_validator(mode="after")
    def _coherente(self) -> Self:
        """The same checks as a fresh sequence's, plus positions and bet counts that fit."""
        _comprobar_parametros(self.objetivo, self.delta, self.rejilla)
        comprobar_apuestas(self.apuestas_exclusion)
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
    def de_json(cls, texto: str) -> EstadoSecuencia:
        """The state back from ``a_json``'s text (``ValueError`` if it is not one)."""
        return cls.model_validate(json.loads(texto))


def inicial(
    objetivo: float,
    delta: float,
    rejilla: Sequence[float] = REJILLA,
    desde: int = 0,
    apuestas: Sequence[float] = APUESTAS_EXCLUSION,
) -> EstadoSecuencia:
    """The state of a sequence that starts at arrival position ``desde`` with nothing seen."""
    return _instantanea(SecuenciaPuerta(objetivo, delta, rejilla, apuestas), desde, desde - 1, 0)


def _motor(estado: EstadoSecuencia) -> SecuenciaPuerta:
    """The mutable engine in exactly the state ``estado`` describes."""
    secuencia = SecuenciaPuerta(
        estado.objetivo, estado.delta, estado.rejilla, estado.apuestas_exclusion
    )
    for guardado, proceso, exclusion in zip(
        estado.umbrales, secuencia.procesos, secuencia.exclusiones, strict=True
    ):
        proceso.n = guardado.n
        proceso.aprobadas = guardado.aprobadas
        proceso.log_capital = guardado.log_capital
        proceso.log_maximo = guardado.log_maximo
        exclusion.aprobadas = guardado.aprobadas
        exclusion.rechazadas = guardado.n - guardado.aprobadas
        exclusion.cruzado = guardado.excluido
    return secuencia


def _instantanea(
    secuencia: SecuenciaPuerta, desde: int, posicion: int, decididas: int
) -> EstadoSecuencia:
    """The immutable state of the engine ``secuencia``."""
    return EstadoSecuencia(
        objetivo=secuencia.objetivo,
        delta=secuencia.delta,
        apuestas_exclusion=secuencia.apuestas,
        desde=desde,
        posicion=posicion,
        decididas=decididas,
        umbrales=tuple(
            EstadoProceso(
                umbral=umbral,
                n=proceso.n,
                aprobadas=proceso.aprobadas,
                log_capital=proceso.log_capital,
                log_maximo=proceso.log_maximo,
                excluido=exclusion.cruzado,
            )
            for umbral, proceso, exclusion in zip(
                secuencia.rejilla, secuencia.procesos, secuencia.exclusiones, strict=True
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
