"""Prometheus metrics of the reviewer app (``fichas_revision_*``), read from the store.

Everything is computed from the database at scrape time rather than counted in memory: the
numbers then survive restarts, agree between replicas sharing PostgreSQL, and a decision taken
by another replica (or resent after a crash) is counted exactly once. The queries are a few
aggregates over small tables. The store is asynchronous and a collector is not, so the
``/metrics`` handler first awaits ``MetricasRevision.actualizar`` (the queries) and the
collector then builds the families from those figures.
"""

from __future__ import annotations

import math
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
    MOTIVO_PUERTA_RETENIDA,
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
from revision.certificador.apertura import APERTURA_MANUAL, Apertura
from revision.certificador.confianza import VENTANA_MUESTRA, DecisionResumen, calcular
from revision.certificador.gobierno import familias, gobierno
from revision.certificador.lease import Lease
from revision.certificador.vigilancia import Instantanea, Vigilancia, actuales, instantanea

# Base names as they appear in /metrics; docs/metricas.md lists them.
QUEUE_DEPTH = "fichas_revision_queue_depth"
OLDEST_OPEN = "fichas_revision_oldest_open_age_seconds"
DECISIONS = "fichas_revision_decisions"  # exported as ..._total
DECISION_DURATION = "fichas_revision_decision_duration_seconds"
PRECISION = "fichas_revision_precision"
PRECISION_LOWER = "fichas_revision_precision_lower_bound"
PRECISION_SAMPLES = "fichas_revision_precision_samples"
CRITERION_PRECISION = "fichas_revision_criterion_precision"
# The gate that closes itself (revision/certificador/vigilancia.py), labelled as the worker's
# fichas_puerta_* (family, key), with family the gate's own: a family, or "*" for the pooled gate.
GATE_LOWER = "fichas_revision_puerta_cota_inferior"
GATE_UPPER = "fichas_revision_puerta_cota_superior"
GATE_SAMPLE = "fichas_revision_puerta_muestra"
GATE_ERRORS = "fichas_revision_puerta_errores"
GATE_BELOW = "fichas_revision_puerta_bajo_objetivo"
GATE_CLOSED = "fichas_revision_puertas_cerradas"  # exported as ..._total
# The change detector beside the bound (puerta.cierre), and the sample's verdicts held back in
# publication order (revision/certificador/publicacion.py).
GATE_DETECTOR = "fichas_revision_puerta_detector_log_r"
GATE_DETECTOR_THRESHOLD = "fichas_revision_puerta_detector_umbral_log"
GATE_PENDING = "fichas_revision_puerta_muestra_pendientes"
GATE_WAITING = "fichas_revision_puerta_muestra_retenidos"
GATE_BLOCKING = "fichas_revision_puerta_muestra_bloqueo_segundos"
# The gate that opens itself (revision/certificador/apertura.py), per gate (family or "*", key)
# while its sequence has any shadow-mode ficha since its last restart.
OPEN_EVIDENCE = "fichas_revision_apertura_evidencia_log10"
OPEN_THRESHOLD = "fichas_revision_apertura_umbral_bloqueo"
OPEN_MISSING = "fichas_revision_apertura_faltan"
OPEN_ARRIVED = "fichas_revision_apertura_llegadas"
OPEN_DECIDED = "fichas_revision_apertura_prefijo_decidido"
OPEN_PENDING = "fichas_revision_apertura_pendientes"
OPEN_READY = "fichas_revision_apertura_lista"
OPEN_CERTIFIED = "fichas_revision_apertura_umbral_certificado"
OPENED = "fichas_revision_puertas_abiertas"  # exported as ..._total
# Which gate governs each family (revision/certificador/gobierno.py), and its own evidence at the
# pooled λ.
GOVERNED = "fichas_revision_familia_gobierno"
OWN_APPROVALS = "fichas_revision_familia_aprobaciones_propias"
EXCLUSION = "fichas_revision_familia_exclusion_log10"
COVERED = "fichas_revision_coberturas"  # exported as ..._total
OWN_COVERAGE = "fichas_revision_familia_cobertura_log10"
# What holds across the catalogue: the gates in play, each a test at δ of its own.
IN_PLAY = "fichas_revision_puertas_en_juego"
# One certifier among replicas (revision/certificador/lease.py).
LEASE_HOLDER = "fichas_revision_certificador_titular"
ROUNDS = "fichas_revision_certificador_rondas"  # exported as ..._total
# A person's holds (puerta.retencion), per gate with a hold record on fichas.puerta.
HELD = "fichas_revision_puerta_retenida"
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

