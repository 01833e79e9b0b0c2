"""What the fake LLM answers: the ficha, the verdict or rubric, their logprobs, the HTTP body.

Pure functions of the scripted step and of what ``prompt_contract`` read from the request; the
server decides when to answer, these decide what. Log-probabilities: with ``"logprobs": true``
every token of the answer gets ``bytes`` and exactly the request's number of ``top_logprobs``,
as vLLM and llama.cpp send them (fillers no reader takes for a boolean). Every token is certain
except the JSON booleans: there the model is 0.95 sure of the word it wrote, 2 % of the mass
goes to a token a grammar would forbid (``"``, as llama.cpp reports before the grammar), and the
rest to the other word. An evaluator step may script the score instead (``{"accion": "aprobar",
"puntuacion": 0.83}`` makes P(aprobada = true) 0.83; for the rubric, each question's P(falla =
false) is 0.83^(1/3), so their product is 0.83); ``"puntuacion": null`` answers with
``"logprobs": null``, a server that gives none.

The quoter (``citas``) gets per claim the allowed fragment sharing most figures or words of 4+
letters with it ("" if none) and ``respaldada`` true if it quoted one; ``rechazar`` leaves the
last claim unquoted. A scripted score is P(respaldada = true) at every claim.
"""

from __future__ import annotations

import json
import math
import re
import time
import unicodedata
from typing import Any

from aiohttp import web

from harness.fake_llm.prompt_contract import (
    GENERATOR,
    QUOTE_FIELD,
    QUOTES_PROPERTY,
    RUBRIC_ANSWER_FIELDS,
    RUBRIC_QUESTIONS,
    SUPPORTED_FIELD,
    VERDICT_PROPERTY,
    message_text,
    required_supplier_attributes,
)
from harness.fake_llm.script import UNSCRIPTED, Step

MODEL_NAME = "fake-llm"

# What ``/v1/models`` says the server serves, in vLLM's shape: the served name (``id``), the
# weights it loaded (``root``), the context length and, for a LoRA adapter, its ``parent``.
# Changeable at run time (``POST /_admin/identity``), so a test can swap "weights" under the
# same name as a vLLM restarted on other files would.
DEFAULT_IDENTITY: dict[str, Any] = {
    "id": MODEL_NAME,
    "owned_by": "vllm",
    "root": "fichas/fake-llm-weights",
    "max_model_len": 32768,
    "parent": None,
}


def identity_error(identity: Any) -> str | None:
    """Why ``identity`` cannot be served (None when it can): fields of ``DEFAULT_IDENTITY``
    only, text ones non-empty, ``max_model_len`` a positive integer, ``parent`` text or null."""
    if not isinstance(identity, dict):
        return "the identity must be a JSON object"
    unknown = sorted(set(identity) - set(DEFAULT_IDENTITY))
    if unknown:
        return f"unknown identity fields {unknown}; known: {sorted(DEFAULT_IDENTITY)}"
    for name in ("id", "owned_by", "root"):
        if name in identity and (not isinstance(identity[name], str) or not identity[name]):
            return f"{name} must be a non-empty string"
    length = identity.get("max_model_len", 1)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        return "max_model_len must be a positive integer"
    if identity.get("parent") is not None and not isinstance(identity["parent"], str):
        return "parent must be a string or null"
    return None


def models_body(identity: dict[str, Any], created: int) -> dict[str, Any]:
    """The ``/v1/models`` answer for one served model, as vLLM writes it (``created`` and the
    permission's id change at every start of a real server: the key must ignore them)."""
    model = {**DEFAULT_IDENTITY, **identity}
    permission = {
        "id": f"modelperm-{created}",
        "object": "model_permission",
        "created": created,
        "allow_create_engine": False,
        "allow_sampling": True,
        "allow_logprobs": True,
        "allow_search_indices": False,
        "allow_view": True,
        "allow_fine_tuning": False,
        "organization": "*",
        "group": None,
        "is_blocking": False,
    }
    entry = {"object": "model", "created": created, "permission": [permission], **model}
    return {"object": "list", "data": [entry]}


# Statuses that real servers (vLLM behind a proxy, OpenAI) send with a Retry-After header.
RETRY_AFTER_STATUSES = frozenset({429, 503})

NEUTRAL_DESCRIPTION = (
    "Artículo presentado con la información facilitada por el proveedor. "
    "Sus características principales se recogen en los atributos de la ficha."
)
REJECTION_DETAIL = "La descripción repite el título."
BROKEN_JSON = '{"esto no es": JSON válido'
LONG_TITLE_LENGTH = 90

