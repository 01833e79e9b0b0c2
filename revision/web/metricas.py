"""Prometheus metrics of the reviewer app (``fichas_revision_*``), read from the store.

Everything is computed from the database at scrape time rather than counted in memory: the
numbers then survive restarts, agree between replicas sharing PostgreSQL, and a decision taken
by another replica (or resent after a crash) is counted exactly once. The queries are a few
aggregates over small tables. The store is asynchronous and a collector is not, so the
``/metrics`` handler first awaits ``MetricasRevision.actualizar`` (the queries) and the
collector then builds the families from those figures. Here: the queue, the decisions, the
evaluator's precision and the gate's recall, the candidate's items, the obsolete rate and the
certifier's lease; each gate's opening, governance, holds and closing series are
``revision.web.metricas_puertas``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from esquemas.constantes import (
    MOTIVO_MUESTRA,
    MOTIVO_RECHAZADA,
    MOTIVO_SALIDA_INVALIDA,
    MOTIVO_SIN_GARANTIA,
    REVISOR_SISTEMA,
    TIPO_MUESTRA,
)
from puerta.secuencial import REJILLA
from revision.almacen import obsoletas
from revision.almacen.cola import Almacen, DecisionResumida
from revision.certificador import retenidas
from revision.certificador.apertura import Apertura
from revision.certificador.confianza import VENTANA_MUESTRA, DecisionResumen, calcular
from revision.certificador.lease import Lease
from revision.certificador.vigilancia import Instantanea, Vigilancia, actuales, instantanea
from revision.web.metricas_puertas import (
    serie_de_retencion,
    series_de_apertura,
    series_de_cierre,
    series_de_gobierno,
)

# Base names as they appear in /metrics; docs/metricas.md lists them.
QUEUE_DEPTH = "fichas_revision_queue_depth"
OLDEST_OPEN = "fichas_revision_oldest_open_age_seconds"
DECISIONS = "fichas_revision_decisions"  # exported as ..._total
DECISION_DURATION = "fichas_revision_decision_duration_seconds"
PRECISION = "fichas_revision_precision"
PRECISION_LOWER = "fichas_revision_precision_lower_bound"
PRECISION_SAMPLES = "fichas_revision_precision_samples"
CRITERION_PRECISION = "fichas_revision_criterion_precision"
# One certifier among replicas (revision/certificador/lease.py).
LEASE_HOLDER = "fichas_revision_certificador_titular"
ROUNDS = "fichas_revision_certificador_rondas"  # exported as ..._total
# A candidate loop's items (issue 41): its own queue and its labels, per family and key; every
# figure above counts live items only.
CANDIDATE_DEPTH = "fichas_revision_candidata_queue_depth"
CANDIDATE_DECISIONS = "fichas_revision_candidata_decisions"  # exported as ..._total
# Recall of the gate (revision/certificador/retenidas.py).
RECALL = "fichas_revision_recall"
HELD_BACK = "fichas_revision_retenidas_muestra"
# A gate's countable shadow-mode items closed, obsolete or decided (revision/almacen/obsoletas.py).
SHADOW_CLOSED = "fichas_revision_sombra_cerradas"
OBSOLETE_SHARE = "fichas_revision_obsoletas_proporcion"

TODAS = "todas"
KINDS = (MOTIVO_RECHAZADA, MOTIVO_SALIDA_INVALIDA, MOTIVO_SIN_GARANTIA, MOTIVO_MUESTRA)
BUCKETS = (60.0, 300.0, 900.0, 3600.0, 4 * 3600.0, 86400.0, 3 * 86400.0, 7 * 86400.0)


@dataclass(frozen=True)
class Cifras:
    """What one scrape reads from the store."""

    abiertos: dict[str, int] = field(default_factory=dict)
    primero: float | None = None
    cuentas: dict[tuple[str, str], int] = field(default_factory=dict)
    decisiones: list[DecisionResumida] = field(default_factory=list)
    # (event_id, familia, decision or None) of the items the gate held back (recall).
    retenidas: list[tuple[str, str, str | None]] = field(default_factory=list)
    # Correct published sample verdicts per family, read from the store only when no monitor
    # counts them (None: the monitor's own count is used).
    correctas: dict[str, int] | None = None
    # The candidate's open items per (family, key) and its decisions per (family, key, decision).
    candidatas: dict[tuple[str, str], int] = field(default_factory=dict)
    etiquetas: dict[tuple[str, str, str], int] = field(default_factory=dict)
    # (family or "*", key id) -> its countable shadow-mode items closed, obsolete or decided.
    cerradas: dict[tuple[str, str], obsoletas.Cerradas] = field(default_factory=dict)


async def leer_cifras(almacen: Almacen, con_vigilancia: bool = False) -> Cifras:
    """The aggregates of one scrape; the sample's verdicts only when no monitor counts them."""
    abiertos, primero = await almacen.resumen_abiertos()
    correctas = None
    if not con_vigilancia:
        correctas = retenidas.correctas_publicadas(
            (decision, datos) for _, decision, datos in await almacen.veredictos_muestra()
        )
    return Cifras(
        abiertos,
        primero,
        await almacen.cuentas_decisiones(),
        await almacen.decisiones_resumidas(),
        await almacen.retenidas(),
        correctas,
        await almacen.candidatas_abiertas(),
        await almacen.candidatas_decisiones(),
        await obsoletas.cerradas(almacen.database, min(REJILLA)),
    )


