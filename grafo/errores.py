"""How a failed LLM call is classified: transient (retry, never an attempt) or not.

Guarantee 7 of the contract: an unreachable or failing LLM server is retried with backoff and
pauses consumption; it never counts as an attempt and never sends a ficha to manual review.
So everything that says "the server is not answering properly right now" is transient —
connection errors, timeouts, 408, 409, 429, 5xx, and also 401/403/404 (a misconfiguration
that an operator fixes, not a property of the ficha). Only 400 and 422, which the server
returns for a request it will always refuse, are permanent for that ficha.
"""

from __future__ import annotations

from dataclasses import dataclass

import openai

PERMANENT_STATUS = frozenset({400, 422})


class SalidaInvalida(Exception):
    """An agent answered, but not with a valid instance of its schema."""

    def __init__(self, agente: str, detalle: str) -> None:
        super().__init__(f"{agente}: {detalle}")
        self.agente = agente
        self.detalle = detalle[:200]


@dataclass(frozen=True)
class LLMFailure:
    """A classified LLM error: its metric kind, whether to retry, and the server's Retry-After."""

    kind: str  # connection | timeout | rate_limit | server | request
    transient: bool
    retry_after_s: float | None


def classify(exc: BaseException) -> LLMFailure | None:
    """Classify an exception raised by an LLM call; None when it is not an LLM error at all."""
    if isinstance(exc, openai.APITimeoutError):
        return LLMFailure("timeout", True, None)
    if isinstance(exc, openai.APIConnectionError):
        return LLMFailure("connection", True, None)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after(exc)
        if status == 429:
            return LLMFailure("rate_limit", True, retry_after)
        if status >= 500:
            return LLMFailure("server", True, retry_after)
        return LLMFailure("request", status not in PERMANENT_STATUS, retry_after)
    return None


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (Retry-After in seconds), if it said so."""
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
