"""Open a gate from shadow-mode decisions with a guarantee that holds however often one looks.

While a family's gate is closed (shadow mode) every ficha goes to people with the evaluator's
score. The reviewer app wants to open the gate by itself as soon as those decisions allow, so it
looks after every decision. Re-running the fixed-n Learn-then-Test of ``puerta.certificacion``
at every look and opening at the first pass is optional stopping: each look is a new chance for
noise to pass, and the chance that one of them does grows with the number of looks (measured in
docs/puerta.md, "Abrir la puerta"). This module keeps instead, for each threshold λ, an
**e-process**: a test statistic whose chance of *ever* reaching ``1/delta`` under the null is at
most ``delta``, at every look at once, with any rule for when to look or stop.

The test at one λ (the same family of tools as ``puerta.cota``: Waudby-Smith & Ramdas 2023,
"Estimating means of bounded random variables by betting", JRSS-B, arXiv 2010.09686). The
approvals at λ are the observations whose code checks passed and whose score is ``>= λ``, taken
in arrival order; each gives x = 1 if people approved it as is, 0 if they rejected or edited
it; fichas closed as obsolete are skipped (nobody judged them). The null H_λ: "precision at λ
is below ``objetivo``" (each approval's chance of x = 1, given the past, is at most objetivo).
A gambler starts with capital 1 and before each x stakes a fraction ``b`` on it being above
objetivo:

    K_t = prod_{i<=t} (1 + b_i (x_i - objetivo)),   0 <= b_i < 1 / objetivo

Every factor is positive, and under H_λ its expectation given the past is
1 + b_i (E[x_i] - objetivo) <= 1: K is a nonnegative supermartingale, so by Ville's inequality
P(exists t: K_t >= 1/delta) <= delta. A λ whose capital ever reached ``1/delta`` is rejected
for good (``EstadoUmbral.cruzado``): its precision is at least objetivo, with risk delta.

The betting rule (``apuesta``), fixed before x_t is seen (predictable), is a truncated Kelly
plug-in. For a Bernoulli(p) outcome the bet that makes the capital grow fastest is
b* = (p - objetivo) / (objetivo (1 - objetivo)); the rule plugs in a running estimate of p and
clips the result to [0, TRUNCAMIENTO / objetivo]:

- the estimate is the running mean shrunk toward 1 by one imaginary approval,
  p̂_t = (approvals so far + 1) / (decided so far + 1). A gate is only worth opening when
  precision is well above the objective, so the gambler stakes as if it were from the first
  ficha: with every decision approved the capital crosses ``1/delta`` after 38 approvals for
  0.9 / 0.05 (no bet can do it in fewer than 29, the fixed-n minimum); a rejection drops p̂ and
  with it the bet at once, and under the objective the bet is 0 (a gambler who believes the
  null stops betting instead of losing);
- the truncation ``TRUNCAMIENTO`` = 0.75 bounds what one rejection can cost (the capital keeps
  at least a quarter). Closer to 1 opens a perfect judge a few approvals sooner and a 0.95 one
  later, because each of its rejections costs more; 0.75 is the middle of that trade-off in the
  simulation of docs/puerta.md (median 38 approvals at precision 0.99, 201 at 0.95).

Which rule is used changes only how fast a gate opens, never the guarantee: any predictable
bet keeps K a supermartingale under the null.

**The grid and the walk (fixed-sequence testing).** The thresholds are the grid ``REJILLA``,
fixed before any data, walked from the strictest to the most lenient; the gate opens at the
most lenient λ whose e-process, and every stricter one's, has ever crossed ``1/delta``. Why the
family-wise error stays at ``delta`` at every time at once, with no multiplicity correction:
let λ* be the first threshold in the grid's fixed order whose null is true (precision below the
objective). Since the order is fixed, λ* is one fixed (unknown) threshold, whatever the data
and whatever the time. Opening wrongly, at any time, means opening at λ* or past it, which the
walk allows only if λ*'s own e-process has crossed at some time; that happens with probability
at most ``delta`` (Ville). So P(the gate is ever open at a λ below the objective) <= delta,
however often the app looks.

Why the walk starts at the grid's fixed top, and not where data first allow (as the fixed-n walk
of ``puerta.certificacion`` skips thresholds with too few approvals): in a sequence that start
would move as fichas arrive, and the first true null past a moving start is a different
threshold at different times. The error would then be "one of several nulls ever crossed",
whose probability adds up over those nulls instead of being one Ville event of probability
delta. The price is that the strictest λ of the grid must see enough approvals before anything
opens, which is why ``REJILLA``'s strict end is not higher than it is (below).

**Order independent of labels.** The sequence is the fichas in *arrival* order, the order the
worker sent them to review, which no label can change; the caller passes the prefix in which
every ficha was decided or closed as obsolete. In the order people decide them it would not be
valid: reviewers who decide the easy ones first make the early approvals better than the
precision the gate would publish at, and the capital would grow on that selection.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

REJILLA: tuple[float, ...] = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5)
"""The thresholds, strictest first, fixed before any data.

