"""The start-up probe: does the LLM server give the evaluator its log-probabilities?

Without them every ficha's score is null, every ficha goes to review and no gate can open,
and nothing fails to say so. ``probe_logprobs`` sends one request exactly as the loop's
evaluator does (same ``Agentes``) about a fixed ficha (``PROBE_SKU``) and logs one line: nothing
at INFO when they came, an ERROR naming the fix when not, a WARNING when the server could not
be asked. It never raises, the sensor does not see it (the loop's counts stay the fichas'), and
it knows nothing of Prometheus. Each line and what to do: docs/operacion.md, "The LLM".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import openai

from criterios import atributos_obligatorios
from criterios import comprobar as comprobar_ficha
from criterios.vocabulario import mapear_origen
from grafo.agentes import Agentes
from grafo.errores import SalidaInvalida, classify
from grafo.estado import origen_de
from grafo.puntuacion import TOP_LOGPROBS

log = logging.getLogger(__name__)

PROBE_SKU = "SONDEO-LOGPROBS"  # so a recorded request or a server log tells the probe apart
RUNBOOK = "docs/operacion.md, section 'The evaluator's scores are missing'"

Status = Literal["present", "missing", "refused", "no_answer"]

_EVENTO: dict[str, Any] = {
    "sku": PROBE_SKU,
    "familia": "zapatillas",
    "ficha_proveedor": {
        "titulo": "Zapatilla running malla negra",
        "descripcion": "Zapatilla de running con parte superior de malla y suela de goma.",
        "atributos": {"color": "negro", "material": "malla", "talla": "42", "genero": "hombre"},
        "idioma": "es",
    },
    "cifras": {},
}
_FICHA: dict[str, Any] = {
    "titulo": "Zapatilla de running de malla negra para hombre, talla 42",
    "descripcion": (
        "Zapatilla de running para hombre con parte superior de malla transpirable y suela "
        "de goma. Color negro, talla 42."
    ),
    "atributos": {"color": "negro", "material": "malla", "talla": "42", "genero": "hombre"},
}


@dataclass(frozen=True)
class LogprobsProbe:
    """What the probe found. ``logprobs_ok``: True, False, or None (the server was not asked).

    ``status``: ``present`` (tokens with their alternatives came), ``missing`` (an answer
    without them), ``refused`` (the server refused the evaluator's request: HTTP 400/422),
    ``no_answer`` (down, timing out, or an answer that is not the schema). ``puntuacion`` is
    the score read from the answer; ``detalle`` says what was seen, for the log line.
    """

    status: Status
    puntuacion: float | None = None
    detalle: str = ""

    @property
    def logprobs_ok(self) -> bool | None:
        """Whether scores can come from this server: the gauge's value (None: unknown)."""
        if self.status == "present":
            return True
        return None if self.status == "no_answer" else False


def read_logprobs(logprobs: Mapping[str, Any] | None, puntuacion: float | None) -> LogprobsProbe:
    """Classify an evaluator answer's ``logprobs``: a pure function, tested on fixed objects.

    ``present`` needs tokens and, on at least one of them, the ``top_logprobs`` list the score
    is read from. A ``present`` answer may still have no score (the model put less than half
    of its probability on true/false at the verdict token, ``grafo.puntuacion.MASA_MINIMA``):
    that is one ficha's answer, not the server's setting, and the runtime counter watches it.
    """
    content = logprobs.get("content") if isinstance(logprobs, Mapping) else None
    tokens = [t for t in content if isinstance(t, Mapping)] if isinstance(content, list) else []
    if not tokens:
        return LogprobsProbe("missing", puntuacion, "the answer carries no log-probabilities")
    if not any(isinstance(t.get("top_logprobs"), list) and t["top_logprobs"] for t in tokens):
        detalle = "the answer's log-probabilities come without their top_logprobs alternatives"
        return LogprobsProbe("missing", puntuacion, detalle)
    return LogprobsProbe("present", puntuacion, f"{len(tokens)} tokens with alternatives")


async def probe_logprobs(agentes: Agentes, url: str, modelo: str) -> LogprobsProbe:
    """Ask the evaluator once, as the loop does, and log one line on what came back.

    Never raises (``asyncio.CancelledError`` aside): a probe that fails says so and the
    worker goes on.
    """
    try:
        origen = origen_de(_EVENTO, atributos_obligatorios(_EVENTO["familia"]))
        comprobaciones = comprobar_ficha(_FICHA, origen)
        mapeado = mapear_origen(origen).origen
        evaluacion, logprobs = await agentes.sondear(_FICHA, comprobaciones, mapeado)
    except SalidaInvalida as exc:
        result = _refused(exc)
    except Exception as exc:  # the probe must never stop the worker
        failure = classify(exc)
        cause = failure.cause if failure is not None else f"{type(exc).__name__}: {exc}"
        result = LogprobsProbe("no_answer", None, cause)
    else:
        result = read_logprobs(logprobs, evaluacion.puntuacion)
    _log_line(result, url, modelo)
    return result


def _refused(exc: SalidaInvalida) -> LogprobsProbe:
    """A refused request (HTTP 400/422) is ``refused``; an answer off the schema, ``no_answer``."""
    cause = exc.__cause__
    if isinstance(cause, openai.APIStatusError):
        message = str(getattr(cause, "message", "") or cause)[:300]
        return LogprobsProbe("refused", None, f"HTTP {cause.status_code}: {message}")
    return LogprobsProbe("no_answer", None, f"an answer that is not the schema ({exc.detalle})")


def _log_line(result: LogprobsProbe, url: str, modelo: str) -> None:
    """The probe's one line: INFO, ERROR with the fix, or WARNING that it could not tell."""
    extra = {"llm_url": url, "sondeo": result.status}
    if result.status == "present":
        log.info(
            "LLM at %s (model %s) gives the evaluator log-probabilities (%s; score of the "
            "probe ficha %s)",
            url,
            modelo,
            result.detalle,
            "none" if result.puntuacion is None else f"{result.puntuacion:.2f}",
            extra=extra,
        )
        return
    if result.status == "no_answer":
        log.warning(
            "could not probe the LLM at %s (model %s) for log-probabilities at start-up: %s; "
            "going on (the worker waits for the LLM as usual); "
            'fichas_evaluator_scores_total{score="missing"} will show whether scores come',
            url,
            modelo,
            result.detalle,
            extra=extra,
        )
        return
    log.error(
        "LLM at %s (model %s): %s, so every ficha gets puntuacion null, goes to review "
        "without a score, and no publication gate can ever open. Fix the server: it must "
        "answer chat completions with logprobs=true and top_logprobs=%d (vLLM does unless "
        "started with --max-logprobs below %d; a proxy or gateway in between must pass the "
        "'logprobs' field through); see %s",
        url,
        modelo,
        _what(result),
        TOP_LOGPROBS,
        TOP_LOGPROBS,
        RUNBOOK,
        extra=extra,
    )


def _what(result: LogprobsProbe) -> str:
    """The first clause of the ERROR line: what the server did."""
    if result.status == "refused":
        return f"the server refused the evaluator's request with logprobs ({result.detalle})"
    return result.detalle