# Logprobs: how the answer is cut in tokens, and what the unscripted model believes.
TOKEN_PATTERN = re.compile(r"\s?\w+|\s?[^\w\s]|\s+")
KEY_BEFORE_PATTERN = re.compile(r'"(\w+)"\s*:\s*$')
CONFIDENCE = 0.95  # P(the boolean written) when no score is scripted
FORBIDDEN_MASS = 0.02  # P of a token the grammar forbids, reported as llama.cpp does
FILLER_TOKEN = "~alt"  # the alternatives that fill top_logprobs up to the number asked for
FILLER_PROBABILITY = 1e-9
CITA, FALLA = RUBRIC_ANSWER_FIELDS

ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout",
    422: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "internal_server_error",
    502: "bad_gateway",
    503: "service_unavailable",
    504: "gateway_timeout",
}


def generator_content(action: str, sku: str, prompt: str) -> str:
    """Ficha for a generador action; `valida` passes every code-checked criterion.

    `valida` copies only the required attributes the supplier gave, and its description
    has no figures, so C01, C02, C03, C05 (mechanical part) and C07 hold for any origin.
    """
    attributes = required_supplier_attributes(prompt)
    ficha: dict[str, Any] = {
        "titulo": f"Producto {sku}",
        "descripcion": NEUTRAL_DESCRIPTION,
        "atributos": attributes,
    }
    if action == "titulo_largo":
        ficha["titulo"] = (f"Producto {sku} " + "x" * LONG_TITLE_LENGTH)[:LONG_TITLE_LENGTH]
    elif action == "sin_atributos":
        ficha["atributos"] = {}
    return json.dumps(ficha, ensure_ascii=False)


def evaluator_content(action: str, rubric: bool = False) -> str:
    """The verdict for an evaluador action; the rubric's answers when it asked for the rubric.

    A rejection names C06 unless the action names a criterion (``rechazar:C04``); in the
    rubric, C04, C05 and C06 are the questions inventa, publicidad and vacia.
    """
    criterion = action.removeprefix("rechazar:") if action.startswith("rechazar:") else "C06"
    if rubric:
        failing = None if action == "aprobar" else RUBRIC_QUESTIONS.get(criterion, "vacia")
        answer = {
            question: {
                CITA: REJECTION_DETAIL if question == failing else "",
                FALLA: question == failing,
            }
            for question in RUBRIC_QUESTIONS.values()
        }
        return json.dumps(answer, ensure_ascii=False)
    if action == "aprobar":
        return json.dumps({"aprobada": True, "problemas": []})
    problem = {"criterio": criterion, "detalle": REJECTION_DETAIL}
    return json.dumps({"aprobada": False, "problemas": [problem]}, ensure_ascii=False)


def quotes_content(action: str, claims: list[str], fragments: list[str]) -> str:
    """The quoter's answer: per claim, the fragment sharing most words with it, or ""."""
    answers = []
    for index, claim in enumerate(claims):
        words = _words(claim)
        best = max(fragments, key=lambda f: len(words & _words(f)), default="")
        quote = best if best and words & _words(best) else ""
        if action != "aprobar" and index == len(claims) - 1:
            quote = ""
        answers.append({QUOTE_FIELD: quote, SUPPORTED_FIELD: bool(quote)})
    return json.dumps({QUOTES_PROPERTY: answers}, ensure_ascii=False)


def _words(text: str) -> set[str]:
    """Lower-case words of four letters or more, without accents, and figures."""
    plain = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(c for c in plain if not unicodedata.combining(c))
    words = {w for w in re.findall(r"[^\W\d_]+", plain) if len(w) >= 4}
    return words | set(re.findall(r"\d+", plain))


def content_for(
    action: str,
    agent: str,
    sku: str,
    prompt: str,
    rubric: bool = False,
    quoting: tuple[list[str], list[str]] | None = None,
) -> str:
    if action == "json_roto":
        return BROKEN_JSON
    if action.startswith("texto:"):
        return action.removeprefix("texto:")
    if agent == GENERATOR:
        return generator_content(action, sku, prompt)
    if quoting is not None:
        return quotes_content(action, *quoting)
    return evaluator_content(action, rubric)


def _token_entry(text: str, probability: float) -> dict[str, Any]:
    """One token as the OpenAI API reports it: text, log-probability and UTF-8 bytes."""
    return {
        "token": text,
        "logprob": math.log(max(probability, 1e-12)),
        "bytes": list(text.encode("utf-8")),
    }