class ReviewCollector(Collector):
    """Builds the families from the figures read for the current scrape."""

    def __init__(
        self,
        vigilancia: Vigilancia | None = None,
        proporcion: float = 0.0,
        apertura: Apertura | None = None,
        lease: Lease | None = None,
        sombra: float = 0.0,
    ) -> None:
        self.cifras = Cifras()
        # The monitor's figures, taken on the event loop before the scrape (``actualizar``).
        self.seguidas: list[Instantanea] = []
        self.cerradas: dict[tuple[str, str, str], int] = {}
        self.vigilancia = vigilancia
        self.proporcion = proporcion
        self.apertura = apertura
        self.lease = lease
        self.sombra = sombra  # the blind shadow share, left out of the recall's draw

    def collect(self) -> Iterator[Metric]:
        cuentas, primero = self.cifras.abiertos, self.cifras.primero
        profundidad = GaugeMetricFamily(QUEUE_DEPTH, "Open review items", labels=["kind"])
        for kind in KINDS:
            profundidad.add_metric([kind], cuentas.get(kind, 0))
        yield profundidad
        viejo = 0.0 if primero is None else max(0.0, time.time() - primero)
        yield GaugeMetricFamily(OLDEST_OPEN, "Age of the oldest open item", value=viejo)
        yield from self._candidata()

        total = CounterMetricFamily(DECISIONS, "Decisions taken", labels=["type", "decision"])
        for (tipo, decision), n in sorted(self.cifras.cuentas.items()):
            total.add_metric([tipo, decision], n)
        yield total
        decisiones = self.cifras.decisiones
        yield self._duration(
            [(d.tipo, d.segundos) for d in decisiones if d.revisor != REVISOR_SISTEMA]
        )
        yield from self._precision(
            [
                DecisionResumen(d.tipo, d.decision, d.familia, d.criterios)
                for d in decisiones
                if d.tipo == TIPO_MUESTRA
            ]
        )
        if self.vigilancia is not None:
            yield from series_de_cierre(self.seguidas, self.cerradas)
        if self.apertura is not None:
            yield from series_de_apertura(self.apertura)
            yield from series_de_gobierno(self.apertura)
            yield CounterMetricFamily(ROUNDS, "Certifier rounds run", value=self.apertura.rondas)
            yield serie_de_retencion(self.apertura)
        if self.lease is not None:
            yield GaugeMetricFamily(
                LEASE_HOLDER,
                "1 when this replica holds the certifier's lease (writes gates)",
                value=1 if self.lease.held else 0,
            )
        yield from self._recall(self.vigilancia)
        yield from self._obsoletas()

    def _obsoletas(self) -> Iterator[Metric]:
        """Per gate (family or "*", key), its countable shadow-mode items closed by how they
        closed, and the share closed obsolete before anyone decided them."""
        cerradas = GaugeMetricFamily(
            SHADOW_CLOSED,
            "Countable shadow-mode items closed, by state (obsoleta, decidida)",
            labels=["family", "key", "state"],
        )
        proporcion = GaugeMetricFamily(
            OBSOLETE_SHARE,
            "Share of the countable shadow-mode items closed obsolete before a decision",
            labels=["family", "key"],
        )
        for (familia, clave), c in sorted(self.cifras.cerradas.items()):
            cerradas.add_metric([familia, clave, obsoletas.OBSOLETA], c.obsoletas)
            cerradas.add_metric([familia, clave, obsoletas.DECIDIDA], c.decididas)
            if c.proporcion is not None:
                proporcion.add_metric([familia, clave], c.proporcion)
        yield cerradas
        yield proporcion

    def _candidata(self) -> Iterator[Metric]:
        """A candidate loop's open items and its decisions (labels that never publish), per
        family and key: the share of reviewers its queue takes, and its evidence's pace."""
        profundidad = GaugeMetricFamily(
            CANDIDATE_DEPTH, "Open candidate review items", labels=["family", "key"]
        )
        for (familia, clave), n in sorted(self.cifras.candidatas.items()):
            profundidad.add_metric([familia, clave], n)
        yield profundidad
        decisiones = CounterMetricFamily(
            CANDIDATE_DECISIONS,
            "Decisions on candidate items (labels, never published)",
            labels=["family", "key", "decision"],
        )
        for (familia, clave, decision), n in sorted(self.cifras.etiquetas.items()):
            decisiones.add_metric([familia, clave, decision], n)
        yield decisiones

    def _recall(self, vigilancia: Vigilancia | None) -> Iterator[Metric]:
        """Recall of the gate per family, and the held-back sample behind it per state (C is
        counted by the monitor as verdicts come; read from the store only without one)."""
        if vigilancia is not None:
            correctas = dict(vigilancia.correctas)
        else:
            correctas = dict(self.cifras.correctas or {})
        figuras = retenidas.calcular(correctas, self.cifras.retenidas, self.proporcion, self.sombra)
        recall = GaugeMetricFamily(RECALL, "Recall of the gate, C/(C+A)", labels=["family"])
        muestra = GaugeMetricFamily(
            HELD_BACK, "Held-back sample items per state", labels=["family", "state"]
        )
        for familia, r in figuras.items():
            if r.valor is not None:
                recall.add_metric([familia], r.valor)
            for estado in retenidas.ESTADOS:
                muestra.add_metric([familia, estado], r.retenidas.get(estado, 0))
        yield recall
        yield muestra

    def _duration(self, decisiones: list[tuple[str, float]]) -> Metric:
        """Time from an item's arrival to a person's decision, per item type."""
        hist = HistogramMetricFamily(
            DECISION_DURATION, "Seconds from arrival to decision", labels=["type"]
        )
        for tipo in sorted({t for t, _ in decisiones}):
            valores = [sg for t, sg in decisiones if t == tipo]
            cubos = [(str(b), float(sum(1 for v in valores if v <= b))) for b in BUCKETS]
            cubos.append(("+Inf", float(len(valores))))
            hist.add_metric([tipo], cubos, sum_value=sum(valores))
        return hist

    def _precision(self, muestra: list[DecisionResumen]) -> Iterator[Metric]:
        """Precision over the last ``VENTANA_MUESTRA`` sample decisions, overall and per family."""
        valor = GaugeMetricFamily(PRECISION, "Evaluator precision, last N", labels=["family"])
        bajo = GaugeMetricFamily(PRECISION_LOWER, "Wilson 95% lower bound", labels=["family"])
        n = GaugeMetricFamily(
            PRECISION_SAMPLES, "Sample decisions in the window", labels=["family"]
        )
        grupos = {TODAS: muestra}
        for familia in sorted({d.familia for d in muestra}):
            grupos[familia] = [d for d in muestra if d.familia == familia]
        for familia, grupo in grupos.items():
            ventana = calcular(grupo).ventana
            n.add_metric([familia], ventana.total)
            if ventana.valor is not None and ventana.intervalo is not None:
                valor.add_metric([familia], ventana.valor)
                bajo.add_metric([familia], ventana.intervalo[0])
        yield valor
        yield bajo
        yield n
        por_criterio = GaugeMetricFamily(
            CRITERION_PRECISION,
            "Evaluator precision per criterion, last N",
            labels=["criterion"],
        )
        for criterio, p in calcular(muestra[-VENTANA_MUESTRA:]).por_criterio.items():
            if p.valor is not None:
                por_criterio.add_metric([criterio], p.valor)
        yield por_criterio


