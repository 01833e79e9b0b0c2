"""The worker's Prometheus series: names, labels, help texts and buckets, declared once.

Only declarations live here; ``stream.metricas.prometheus`` holds the hooks that update them.
``docs/metricas.md`` lists exactly ``METRIC_NAMES``, and a test compares the two.
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
)

# Base names as they appear in /metrics (counters with ``_total``, the Info with ``_info``);
# docs/metricas.md lists exactly these.
METRIC_NAMES: frozenset[str] = frozenset(
    {
        "fichas_events_total",
        "fichas_decisiones_total",
        "fichas_attempts_total",
        "fichas_attempts_per_ficha",
        "fichas_rejections_total",
        "fichas_verdicts_total",
        "fichas_event_duration_seconds",
        "fichas_node_duration_seconds",
        "fichas_llm_request_duration_seconds",
        "fichas_llm_errors_total",
        "fichas_llm_tokens_total",
        "fichas_in_flight",
        "fichas_consumer_lag",
        "fichas_llm_paused",
        "fichas_criteria_info",
        "fichas_sample_total",
        "fichas_step_failures_total",
        "fichas_oldest_event_age_seconds",
        "fichas_puerta_umbral",
        "fichas_puerta_abierta",
        "fichas_puerta_n",
        "fichas_puerta_k",
        "fichas_puerta_cota_inferior",
        "fichas_sin_garantia_total",
        "fichas_sombra_total",
        "fichas_muestra_minima_total",
        "fichas_puerta_sin_certificar",
        "fichas_puerta_retenida",
        "fichas_puerta_suspendida",
        "fichas_modelo_servido_info",
        "fichas_modelo_servido_cambios_total",
        "fichas_llm_logprobs",
        "fichas_evaluator_scores_total",
        "fichas_outcomes_total",
        "fichas_candidata_started_total",
        "fichas_candidata_skipped_total",
        "fichas_candidata_written_total",
        "fichas_candidata_lost_total",
        "fichas_candidata_in_flight",
        "fichas_candidata_llm_calls_total",
        "fichas_candidata_llm_calls_per_event",
        "fichas_candidata_key_info",
    }
)

RESULTS = ("publicada", "revision_manual", "dlq", "obsoleto", "reentregada")
# How the worker ended a person's decision (stream.flow.decisiones.Aplicacion).
DECISION_RESULTS = ("publicada", "obsoleta", "sin_publicacion", "rechazada")
AGENTS = ("generador", "evaluador")
NODES = ("generar", "evaluar", "publicar", "enviar_a_revision")
LLM_ERROR_KINDS = ("connection", "timeout", "rate_limit", "server", "request", "invalid_output")
TOKEN_TYPES = ("prompt", "completion")
OTHER_CRITERION = "otro"
STEPS = ("store", "graph", "produce")
SCORE_STATES = ("present", "missing")
OUTCOME_RESULTS = ("publicada", "revision_manual")

# Why a routed event got no candidate run (stream.candidata.bucle), and why a started one wrote
# nothing.
CANDIDATE_SKIP_REASONS = ("budget", "identity", "same_key")
CANDIDATE_LOSS_REASONS = ("stop", "failure")
# LLM calls of one candidate run: 2 per attempt (generator, evaluator), up to 10 attempts.
CALLS_BUCKETS = (1, 2, 3, 4, 6, 8, 10, 15, 20)

ATTEMPT_BUCKETS = (1, 2, 3, 4, 5)
# An event waits for up to 2 × FICHAS_MAX_INTENTOS model calls on a shared GPU: minutes, not ms.
EVENT_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300)
# One model call: a short verdict on an idle server (~50 ms) up to a long ficha under load.
LLM_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 45, 60, 90, 120)


def new_registry() -> CollectorRegistry:
    """A registry of its own with the process, platform and GC collectors.

    Each sensor owns one instead of using the global registry, so several sensors can coexist
    in one process (tests, or a worker restarted in-process) without "Duplicated timeseries".
    """
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry


class Series:
    """Every series of the worker, registered on ``registry``."""

    # Longer than a screen on purpose: one declaration per series, no logic; splitting the
    # list would only scatter what docs/metricas.md lists in one place.
    def __init__(self, registry: CollectorRegistry) -> None:
        r = registry

        self.events = Counter(
            "fichas_events", "Events finished, one per event, by result", ["result"], registry=r
        )
        self.decisiones = Counter(
            "fichas_decisiones",
            "People's decisions the worker handled, by how they ended",
            ["result"],
            registry=r,
        )
        self.attempts = Counter(
            "fichas_attempts", "Generation attempts over all events", registry=r
        )
        self.attempts_per_ficha = Histogram(
            "fichas_attempts_per_ficha",
            "Attempts each ficha needed before publication or manual review",
            buckets=ATTEMPT_BUCKETS,
            registry=r,
        )
        self.rejections = Counter(
            "fichas_rejections",
            "Rejections per criterion and who rejected (codigo|evaluador)",
            ["criterion", "by"],
            registry=r,
        )
        self.verdicts = Counter(
            "fichas_verdicts",
            "Judged attempts by attempt number and whether approved",
            ["attempt", "approved"],
            registry=r,
        )
        self.event_duration = Histogram(
            "fichas_event_duration_seconds",
            "End to end time per event, from receipt to committed outcome",
            buckets=EVENT_BUCKETS,
            registry=r,
        )
        self.node_duration = Histogram(
            "fichas_node_duration_seconds",
            "Duration of each graph node",
            ["node"],
            buckets=EVENT_BUCKETS,
            registry=r,
        )
        self.llm_duration = Histogram(
            "fichas_llm_request_duration_seconds",
            "Duration of each LLM request, failed ones included",
            ["agent"],
            buckets=LLM_BUCKETS,
            registry=r,
        )
        self.llm_errors = Counter(
            "fichas_llm_errors", "Failed LLM requests by kind", ["kind"], registry=r
        )
        self.llm_tokens = Counter(
            "fichas_llm_tokens",
            "Tokens reported by the LLM server",
            ["agent", "type"],
            registry=r,
        )
        self.in_flight = Gauge("fichas_in_flight", "Fichas being processed now", registry=r)
        self.consumer_lag = Gauge(
            "fichas_consumer_lag",
            "Group lag per assigned partition: broker end offset minus committed offset",
            ["topic", "partition"],
            registry=r,
        )
        self.llm_paused = Gauge(
            "fichas_llm_paused", "1 while consumption is paused for the LLM", registry=r
        )
        self.criteria = Info("fichas_criteria", "Loaded criteria version", registry=r)
        self.sample = Counter(
            "fichas_sample", "Published fichas copied to the review sample", registry=r
        )
        self.step_failures = Counter(
            "fichas_step_failures",
            "Failed worker steps (store, graph, produce) by whether the failure is transient",
            ["step", "transient"],
            registry=r,
        )
        self.oldest_age = Gauge(
            "fichas_oldest_event_age_seconds",
            "Age of the oldest event not yet handled, per assigned partition",
            ["topic", "partition"],
            registry=r,
        )
        # The publication gate (docs/puerta.md), per family under the running key: the gate
        # that governs the family now (its own record or the pooled one).
        gate = ["family", "key"]
        self.puerta_umbral = Gauge(
            "fichas_puerta_umbral",
            "Certified threshold (lambda) of the gate in force; NaN while closed",
            gate,
            registry=r,
        )
        self.puerta_abierta = Gauge(
            "fichas_puerta_abierta", "1 while the gate lets fichas be published", gate, registry=r
        )
        self.puerta_n = Gauge(
            "fichas_puerta_n",
            "Approvals at lambda in the gate's calibration data",
            gate,
            registry=r,
        )
        self.puerta_k = Gauge(
            "fichas_puerta_k", "Of those approvals, how many people rejected", gate, registry=r
        )
        self.puerta_cota = Gauge(
            "fichas_puerta_cota_inferior",
            "Online lower confidence bound on the precision, from the gate's state; NaN if none",
            gate,
            registry=r,
        )
        self.sin_garantia = Counter(
            "fichas_sin_garantia",
            "Fichas whose code checks passed but that the gate alone sent to review",
            gate,
            registry=r,
        )
        # v1.6: the blind shadow share of an open gate, and the sample's daily minimum.
        self.sombra = Counter(
            "fichas_sombra",
            "Final fichas an open gate sent to review unpublished, for the blind shadow share",
            gate,
            registry=r,
        )
        self.muestra_minima = Counter(
            "fichas_muestra_minima",
            "Published fichas sampled only as the first of their family that UTC day",
            ["family"],
            registry=r,
        )
        # The evaluator's score, read from the server's log-probabilities (grafo.puntuacion):
        # without them every ficha carries puntuacion null and no gate can ever open.
        self.llm_logprobs = Gauge(
            "fichas_llm_logprobs",
            "Start-up probe: 1 if the LLM gives the evaluator log-probabilities, 0 if not, "
            "NaN until it answered",
            registry=r,
        )
        self.evaluator_scores = Counter(
            "fichas_evaluator_scores",
            "Evaluator answers per family, by whether they carried a score (present|missing)",
            ["family", "score"],
            registry=r,
        )
        # Per family and key, so review alerts can tell a family in shadow mode (gate closed,
        # everything to review by design) from one whose open gate sends too much to review.
        self.outcomes = Counter(
            "fichas_outcomes",
            "Fichas finished per family and gate key: publicada or revision_manual",
            ["family", "key", "result"],
            registry=r,
        )
        self.puerta_sin_certificar = Gauge(
            "fichas_puerta_sin_certificar",
            "1 under FICHAS_PUERTA=veredicto: automatic publications are not certified",
            registry=r,
        )
        self.puerta_retenida = Gauge(
            "fichas_puerta_retenida",
            "1 while a person's hold closes the family's gate (family * : the pooled gate's own)",
            gate,
            registry=r,
        )
        self.puerta_suspendida = Gauge(
            "fichas_puerta_suspendida",
            "1 while every gate is closed because the served model is not verified (start-up, "
            "an LLM outage, until the server says again which model it serves)",
            registry=r,
        )
        self.modelo_servido = Gauge(
            "fichas_modelo_servido_info",
            "1 for the running gate key and the served model identity it names",
            ["key", "modelo_servido"],
            registry=r,
        )
        self.modelo_servido_cambios = Counter(
            "fichas_modelo_servido_cambios",
            "Times the server started serving another model under the running worker",
            registry=r,
        )
        # The candidate loop in shadow (issue 41, stream.candidata.bucle): its runs, its cost in
        # LLM calls, and its key; never counted in the live series above.
        self.candidata_started = Counter(
            "fichas_candidata_started",
            "Candidate runs started beside a live run",
            registry=r,
        )
        self.candidata_skipped = Counter(
            "fichas_candidata_skipped",
            "Events routed to the candidate that got no candidate run, by reason "
            "(budget full, its served model not verified, its key equal to the live key)",
            ["reason"],
            registry=r,
        )
        self.candidata_written = Counter(
            "fichas_candidata_written",
            "Candidate review items written (candidata=true on the review topic)",
            registry=r,
        )
        self.candidata_lost = Counter(
            "fichas_candidata_lost",
            "Candidate runs that wrote nothing, by reason (the worker stopped, a failure)",
            ["reason"],
            registry=r,
        )
        self.candidata_in_flight = Gauge(
            "fichas_candidata_in_flight", "Candidate runs in flight now", registry=r
        )
        self.candidata_llm_calls = Counter(
            "fichas_candidata_llm_calls",
            "LLM calls the candidate made, by agent",
            ["agent"],
            registry=r,
        )
        self.candidata_llm_calls_per_event = Histogram(
            "fichas_candidata_llm_calls_per_event",
            "LLM calls of each finished or lost candidate run",
            buckets=CALLS_BUCKETS,
            registry=r,
        )
        self.candidata_key = Gauge(
            "fichas_candidata_key_info",
            "1 for the candidate's gate key and the served model identity it names",
            ["key", "modelo_servido"],
            registry=r,
        )