def logprobs_for(content: str, step: Step, top_n: int) -> dict[str, Any] | None:
    """``choices[0].logprobs`` for an answer: every token certain but the JSON booleans.

    At a boolean the alternatives are the two words (with the token's own leading space) and
    ``"``, which a grammar forbids. P(true) is the scripted score for ``aprobada``, and
    ``1 - score^(1/k)`` for each of the rubric's k ``falla`` (so the product of P(no failure)
    is the score); unscripted, or for any other key, the word written has ``CONFIDENCE``.
    A step scripted with ``"puntuacion": null`` gets None: a server that gives no logprobs.
    """
    if step.scored and step.puntuacion is None:
        return None
    tokens: list[tuple[int, str]] = []
    position = 0
    for match in TOKEN_PATTERN.finditer(content):
        tokens.append((match.start(), match.group()))
        position = match.end()
    if position < len(content):  # the pattern covers any text; this is belt and braces
        tokens.append((position, content[position:]))
    keys = [_key_before(content, start, text) for start, text in tokens]
    falla = sum(1 for key in keys if key == FALLA)
    entries = []
    for (_, text), key in zip(tokens, keys, strict=True):
        if key is None:
            entry = _token_entry(text, 1.0)
            entry["top_logprobs"] = _padded([_token_entry(text, 1.0)], top_n)
            entries.append(entry)
            continue
        written_true = text.strip() == "true"
        p_true = CONFIDENCE if written_true else 1 - CONFIDENCE
        if (
            step.scored
            and step.puntuacion is not None
            and key in (VERDICT_PROPERTY, SUPPORTED_FIELD)
        ):
            p_true = step.puntuacion
        elif step.scored and step.puntuacion is not None and key == FALLA:
            p_true = 1 - step.puntuacion ** (1 / falla)
        lead = text[: len(text) - len(text.lstrip())]
        usable = 1 - FORBIDDEN_MASS
        alternatives = {
            lead + "true": usable * p_true,
            lead + "false": usable * (1 - p_true),
            lead + '"': FORBIDDEN_MASS,
        }
        entry = _token_entry(text, alternatives[text])
        ranked = sorted(alternatives.items(), key=lambda item: -item[1])
        entry["top_logprobs"] = _padded([_token_entry(t, p) for t, p in ranked], top_n)
        entries.append(entry)
    return {"content": entries, "refusal": None}


def _padded(alternatives: list[dict[str, Any]], top_n: int) -> list[dict[str, Any]]:
    """The first ``top_n`` alternatives, filled up to ``top_n`` as a real server fills them:
    with unlikely tokens (``FILLER_PROBABILITY`` each) that are neither boolean nor JSON."""
    filler = [
        _token_entry(f"{FILLER_TOKEN}{i}", FILLER_PROBABILITY)
        for i in range(max(0, top_n - len(alternatives)))
    ]
    return (alternatives + filler)[:top_n]


def _key_before(content: str, start: int, text: str) -> str | None:
    """The key whose value a boolean token starts, or None for any other token."""
    if text.strip() not in ("true", "false"):
        return None
    match = KEY_BEFORE_PATTERN.search(content[:start] + text[: len(text) - len(text.lstrip())])
    return match.group(1) if match else None


def truncated(content: str, max_tokens: Any) -> tuple[str, str]:
    """The answer cut at ``max_tokens`` tokens (the logprobs' tokenization), and why it ended.

    As vLLM does: an answer longer than ``max_tokens`` stops there, mid-JSON if it must, with
    ``finish_reason`` "length" (guided decoding does not close the object for it); else the
    whole answer and "stop". Nothing the loop sends is that short (``FICHAS_LLM_MAX_TOKENS``,
    1024), so only a caller that asks for a few tokens on purpose meets it.
    """
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens <= 0:
        return content, "stop"
    tokens = TOKEN_PATTERN.findall(content)
    if len(tokens) <= max_tokens or "".join(tokens) != content:
        return content, "stop"
    return "".join(tokens[:max_tokens]), "length"


def _approx_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def completion_body(
    body: dict[str, Any], content: str, number: int, step: Step | None = None
) -> dict[str, Any]:
    messages = body.get("messages")
    prompt_chars = (
        "".join(message_text(m) for m in messages if isinstance(m, dict))
        if isinstance(messages, list)
        else ""
    )
    prompt_tokens = _approx_tokens(prompt_chars)
    content, finish_reason = truncated(content, body.get("max_tokens"))
    completion_tokens = _approx_tokens(content)
    logprobs = None
    if body.get("logprobs") is True:
        top_n = body.get("top_logprobs")
        top_n = top_n if isinstance(top_n, int) and not isinstance(top_n, bool) else 0
        logprobs = logprobs_for(content, step or UNSCRIPTED, max(0, top_n))
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or MODEL_NAME),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish_reason,
                "logprobs": logprobs,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def error_response(status: int, message: str) -> web.Response:
    """OpenAI-style error body; 429 and 503 carry Retry-After like real servers do."""
    headers = {"Retry-After": "1"} if status in RETRY_AFTER_STATUSES else None
    payload = {
        "error": {
            "message": message,
            "type": ERROR_TYPES.get(status, "server_error" if status >= 500 else "invalid_request"),
            "param": None,
            "code": status,
        }
    }
    return web.json_response(payload, status=status, headers=headers)