The strict end is 0.95, not 0.99: every opening needs the strictest λ crossed first, and it
sees only the fichas scored at or above it, so a top threshold few fichas reach blocks the whole
walk (with a quarter of the fichas above 0.99 the gate would need four times the decisions to
open anywhere). An evaluator that approves with confidence scores its good fichas above 0.95.
The lenient end is 0.5: below it the evaluator itself leans to rejecting (s = P(aprobada =
true) < 1/2), and publishing what the judge would reject is not a gate worth certifying. The
step, 0.05, gives ten nulls: neighbouring thresholds share most of their approvals, so a finer
step would add little resolution and a coarser one would lose recall.
"""

TRUNCAMIENTO = 0.75  # a bet never stakes more than 0.75 / objetivo: a rejection keeps >= 1/4
LIMITE_FALTAN = 100_000  # beyond this many approvals ``faltan`` says "cannot say" (None)


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


@dataclass(frozen=True)
class EstadoUmbral:
    """One λ of the grid after the sequence.

    ``n`` approvals at λ seen (code ok, score >= λ, decided), ``k`` of them rejected by people;
    ``e_valor`` the e-process now, ``e_max`` its running maximum, ``cruzado`` whether e_max
    reached ``1/delta`` (once crossed it stays rejected).
    """

    umbral: float
    n: int
    k: int
    e_valor: float
    e_max: float
    cruzado: bool


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

    def estado(self, umbral: float) -> EstadoUmbral:
        """The public view of this process at threshold ``umbral``."""
        return EstadoUmbral(
            umbral=umbral,
            n=self.n,
            k=self.n - self.aprobadas,
            e_valor=_exp(self.log_capital),
            e_max=_exp(self.log_maximo),
            cruzado=self.cruzado,
        )


def _exp(logaritmo: float) -> float:
    """exp, with ``inf`` instead of OverflowError for a capital beyond float range."""
    return math.exp(logaritmo) if logaritmo < 709.0 else math.inf


class SecuenciaPuerta:
    """The e-processes of a whole grid, fed one observation at a time in arrival order.

    ``certificar_secuencia`` is this fed with a whole sequence; the class is for callers that
    look after every decision (the simulation in ``bench``) without recomputing the prefix.
    """

    def __init__(self, objetivo: float, delta: float, rejilla: Sequence[float] = REJILLA) -> None:
        _comprobar_parametros(objetivo, delta, rejilla)
        self.objetivo = objetivo
        self.delta = delta
        self.rejilla = tuple(rejilla)
        self.procesos = [ProcesoE(objetivo, delta) for _ in self.rejilla]

    def actualizar(self, observacion: Observacion) -> None:
        """Bet on ``observacion`` at every threshold where it is a decided approval."""
        for umbral, proceso in zip(self.rejilla, self.procesos, strict=True):
            if observacion.aprobacion_en(umbral):
                proceso.actualizar(bool(observacion.aprobada))

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
            umbrales=tuple(p.estado(u) for u, p in zip(self.rejilla, self.procesos, strict=True)),
            bloqueo=self.rejilla[pasados] if bloqueo else None,
            faltan=bloqueo.faltan() if bloqueo else None,
            objetivo=self.objetivo,
            delta=self.delta,
        )


def certificar_secuencia(
    observaciones: Sequence[Observacion],
    objetivo: float,
    delta: float,
    rejilla: Sequence[float] = REJILLA,
) -> ResultadoSecuencial:
    """The walk's result after the decided prefix ``observaciones`` (in arrival order).

    Valid at every look: the app may call this after every decision and open the first time
    ``umbral`` is not None (the module's docstring says why). Since a crossed threshold stays
    crossed, the certified λ only ever moves toward the lenient end as decisions arrive.
    """
    secuencia = SecuenciaPuerta(objetivo, delta, rejilla)
    for observacion in observaciones:
        secuencia.actualizar(observacion)
    return secuencia.resultado()
