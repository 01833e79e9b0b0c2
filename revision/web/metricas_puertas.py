"""The reviewer app's gate series: opening, governance, holds and closing, per gate and key.

What the certifier's parts know of each gate, as Prometheus families for ``/metrics``: how far
shadow mode is from opening it (``series_de_apertura``, ``revision.certificador.apertura``),
which gate governs each family and its own evidence at the pooled λ, the gates in play and the
coverage records written (``series_de_gobierno``, ``revision.certificador.gobierno``), a
person's holds (``serie_de_retencion``), and the closing tests of each newest certification with
the closures written (``series_de_cierre``, ``revision.certificador.vigilancia``). Labelled as the
worker's ``fichas_puerta_*`` (family, key), family "*" for the pooled gate. No I/O: families
from the certifier's memory and the figures the collector (``revision.web.metricas``) took
before the scrape. The series and what they mean: docs/metricas.md.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Mapping, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from esquemas.constantes import MOTIVO_PUERTA_RETENIDA
from revision.certificador.apertura import APERTURA_MANUAL, Apertura
from revision.certificador.gobierno import familias, gobierno
from revision.certificador.vigilancia import Instantanea

# Base names as they appear in /metrics; docs/metricas.md lists them.

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
# A person's holds (puerta.retencion), per gate with a hold record on fichas.puerta.
HELD = "fichas_revision_puerta_retenida"

# Per gate and certification, the closing tests' figures (``series_de_cierre``).
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


def series_de_apertura(apertura: Apertura) -> Iterator[Metric]:
    """Per gate (family or "*", key), how far shadow mode is from opening it: the evidence
    at the λ where the walk stops, how many consecutive approvals would cross it, the
    decided prefix against the arrivals, the pending fichas, and whether it is ready."""
    etiquetas = ["family", "key"]
    series = {
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
        OPEN_PENDING: GaugeMetricFamily(OPEN_PENDING, "Of them, still undecided", labels=etiquetas),
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
            series[nombre].add_metric(valores, valor)
    yield from series.values()
    abiertas = CounterMetricFamily(
        OPENED, "Gates this app opened from shadow-mode evidence", labels=etiquetas
    )
    for (familia, clave), veces in sorted(dict(apertura.abiertas).items()):
        abiertas.add_metric([familia, clave], veces)
    yield abiertas


def series_de_gobierno(apertura: Apertura) -> Iterator[Metric]:
    """Per family and key: which gate governs it and why (1 on the one current pair of
    labels), its own decided approvals at the pooled λ and its exclusion e-value while a
    pooled gate is open; the gates in play; the coverage records written."""
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


def serie_de_retencion(apertura: Apertura) -> Metric:
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


def series_de_cierre(
    seguidas: Sequence[Instantanea], cerradas: Mapping[tuple[str, str, str], int]
) -> Iterator[Metric]:
    """Per gate (family and key, as the worker labels its gate), the closing tests of its
    newest certification (the online bound, the detector), the verdicts and errors behind
    them, the sampled items still undecided and the one that holds the later verdicts
    back; the closures written, by motivo."""
    etiquetas = ["family", "key"]  # as the worker's fichas_puerta_* (family may be "*")
    series = {
        nombre: GaugeMetricFamily(nombre, ayuda, labels=etiquetas)
        for nombre, ayuda in _SEGUIMIENTO.items()
    }
    bloqueo = GaugeMetricFamily(
        GATE_BLOCKING,
        "Age of the first undecided sampled item, which holds later verdicts back",
        labels=[*etiquetas, "event_id"],
    )
    ahora = time.time()
    for seg in seguidas:
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
            series[nombre].add_metric(valores, valor)
        if seg.bloqueo is not None:
            edad = max(0.0, ahora - seg.bloqueo.recibido_en)
            bloqueo.add_metric([*valores, seg.bloqueo.event_id], edad)
    cierres = CounterMetricFamily(
        GATE_CLOSED,
        "Gates this app closed on what people said of their publications",
        labels=[*etiquetas, "reason"],
    )
    for (familia, clave, motivo), veces in sorted(cerradas.items()):
        cierres.add_metric([familia, clave, motivo], veces)
    yield from series.values()
    yield from (bloqueo, cierres)


def _log10(valor: float) -> float:
    """log10 of an e-value (``-inf`` for 0)."""
    return math.log10(valor) if valor > 0 else -math.inf