# Per gate and certification, the closing tests' figures (``ReviewCollector._puertas``).
_SEGUIMIENTO = {
    GATE_LOWER: "Online lower bound on precision",
    GATE_UPPER: "Online upper bound on precision",
    GATE_SAMPLE: "Sample verdicts since certification",
    GATE_ERRORS: "Incorrect sample verdicts since certification",
    GATE_BELOW: "1 when the online bound or the detector closes the gate",
    GATE_DETECTOR: "Change detector's log R since certification",
    GATE_DETECTOR_THRESHOLD: "log of the detector's alarm threshold",
    GATE_PENDING: "Sampled publications not yet decided",
    GATE_WAITING: "Verdicts waiting behind the first undecided item",
}

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
            yield from self._puertas()
        if self.apertura is not None:
            yield from self._apertura(self.apertura)
            yield from self._gobierno(self.apertura)
            yield self._retenciones(self.apertura)
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

    def _gobierno(self, apertura: Apertura) -> Iterator[Metric]:
        """Per family and key: which gate governs it and why (1 on the one current pair of
        labels), its own decided approvals at the pooled λ and its exclusion e-value while a
        pooled gate is open; the coverage records written; the certifier's rounds."""
        rige = GaugeMetricFamily(
            GOVERNED,
            "1: the gate that governs the family and why",
            labels=["family", "key", "gate", "reason"],
        )
        propias = GaugeMetricFamily(
            OWN_APPROVALS, "Own decided approvals at the pooled threshold", labels=["family", "key"]
        )
        exclusion = GaugeMetricFamily(
            EXCLUSION, "log10 exclusion e-value at the pooled threshold", labels=["family", "key"]
        )
        cobertura = GaugeMetricFamily(
            OWN_COVERAGE,
            "log10 own e-value at the pooled threshold since the pooled certification",
            labels=["family", "key"],
        )
        estados = apertura.estados()
        secuencias = list(apertura.secuencias)
        claves = {s.clave.texto(): s.clave for s in secuencias}
        claves |= {e.clave.texto(): e.clave for e in estados.values()}
        manual = apertura.modo == APERTURA_MANUAL
        for clave_id, clave in sorted(claves.items()):
            por_familia = {s.familia: s for s in secuencias if s.clave == clave}
            for familia in familias(clave, estados, secuencias):
                sec = por_familia.get(familia)
                gob = gobierno(
                    familia,
                    clave,
                    estados,
                    sec,
                    apertura.alcance,
                    manual,
                    apertura.desde_conjunta(sec, estados),
                )
                rige.add_metric([familia, clave_id, gob.puerta, gob.razon], 1)
                cob = gob.cobertura
                if cob is not None and cob.umbral is not None:
                    propias.add_metric([familia, clave_id], cob.n)
                    exclusion.add_metric([familia, clave_id], _log10(cob.e_exclusion))
                    cobertura.add_metric([familia, clave_id], _log10(cob.e_valor))
        yield from (rige, propias, exclusion, cobertura)
        juego = apertura.en_juego(estados)
        en_juego = GaugeMetricFamily(
            IN_PLAY, "Gates in play, each a test at risk delta of its own", labels=["kind"]
        )
        en_juego.add_metric(["familia"], juego.familias)
        en_juego.add_metric(["conjunta"], juego.conjuntas)
        en_juego.add_metric(["cobertura"], juego.coberturas)
        yield en_juego
        cubiertas = CounterMetricFamily(
            COVERED, "Coverage records this app wrote", labels=["family", "key", "kind"]
        )
        for (familia, clave_id, tipo), veces in sorted(dict(apertura.cubiertas).items()):
            cubiertas.add_metric([familia, clave_id, tipo], veces)
        yield cubiertas
        yield CounterMetricFamily(ROUNDS, "Certifier rounds run", value=apertura.rondas)

    def _retenciones(self, apertura: Apertura) -> Metric:
        """1 per gate a person holds now, 0 per gate released (its hold record's motivo), as
        the app's reader of ``fichas.puerta`` sees them."""
        retenida = GaugeMetricFamily(
            HELD, "1 while a person holds the gate closed", labels=["family", "key"]
        )
        for estado in sorted(apertura.estados().values(), key=lambda e: e.id):
            if estado.retencion:
                valor = 1 if estado.motivo == MOTIVO_PUERTA_RETENIDA else 0
                retenida.add_metric([estado.familia, estado.clave.texto()], valor)
        return retenida

    def _apertura(self, apertura: Apertura) -> Iterator[Metric]:
        """Per gate (family or "*", key), how far shadow mode is from opening it: the evidence
        at the λ where the walk stops, how many consecutive approvals would cross it, the
        decided prefix against the arrivals, the pending fichas, and whether it is ready."""
        etiquetas = ["family", "key"]
        familias = {
            OPEN_EVIDENCE: GaugeMetricFamily(
                OPEN_EVIDENCE, "log10 e-value at the blocking threshold", labels=etiquetas
            ),
            OPEN_THRESHOLD: GaugeMetricFamily(
                OPEN_THRESHOLD, "Threshold where the walk stops", labels=etiquetas
            ),
            OPEN_MISSING: GaugeMetricFamily(
                OPEN_MISSING, "Consecutive approvals that would open", labels=etiquetas
            ),
            OPEN_ARRIVED: GaugeMetricFamily(
                OPEN_ARRIVED, "Shadow-mode fichas that can count", labels=etiquetas
            ),
            OPEN_DECIDED: GaugeMetricFamily(
                OPEN_DECIDED, "Of them, in the decided prefix", labels=etiquetas
            ),
            OPEN_PENDING: GaugeMetricFamily(
                OPEN_PENDING, "Of them, still undecided", labels=etiquetas
            ),
            OPEN_READY: GaugeMetricFamily(
                OPEN_READY, "1 when certified and not open", labels=etiquetas
            ),
            OPEN_CERTIFIED: GaugeMetricFamily(
                OPEN_CERTIFIED, "Threshold the decided prefix certifies", labels=etiquetas
            ),
        }
        listas = {s.id for s in apertura.listas()}
        for sec in list(apertura.secuencias):
            if not sec.llegadas:
                continue
            res = sec.resultado
            valores = [sec.familia, sec.clave.texto()]
            nan = float("nan")
            cifras = {
                OPEN_EVIDENCE: sec.log10_evidencia,
                OPEN_THRESHOLD: nan if res.bloqueo is None else res.bloqueo,
                OPEN_MISSING: nan if res.faltan is None else res.faltan,
                OPEN_ARRIVED: sec.llegadas,
                OPEN_DECIDED: sec.decididas,
                OPEN_PENDING: sec.pendientes,
                OPEN_READY: 1 if sec.id in listas else 0,
                OPEN_CERTIFIED: nan if res.umbral is None else res.umbral,
            }
            for nombre, valor in cifras.items():
                familias[nombre].add_metric(valores, valor)
        yield from familias.values()
        abiertas = CounterMetricFamily(
            OPENED, "Gates this app opened from shadow-mode evidence", labels=etiquetas
        )
        for (familia, clave), veces in sorted(dict(apertura.abiertas).items()):
            abiertas.add_metric([familia, clave], veces)
        yield abiertas

    def _puertas(self) -> Iterator[Metric]:
        """Per gate (family and key, as the worker labels its gate), the closing tests of its
        newest certification (the online bound, the detector), the verdicts and errors behind
        them, the sampled items still undecided and the one that holds the later verdicts
        back; the closures written, by motivo."""
        etiquetas = ["family", "key"]  # as the worker's fichas_puerta_* (family may be "*")
        familias = {
            nombre: GaugeMetricFamily(nombre, ayuda, labels=etiquetas)
            for nombre, ayuda in _SEGUIMIENTO.items()
        }
        bloqueo = GaugeMetricFamily(
            GATE_BLOCKING,
            "Age of the first undecided sampled item, which holds later verdicts back",
            labels=[*etiquetas, "event_id"],
        )
        ahora = time.time()
        for seg in self.seguidas:
            cert = seg.certificacion
            valores = [cert.familia, cert.clave.texto()]
            cifras = {
                GATE_LOWER: seg.cota_inferior,
                GATE_UPPER: seg.cota_superior,
                GATE_SAMPLE: seg.veredictos,
                GATE_ERRORS: seg.incorrectas,
                GATE_BELOW: 1 if seg.bajo_objetivo else 0,
                GATE_DETECTOR: seg.log_r,
                GATE_DETECTOR_THRESHOLD: seg.umbral_log,
                GATE_PENDING: seg.pendientes,
                GATE_WAITING: seg.retenidos,
            }
            for nombre, valor in cifras.items():
                familias[nombre].add_metric(valores, valor)
            if seg.bloqueo is not None:
                edad = max(0.0, ahora - seg.bloqueo.recibido_en)
                bloqueo.add_metric([*valores, seg.bloqueo.event_id], edad)
        cerradas = CounterMetricFamily(
            GATE_CLOSED,
            "Gates this app closed on what people said of their publications",
            labels=[*etiquetas, "reason"],
        )
        for (familia, clave, motivo), veces in sorted(self.cerradas.items()):
            cerradas.add_metric([familia, clave, motivo], veces)
        yield from familias.values()
        yield from (bloqueo, cerradas)

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


def _log10(valor: float) -> float:
    """log10 of an e-value (``-inf`` for 0)."""
    return math.log10(valor) if valor > 0 else -math.inf


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