class MetricasRevision(CollectorRegistry):
    """The app's registry; ``actualizar`` reads the store before each exposition."""

    def __init__(
        self,
        almacen: Almacen,
        vigilancia: Vigilancia | None = None,
        proporcion: float = 0.0,
        apertura: Apertura | None = None,
        lease: Lease | None = None,
        sombra: float = 0.0,
    ) -> None:
        super().__init__()
        self.almacen = almacen
        self.colector = ReviewCollector(vigilancia, proporcion, apertura, lease, sombra)
        self.register(self.colector)

    async def actualizar(self) -> None:
        """Read the figures the next ``collect`` shows (the monitor's taken here, on the
        event loop that feeds it)."""
        colector = self.colector
        colector.cifras = await leer_cifras(
            self.almacen, con_vigilancia=colector.vigilancia is not None
        )
        if colector.vigilancia is not None:
            vigilancia = colector.vigilancia
            colector.seguidas = [instantanea(s) for s in actuales(vigilancia.seguimientos).values()]
            colector.cerradas = dict(vigilancia.cerradas)


def metricas_revision(
    almacen: Almacen,
    vigilancia: Vigilancia | None = None,
    proporcion: float = 0.0,
    apertura: Apertura | None = None,
    lease: Lease | None = None,
    sombra: float = 0.0,
) -> MetricasRevision:
    """A registry of its own with the app's collector (several apps may share a process);
    ``sombra`` is the workers' blind shadow share (``FICHAS_SOMBRA_PROPORCION``)."""
    return MetricasRevision(almacen, vigilancia, proporcion, apertura, lease, sombra)
