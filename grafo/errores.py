"""How a failed LLM call is classified: transient (retry, never an attempt) or not.

Guarantee 7 of the contract: everything that says "the server is not answering properly now"
is transient (connection errors, timeouts, 408, 409, 429, 5xx, and 401/403/404, which an
operator fixes); only 400 and 422, a request the server will always refuse, are permanent for
that ficha. The kind (a metric label) and the cause (what a person reads) come from the whole
chain of exceptions, since the aiohttp transport and openai turn a refused connection into
"Request timed out." while the original ``OSError`` stays in the chain. docs/operacion.md,
"The LLM".
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
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
    cause: str = ""  # for people: "connection refused", "HTTP 401 Unauthorized ...", ...


def classify(exc: BaseException) -> LLMFailure | None:
    """Classify an exception raised by an LLM call; None when it is not an LLM error at all."""
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError is a subclass
        return _network_failure(exc)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        retry_after = _retry_after(exc)
        cause = _status_cause(status)
        if status == 429:
            return LLMFailure("rate_limit", True, retry_after, cause)
        if status >= 500:
            return LLMFailure("server", True, retry_after, cause)
        return LLMFailure("request", status not in PERMANENT_STATUS, retry_after, cause)
    return None


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and its causes (explicit first, else implicit), without loops."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _network_failure(exc: openai.APIConnectionError) -> LLMFailure:
    """Refused, DNS, reset, closed or a real timeout, read from the original errors."""
    links = list(_chain(exc))
    for link in links:  # the most specific cause first, wherever it is in the chain
        if isinstance(link, ConnectionRefusedError):
            return LLMFailure("connection", True, None, "connection refused")
        if isinstance(link, socket.gaierror):
            return LLMFailure("connection", True, None, f"DNS lookup failed ({link.strerror})")
        if type(link).__name__ == "ServerDisconnectedError":
            return LLMFailure("connection", True, None, "the server closed the connection")
    for link in links:
        if isinstance(link, TimeoutError) or type(link).__name__ in _TIMEOUT_NAMES:
            return LLMFailure("timeout", True, None, f"no answer in time ({_text(link)})")
        if isinstance(link, OSError) and link.errno is not None:
            return LLMFailure("connection", True, None, f"network error: {link.strerror}")
    if isinstance(exc, openai.APITimeoutError):
        return LLMFailure("timeout", True, None, "no answer in time")
    return LLMFailure("connection", True, None, f"connection error ({_text(exc)})")


# aiohttp's and httpx's timeout classes, by name: neither package is imported here.
_TIMEOUT_NAMES = frozenset(
    {
        "SocketTimeoutError",
        "ConnectionTimeoutError",
        "ServerTimeoutError",
        "ReadTimeout",
        "WriteTimeout",
        "PoolTimeout",
    }
)


def _text(exc: BaseException) -> str:
    """The exception's message, or its class name when it has none."""
    return str(exc) or type(exc).__name__


def _status_cause(status: int) -> str:
    """What an HTTP status from the LLM server means for the operator."""
    if status == 401:
        return (
            "HTTP 401 Unauthorized: check FICHAS_LLM_API_KEY "
            "(or its file, FICHAS_LLM_API_KEY_ARCHIVO)"
        )
    if status == 403:
        return "HTTP 403 Forbidden: check FICHAS_LLM_API_KEY (or its file) and its permissions"
    if status == 404:
        return (
            "HTTP 404 Not Found: check FICHAS_LLM_URL (usually ends in /v1) and FICHAS_LLM_MODELO"
        )
    if status == 429:
        return "HTTP 429 Too Many Requests: the server is rate limiting"
    if status >= 500:
        return f"HTTP {status}: server error"
    return f"HTTP {status}"


def _retry_after(exc: openai.APIStatusError) -> float | None:
    """Seconds the server asked us to wait (Retry-After in seconds), if it said so."""
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None
