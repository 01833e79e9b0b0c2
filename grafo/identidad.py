"""Which model answers: the identity the LLM server reports for the name the loop calls.

``leer_modelo_servido`` asks the server's own ``/v1/models`` (a plain GET with the API key, by
the ``openai`` client, bounded by ``LEER_S``) and reduces the answer to the key's canonical
``modelo_servido`` text (``grafo.fuente_puerta.modelo_servido``: vLLM's ``root`` and
``max_model_len``, llama.cpp's file and metadata). ``clasificar`` says what a failed read means:
the server is down (transient, as for a chat call: retry with the LLM's backoff), or it answers
but cannot say what it serves (a gateway without ``/v1/models``, an answer that is not a model
list): then the key says ``SIN_IDENTIDAD``, which no gate certified on a known identity
matches. Invariant: the text depends only on what the server says of its weights, never on the
time of the answer. Why the key holds it, and its limits: docs/puerta.md, "The key".
"""

from __future__ import annotations

from dataclasses import dataclass

import openai

from grafo.chat_model import LLMSettings
from grafo.errores import classify
from grafo.fuente_puerta import modelo_servido

LEER_S = 10.0  # one read of /v1/models: a server that takes longer is treated as down
SIN_IDENTIDAD = "sin_identidad"
"""``modelo_servido`` of a server that answers but does not say what it serves."""


async def leer_modelo_servido(llm: LLMSettings, timeout_s: float = LEER_S) -> str:
    """The served model's identity for ``llm.model``, from ``GET {llm.url}/models``.

    Raises the ``openai`` client's errors (connection, timeout, HTTP status) as a chat call
    does, and ``ValueError`` when the answer is not a model list naming the model.
    """
    client = openai.AsyncOpenAI(
        base_url=llm.url, api_key=llm.api_key, max_retries=0, timeout=timeout_s
    )
    try:
        respuesta = await client.get("/models", cast_to=object)
    finally:
        await client.close()
    return modelo_servido(respuesta, llm.model)


@dataclass(frozen=True)
class FalloLectura:
    """Why a read failed: ``transitorio`` (the server is down: retry) or not (it cannot say)."""

    transitorio: bool
    causa: str
    retry_after_s: float | None = None


# Statuses that say the server has no ``/v1/models`` at all (a gateway in front of the model):
# waiting does not bring it, unlike a 401 or 404 on the chat route (``grafo.errores``).
SIN_RUTA = frozenset({404, 405, 501})


def clasificar(exc: Exception) -> FalloLectura:
    """What a failed ``leer_modelo_servido`` means, in the words of ``grafo.errores``; a server
    without the route (``SIN_RUTA``) or with an answer that is no model list cannot say."""
    fallo = classify(exc)
    if isinstance(exc, openai.APIStatusError) and exc.status_code in SIN_RUTA:
        return FalloLectura(False, f"no /v1/models route ({fallo.cause if fallo else exc})")
    if fallo is not None:
        return FalloLectura(fallo.transient, fallo.cause, fallo.retry_after_s)
    return FalloLectura(False, f"{type(exc).__name__}: {exc}")
