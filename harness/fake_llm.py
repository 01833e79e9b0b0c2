"""Scriptable OpenAI-compatible LLM server for tests and benchmarks.

Why a real HTTP process instead of a mock object: the processor talks to vLLM through
`ChatOpenAI` and the `openai` client, with their own retries, timeouts, connection pools
and error classes. Only a real socket exercises those paths (429 with Retry-After, a server
that hangs, a server that drops the connection, a server that dies and comes back).

Run it as `python -m harness.fake_llm --host 127.0.0.1 --port 0 [--config FILE] [--record FILE]`.
It prints one line `LISTENING http://127.0.0.1:<port>/v1` to stdout once it accepts
connections; everything else goes to stderr.

Which agent is calling is read from the JSON schema of `response_format` (a property
`aprobada` means the evaluador, a property `titulo` means the generador) and the SKU from the
last user message. What the server answers is scripted per agent and SKU by a JSON config:

    {"latency_ms": 0, "latency_jitter_ms": 0, "max_parallel": 0,
     "default": {"generador": ["valida"], "evaluador": ["aprobar"]},
     "rules": [{"sku": "<regex, fullmatch>", "generador": [...], "evaluador": [...],
                "latency_ms": 250}]}

A script list is indexed by how many requests of that agent the server has already taken for
that SKU (0-based); past the end the last item repeats. See `ACTIONS_HELP` for the actions.

Log-probabilities: a request with `"logprobs": true` gets `choices[0].logprobs.content`, one
entry per token of the answer (words with their leading space, punctuation apart), each with
`bytes` and `top_logprobs` (as many as the request's `top_logprobs`). Every token is certain
except the JSON booleans: there the model is 0.95 sure of the word it wrote, 2 % of the mass
goes to a token a grammar would forbid (`"`, as llama.cpp reports before the grammar), and the
rest to the other word. An evaluator step may script the score instead, as an object:
`{"accion": "aprobar", "puntuacion": 0.83}` makes P(aprobada = true) 0.83 (for the rubric,
each question's P(falla = false) is 0.83^(1/3), so their product is 0.83);
`"puntuacion": null` answers with `"logprobs": null`, a server that gives none.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import json
import logging
import math
import os
import random
import re
import signal
import socket
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from aiohttp import web

LOG = logging.getLogger("fake_llm")

GENERATOR = "generador"
EVALUATOR = "evaluador"
AGENTS = (GENERATOR, EVALUATOR)

MODEL_NAME = "fake-llm"
SKU_PATTERN = re.compile(r'"sku"\s*:\s*"([^"]+)"')
JSON_BLOCK_PATTERN = re.compile(r"```json\s*\n(.*?)\n?```", re.DOTALL)

# Statuses that real servers (vLLM behind a proxy, OpenAI) send with a Retry-After header.
RETRY_AFTER_STATUSES = frozenset({429, 503})
DOWN_MODES = ("503", "close", "hang")

ACTIONS_HELP = """\
generador: valida | titulo_largo | sin_atributos
evaluador: aprobar | rechazar | rechazar:<CRITERIO>  (the rubric's answer when it asks for one)
both:      json_roto | texto:<literal content> | error:<http status> | colgar | cerrar
score:     an evaluador step {"accion": "aprobar", "puntuacion": 0.83} scripts the logprobs
           of a request with logprobs=true: P(aprobada = true) = 0.83; "puntuacion": null
           answers "logprobs": null. Unscripted: 0.95 sure of the word written."""

GENERATOR_ACTIONS = frozenset({"valida", "titulo_largo", "sin_atributos"})
EVALUATOR_ACTIONS = frozenset({"aprobar", "rechazar"})
COMMON_ACTIONS = frozenset({"json_roto", "colgar", "cerrar"})
PREFIXED_ACTIONS = ("texto:", "error:")

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
RUBRIC_QUESTIONS = {"C04": "inventa", "C05": "publicidad", "C06": "vacia"}

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


class ConfigError(ValueError):
    """A config that cannot be scripted; raised early so a typo fails the test that made it."""


# --------------------------------------------------------------------------- config


@dataclass(frozen=True)
class Step:
    """One scripted answer: the action, and for the evaluator optionally its score."""

    action: str
    scored: bool = False  # whether the config set "puntuacion" (which may be null)
    puntuacion: float | None = None


@dataclass(frozen=True)
class Rule:
    """Per-SKU override of the default scripts (and optionally of the latency)."""

    pattern: re.Pattern[str]
    scripts: dict[str, list[Step]]
    latency_ms: float | None


@dataclass(frozen=True)
class Config:
    """Validated form of the JSON config; `raw` is what `GET /_admin/config` shows."""

    raw: dict[str, Any]
    latency_ms: float
    latency_jitter_ms: float
    max_parallel: int
    default: dict[str, list[Step]]
    rules: list[Rule]

    def scripts_for(self, sku: str) -> tuple[dict[str, list[Step]], float]:
        """Return the scripts and latency for `sku`: the first matching rule wins per agent."""
        scripts = dict(self.default)
        latency = self.latency_ms
        for rule in self.rules:
            if rule.pattern.fullmatch(sku):
                for agent, script in rule.scripts.items():
                    scripts[agent] = script
                if rule.latency_ms is not None:
                    latency = rule.latency_ms
                break
        return scripts, latency


DEFAULT_CONFIG: dict[str, Any] = {
    "latency_ms": 0,
    "latency_jitter_ms": 0,
    "max_parallel": 0,
    "default": {GENERATOR: ["valida"], EVALUATOR: ["aprobar"]},
    "rules": [],
}


def _check_step(agent: str, item: Any, where: str) -> Step:
    """A script item: an action string, or for the evaluator {"accion", "puntuacion"}."""
    if not isinstance(item, dict):
        return Step(_check_action(agent, item, where))
    if agent != EVALUATOR or set(item) != {"accion", "puntuacion"}:
        raise ConfigError(
            f"{where}: an object step is an evaluador's "
            '{"accion": <action>, "puntuacion": <0..1 or null>}'
        )
    puntuacion = item["puntuacion"]
    if puntuacion is not None and (
        isinstance(puntuacion, bool)
        or not isinstance(puntuacion, int | float)
        or not 0 <= puntuacion <= 1
    ):
        raise ConfigError(f"{where}.puntuacion must be a number in [0, 1] or null")
    action = _check_action(agent, item["accion"], f"{where}.accion")
    return Step(action, True, None if puntuacion is None else float(puntuacion))


def _check_action(agent: str, action: Any, where: str) -> str:
    if not isinstance(action, str):
        raise ConfigError(f"{where}: action must be a string, got {action!r}")
    allowed = COMMON_ACTIONS | (GENERATOR_ACTIONS if agent == GENERATOR else EVALUATOR_ACTIONS)
    if action in allowed:
        return action
    if action.startswith("rechazar:") and agent == EVALUATOR:
        if not action.removeprefix("rechazar:"):
            raise ConfigError(f"{where}: 'rechazar:' needs a criterion id, e.g. rechazar:C04")
        return action
    if action.startswith("texto:"):
        return action
    if action.startswith("error:"):
        status = action.removeprefix("error:")
        if not status.isdigit() or not 400 <= int(status) <= 599:
            raise ConfigError(f"{where}: {action!r} needs an HTTP status 400-599")
        return action
    raise ConfigError(f"{where}: unknown action {action!r} for {agent}; known:\n{ACTIONS_HELP}")


def _check_script(agent: str, script: Any, where: str) -> list[Step]:
    if isinstance(script, str | dict):
        script = [script]
    if not isinstance(script, list) or not script:
        raise ConfigError(f"{where}: script must be a non-empty list of actions")
    return [_check_step(agent, item, f"{where}[{i}]") for i, item in enumerate(script)]


def _check_number(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ConfigError(f"{where} must be a number >= 0, got {value!r}")
    return float(value)


def parse_config(data: Any) -> Config:
    """Validate a config object; missing keys take `DEFAULT_CONFIG` values.

    The posted object replaces the whole config (no deep merge), so what a test posts is
    exactly what runs, whatever an earlier test configured.
    """
    if not isinstance(data, dict):
        raise ConfigError("config must be a JSON object")
    unknown = set(data) - set(DEFAULT_CONFIG)
    if unknown:
        raise ConfigError(f"unknown config keys: {sorted(unknown)}")
    raw = {**DEFAULT_CONFIG, **data}
    max_parallel = raw["max_parallel"]
    if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 0:
        raise ConfigError(f"max_parallel must be an integer >= 0, got {max_parallel!r}")

    default_raw = raw["default"]
    if not isinstance(default_raw, dict) or set(default_raw) - set(AGENTS):
        raise ConfigError(f"default must be an object with keys among {list(AGENTS)}")
    default = {
        agent: _check_script(
            agent, default_raw.get(agent, DEFAULT_CONFIG["default"][agent]), f"default.{agent}"
        )
        for agent in AGENTS
    }

    rules: list[Rule] = []
    if not isinstance(raw["rules"], list):
        raise ConfigError("rules must be a list")
    for i, rule_raw in enumerate(raw["rules"]):
        where = f"rules[{i}]"
        if not isinstance(rule_raw, dict) or not isinstance(rule_raw.get("sku"), str):
            raise ConfigError(f"{where} must be an object with a string 'sku' regex")
        extra = set(rule_raw) - {"sku", "latency_ms", *AGENTS}
        if extra:
            raise ConfigError(f"{where}: unknown keys {sorted(extra)}")
        try:
            pattern = re.compile(rule_raw["sku"])
        except re.error as exc:
            raise ConfigError(f"{where}.sku is not a valid regex: {exc}") from exc
        scripts = {
            agent: _check_script(agent, rule_raw[agent], f"{where}.{agent}")
            for agent in AGENTS
            if agent in rule_raw
        }
        latency = rule_raw.get("latency_ms")
        rules.append(
            Rule(
                pattern=pattern,
                scripts=scripts,
                latency_ms=None if latency is None else _check_number(latency, where),
            )
        )

    return Config(
        raw=raw,
        latency_ms=_check_number(raw["latency_ms"], "latency_ms"),
        latency_jitter_ms=_check_number(raw["latency_jitter_ms"], "latency_jitter_ms"),
        max_parallel=max_parallel,
        default=default,
        rules=rules,
    )


# --------------------------------------------------------------------------- concurrency


class ParallelLimiter:
    """FIFO gate for `max_parallel` whose limit can change while requests wait.

    `asyncio.Semaphore` cannot be resized, and a config posted at run time must take
    effect on the queue already waiting. Release is synchronous so it is safe in the
    `finally` of a handler that aiohttp is cancelling.
    """

    def __init__(self, limit: Callable[[], int]) -> None:
        self._limit = limit
        self._waiters: deque[asyncio.Future[None]] = deque()
        self.active = 0
        self.peak = 0

    @property
    def queued(self) -> int:
        return sum(1 for waiter in self._waiters if not waiter.done())

    def _has_room(self) -> bool:
        limit = self._limit()
        return limit == 0 or self.active < limit

    def _enter(self) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)

    async def acquire(self) -> None:
        if not self._waiters and self._has_room():
            self._enter()
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release()  # granted and cancelled at once: hand the slot on
            else:
                with contextlib.suppress(ValueError):
                    self._waiters.remove(waiter)
            raise

    def release(self) -> None:
        self.active -= 1
        self.wake()

    def wake(self) -> None:
        """Let queued requests in while there is room (after a release or a new limit)."""
        while self._waiters and self._has_room():
            waiter = self._waiters.popleft()
            if not waiter.done():
                self._enter()
                waiter.set_result(None)

    def reset_peak(self) -> None:
        self.peak = self.active


# --------------------------------------------------------------------------- answers


def _json_block(text: str) -> dict[str, Any] | None:
    """The first ```json fenced object of a prompt, or None when there is none."""
    for match in JSON_BLOCK_PATTERN.finditer(text):
        with contextlib.suppress(ValueError):
            value = json.loads(match.group(1))
            if isinstance(value, dict):
                return value
    return None


def _message_text(message: dict[str, Any]) -> str:
    """Text of a chat message whose content may be a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


def _last_user_text(body: dict[str, Any]) -> str:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return ""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _message_text(message)
    return ""


def detect_agent(body: dict[str, Any]) -> str | None:
    """Tell the generador from the evaluador by the properties of the requested schema."""
    response_format = body.get("response_format")
    if not isinstance(response_format, dict):
        return None
    json_schema = response_format.get("json_schema")
    schema = json_schema.get("schema") if isinstance(json_schema, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return None
    if "aprobada" in properties or "inventa" in properties:  # verdict, or the rubric
        return EVALUATOR
    if "titulo" in properties:
        return GENERATOR
    return None


def detect_sku(body: dict[str, Any]) -> str | None:
    match = SKU_PATTERN.search(_last_user_text(body))
    return match.group(1) if match else None


def generator_content(action: str, sku: str, prompt: str) -> str:
    """Ficha for a generador action; `valida` passes every code-checked criterion.

    `valida` copies only the required attributes the supplier gave, and its description
    has no figures, so C01, C02, C03, C05 (mechanical part) and C07 hold for any origin.
    """
    origin = _json_block(prompt) or {}
    supplier = origin.get("ficha_proveedor")
    supplier_attributes = supplier.get("atributos") if isinstance(supplier, dict) else None
    required = origin.get("atributos_obligatorios")
    attributes: dict[str, str] = {}
    if isinstance(supplier_attributes, dict) and isinstance(required, list):
        attributes = {
            key: str(supplier_attributes[key]) for key in required if key in supplier_attributes
        }
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


def is_rubric(body: dict[str, Any]) -> bool:
    """Whether the evaluator was asked for the rubric (three questions) instead of a verdict."""
    response_format = body.get("response_format")
    json_schema = response_format.get("json_schema") if isinstance(response_format, dict) else None
    schema = json_schema.get("schema") if isinstance(json_schema, dict) else None
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return isinstance(properties, dict) and "inventa" in properties


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
                "cita": REJECTION_DETAIL if question == failing else "",
                "falla": question == failing,
            }
            for question in RUBRIC_QUESTIONS.values()
        }
        return json.dumps(answer, ensure_ascii=False)
    if action == "aprobar":
        return json.dumps({"aprobada": True, "problemas": []})
    problem = {"criterio": criterion, "detalle": REJECTION_DETAIL}
    return json.dumps({"aprobada": False, "problemas": [problem]}, ensure_ascii=False)


def content_for(action: str, agent: str, sku: str, prompt: str, rubric: bool = False) -> str:
    if action == "json_roto":
        return BROKEN_JSON
    if action.startswith("texto:"):
        return action.removeprefix("texto:")
    if agent == GENERATOR:
        return generator_content(action, sku, prompt)
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
    falla = sum(1 for key in keys if key == "falla")
    entries = []
    for (_, text), key in zip(tokens, keys, strict=True):
        if key is None:
            entry = _token_entry(text, 1.0)
            entry["top_logprobs"] = [_token_entry(text, 1.0)][:top_n]
            entries.append(entry)
            continue
        written_true = text.strip() == "true"
        p_true = CONFIDENCE if written_true else 1 - CONFIDENCE
        if step.scored and step.puntuacion is not None and key == "aprobada":
            p_true = step.puntuacion
        elif step.scored and step.puntuacion is not None and key == "falla":
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
        entry["top_logprobs"] = [_token_entry(t, p) for t, p in ranked][:top_n]
        entries.append(entry)
    return {"content": entries, "refusal": None}


def _key_before(content: str, start: int, text: str) -> str | None:
    """The key whose value a boolean token starts, or None for any other token."""
    if text.strip() not in ("true", "false"):
        return None
    match = KEY_BEFORE_PATTERN.search(content[:start] + text[: len(text) - len(text.lstrip())])
    return match.group(1) if match else None


def _approx_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def completion_body(
    body: dict[str, Any], content: str, number: int, step: Step | None = None
) -> dict[str, Any]:
    messages = body.get("messages")
    prompt_chars = (
        "".join(_message_text(m) for m in messages if isinstance(m, dict))
        if isinstance(messages, list)
        else ""
    )
    prompt_tokens = _approx_tokens(prompt_chars)
    completion_tokens = _approx_tokens(content)
    logprobs = None
    if body.get("logprobs") is True:
        top_n = body.get("top_logprobs")
        top_n = top_n if isinstance(top_n, int) and not isinstance(top_n, bool) else 0
        logprobs = logprobs_for(content, step or Step(""), max(0, top_n))
    return {
        "id": f"chatcmpl-fake-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": str(body.get("model") or MODEL_NAME),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
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


# --------------------------------------------------------------------------- server


class CloseConnection(Exception):
    """Raised after closing the transport, so the handler returns without an answer."""


@dataclass
class Outage:
    """An outage started by `POST /_admin/down`; `until` is on the monotonic clock."""

    mode: str
    until: float


@dataclass
class Record:
    """One chat request as `GET /_admin/requests` and the record file show it."""

    index: int
    received_at: float
    agent: str | None
    sku: str | None
    body: Any
    step: int | None = None
    action: str | None = None
    status: int | None = None
    outcome: str = "pending"
    duration_ms: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "received_at": self.received_at,
            "agent": self.agent,
            "sku": self.sku,
            "step": self.step,
            "action": self.action,
            "status": self.status,
            "outcome": self.outcome,
            "duration_ms": self.duration_ms,
            "body": self.body,
            **self.extra,
        }


class FakeLLMServer:
    """State and handlers of the fake server; one instance per process."""

    def __init__(self, config: Config, record_path: Path | None) -> None:
        self.config = config
        self.record_path = record_path
        self.records: list[Record] = []
        self.previous_records: list[dict[str, Any]] = []
        self.counters: dict[tuple[str, str], int] = {}
        self.outage: Outage | None = None
        self.limiter = ParallelLimiter(lambda: self.config.max_parallel)
        self.open_requests = 0
        self.hanging = 0
        self.stopping = False
        self.started_at = time.time()
        self._next_index = 0
        self._record_file: TextIO | None = None
        if record_path is not None:
            self._reload(record_path)
            self._record_file = record_path.open("a", encoding="utf-8")

    # ---- persistence

    def _reload(self, path: Path) -> None:
        """Continue the scripts where a previous process left them.

        A request the previous process never finished (killed, or stopped mid-request)
        is not in the file, or is marked `server_stopped`: the client got no answer, so
        the step is replayed, as a real server that died would have done no work.
        """
        if not path.exists():
            return
        loaded = 0
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    item = json.loads(line)
                except ValueError:
                    continue  # a torn last line from a killed process
                if not isinstance(item, dict):
                    continue
                loaded += 1
                self.previous_records.append(item)
                index = item.get("index")
                if isinstance(index, int):
                    self._next_index = max(self._next_index, index + 1)
                step, agent, sku = item.get("step"), item.get("agent"), item.get("sku")
                if not isinstance(step, int) or item.get("outcome") == "server_stopped":
                    continue
                key = (str(agent), sku or "")
                self.counters[key] = max(self.counters.get(key, 0), step + 1)
        LOG.info("reloaded %d records from %s: counters %s", loaded, path, self.counters)

    def _persist(self, record: Record) -> None:
        if self._record_file is None:
            return
        try:
            self._record_file.write(json.dumps(record.as_json(), ensure_ascii=False) + "\n")
            self._record_file.flush()
        except (OSError, ValueError) as exc:
            LOG.warning("could not append to %s: %s", self.record_path, exc)

    def close(self) -> None:
        if self._record_file is not None:
            self._record_file.close()
            self._record_file = None

    # ---- helpers

    def _current_outage(self) -> Outage | None:
        if self.outage is not None and time.monotonic() >= self.outage.until:
            self.outage = None
        return self.outage

    def _take_step(self, agent: str, sku: str) -> tuple[int, Step, float]:
        """Consume the next script step for (agent, sku): returns index, step, latency s."""
        scripts, latency_ms = self.config.scripts_for(sku)
        key = (agent, sku)
        step = self.counters.get(key, 0)
        self.counters[key] = step + 1
        script = scripts[agent]
        scripted = script[min(step, len(script) - 1)]
        jitter = self.config.latency_jitter_ms
        latency_ms += random.uniform(0, jitter) if jitter else 0.0
        return step, scripted, latency_ms / 1000

    async def _hang(self) -> None:
        """Wait until the client gives up (aiohttp then cancels this handler)."""
        self.hanging += 1
        try:
            await asyncio.Event().wait()
        finally:
            self.hanging -= 1

    @staticmethod
    def _close(request: web.Request) -> None:
        transport = request.transport
        if transport is not None:
            transport.close()
        raise CloseConnection

    # ---- chat

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        started = time.monotonic()
        record = Record(
            index=self._next_index,
            received_at=time.time(),
            agent=None,
            sku=None,
            body=None,
        )
        self._next_index += 1
        self.records.append(record)
        self.open_requests += 1
        try:
            response = await self._answer_chat(request, record)
            record.status = response.status
            record.outcome = "answered"
            return response
        except CloseConnection:
            record.outcome = "closed"
            # The transport is closed: aiohttp's write of this response fails quietly.
            return web.Response(status=499)
        except asyncio.CancelledError:
            record.outcome = "server_stopped" if self.stopping else "client_gone"
            raise
        finally:
            self.open_requests -= 1
            record.duration_ms = round((time.monotonic() - started) * 1000, 3)
            self._persist(record)

    async def _answer_chat(self, request: web.Request, record: Record) -> web.StreamResponse:
        raw = await request.read()
        try:
            body = json.loads(raw)
        except ValueError:
            record.body = raw.decode("utf-8", "replace")
            return error_response(400, "request body is not valid JSON")
        record.body = body
        if not isinstance(body, dict):
            return error_response(400, "request body must be a JSON object")
        agent = detect_agent(body)
        sku = detect_sku(body)
        record.agent, record.sku = agent, sku

        if body.get("stream"):
            return error_response(
                400, "fake_llm does not implement streaming; send stream=false (or omit it)"
            )
        if agent is None:
            return error_response(
                400,
                "fake_llm cannot tell the agent: response_format.json_schema.schema.properties "
                "must contain 'aprobada' (evaluador) or 'titulo' (generador)",
            )

        outage = self._current_outage()
        if outage is not None:
            record.action = f"down:{outage.mode}"
            if outage.mode == "close":
                self._close(request)
            if outage.mode == "hang":
                await self._hang()
            return error_response(503, "fake_llm is down (POST /_admin/up to end it)")

        await self.limiter.acquire()
        try:
            step, scripted, latency_s = self._take_step(agent, sku or "")
            action = scripted.action
            record.step, record.action = step, action
            if scripted.scored:
                record.extra["puntuacion"] = scripted.puntuacion
            if latency_s > 0:
                await asyncio.sleep(latency_s)
            if action == "cerrar":
                self._close(request)
            if action.startswith("error:"):
                status = int(action.removeprefix("error:"))
                return error_response(status, f"scripted error {status} for {agent} {sku}")
            if action != "colgar":
                content = content_for(
                    action, agent, sku or "", _last_user_text(body), is_rubric(body)
                )
                return web.json_response(completion_body(body, content, record.index, scripted))
        finally:
            self.limiter.release()
        # colgar: a hung request is not being worked on, so it gives its slot back.
        await self._hang()
        raise AssertionError("unreachable: _hang only ends by cancellation")

    # ---- admin and models

    async def models(self, request: web.Request) -> web.Response:
        model = {"id": MODEL_NAME, "object": "model", "created": 0, "owned_by": "fichas-tests"}
        return web.json_response({"object": "list", "data": [model]})

    async def get_config(self, request: web.Request) -> web.Response:
        return web.json_response(self.config.raw)

    async def set_config(self, request: web.Request) -> web.Response:
        try:
            self.config = parse_config(await request.json())
        except (ConfigError, ValueError) as exc:
            return web.json_response({"error": str(exc)}, status=400)
        self.limiter.wake()  # a larger max_parallel lets queued requests in now
        return web.json_response(self.config.raw)

    def all_records(self) -> list[dict[str, Any]]:
        """Records of earlier processes (from the record file) followed by this one's."""
        return self.previous_records + [record.as_json() for record in self.records]

    async def get_requests(self, request: web.Request) -> web.Response:
        """Records, optionally filtered: ?agent=&sku=&since=<index>&bodies=0.

        Filters exist because a long benchmark accumulates many large bodies.
        """
        query = request.query
        try:
            since = int(query.get("since", "0"))
        except ValueError:
            return web.json_response({"error": "since must be an integer"}, status=400)
        with_bodies = query.get("bodies", "1") not in ("0", "false", "no")
        selected = []
        for item in self.all_records():
            if item.get("index", 0) < since:
                continue
            if "agent" in query and item.get("agent") != query["agent"]:
                continue
            if "sku" in query and item.get("sku") != query["sku"]:
                continue
            if not with_bodies:
                item = {key: value for key, value in item.items() if key != "body"}
            selected.append(item)
        return web.json_response(selected)

    async def reset(self, request: web.Request) -> web.Response:
        """Forget records and counters (config stays); the record file is truncated too,
        otherwise a later restart would resurrect the counters this reset cleared."""
        self.records.clear()
        self.previous_records.clear()
        self.counters.clear()
        self.limiter.reset_peak()
        if self._record_file is not None:
            self._record_file.seek(0)
            self._record_file.truncate()
            self._record_file.flush()
        return web.json_response({"ok": True})

    async def down(self, request: web.Request) -> web.Response:
        try:
            data = await request.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            return web.json_response({"error": "body must be a JSON object"}, status=400)
        seconds, mode = data.get("seconds"), str(data.get("mode", "503"))
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            return web.json_response({"error": "seconds must be a number >= 0"}, status=400)
        if mode not in DOWN_MODES:
            return web.json_response({"error": f"mode must be one of {DOWN_MODES}"}, status=400)
        self.outage = Outage(mode=mode, until=time.monotonic() + float(seconds))
        return web.json_response({"down": True, "mode": mode, "seconds": seconds})

    async def up(self, request: web.Request) -> web.Response:
        self.outage = None
        return web.json_response({"down": False})

    async def stats(self, request: web.Request) -> web.Response:
        by_agent: dict[str, int] = {}
        by_status: dict[str, int] = {}
        by_outcome: dict[str, int] = {}
        by_agent_status: dict[str, dict[str, int]] = {}
        records = self.all_records()
        for item in records:
            agent = str(item.get("agent") or "unknown")
            outcome = str(item.get("outcome"))
            status = str(item["status"]) if item.get("status") is not None else outcome
            by_agent[agent] = by_agent.get(agent, 0) + 1
            by_status[status] = by_status.get(status, 0) + 1
            by_outcome[outcome] = by_outcome.get(outcome, 0) + 1
            per_agent = by_agent_status.setdefault(agent, {})
            per_agent[status] = per_agent.get(status, 0) + 1
        outage = self._current_outage()
        return web.json_response(
            {
                "total": len(records),
                "by_agent": by_agent,
                "by_status": by_status,
                "by_outcome": by_outcome,
                "by_agent_status": by_agent_status,
                "in_flight": self.limiter.active,
                "peak_in_flight": self.limiter.peak,
                "queued": self.limiter.queued,
                "hanging": self.hanging,
                "open_requests": self.open_requests,
                "down": None
                if outage is None
                else {"mode": outage.mode, "remaining_s": outage.until - time.monotonic()},
                "uptime_s": time.time() - self.started_at,
            }
        )

    def make_app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.add_routes(
            [
                web.post("/v1/chat/completions", self.chat_completions),
                web.get("/v1/models", self.models),
                web.get("/_admin/config", self.get_config),
                web.post("/_admin/config", self.set_config),
                web.get("/_admin/requests", self.get_requests),
                web.post("/_admin/reset", self.reset),
                web.post("/_admin/down", self.down),
                web.post("/_admin/up", self.up),
                web.get("/_admin/stats", self.stats),
            ]
        )
        return app


# --------------------------------------------------------------------------- main


def _loopback_only(host: str) -> str:
    """Refuse to listen beyond this machine: the fake has no auth and echoes prompts."""
    if host == "localhost":
        return "127.0.0.1"
    try:
        if ipaddress.ip_address(host).is_loopback:
            return host
    except ValueError:
        pass
    raise SystemExit(f"fake_llm: refusing to bind to {host!r}; use a loopback address")


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    # Lets a restarted server take the same port while old connections sit in TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


async def _watch_parent(stop: asyncio.Event) -> None:
    """Stop when the process that started us is gone, so a killed test run leaves no orphan."""
    parent = os.getppid()
    while not stop.is_set():
        if os.getppid() != parent:
            LOG.warning("parent process %d is gone; stopping", parent)
            stop.set()
            return
        await asyncio.sleep(0.5)


async def serve(
    host: str,
    port: int,
    config: Config,
    record_path: Path | None,
    exit_with_parent: bool = False,
) -> None:
    server = FakeLLMServer(config, record_path)
    # handler_cancellation: a client that gives up must free its slot and be recorded.
    runner = web.AppRunner(server.make_app(), handler_cancellation=True, access_log=None)
    await runner.setup()
    sock = _bind(host, port)
    site = web.SockSite(runner, sock, shutdown_timeout=1.0)
    await site.start()
    bound_host, bound_port = sock.getsockname()[:2]
    shown_host = f"[{bound_host}]" if ":" in bound_host else bound_host
    print(f"LISTENING http://{shown_host}:{bound_port}/v1", flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    watcher = asyncio.create_task(_watch_parent(stop)) if exit_with_parent else None
    try:
        await stop.wait()
    finally:
        server.stopping = True  # before cleanup cancels the handlers still running
        if watcher is not None:
            watcher.cancel()
        await runner.cleanup()
        server.close()


TRY_IT = """\
Try fichas without a model: start this server, then point the product at the URL it prints.

  python -m harness.fake_llm --port 8000 &
  FICHAS_LLM_URL=http://127.0.0.1:8000/v1 fichas procesar ejemplos/proveedor.jsonl

With no --config every ficha is written and approved; a config scripts rejections, invalid
output, HTTP errors, hangs and closed connections per agent and SKU (module docstring), and
the evaluator's score when the request asks for logprobs, e.g.
  {"rules": [{"sku": "SKU-1", "evaluador": [{"accion": "aprobar", "puntuacion": 0.83}]}]}
Actions:
"""


def main(argv: list[str] | None = None) -> None:
    """``python -m harness.fake_llm``: serve until SIGTERM/SIGINT."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.fake_llm",
        description=(__doc__.splitlines()[0] if __doc__ else "") + "\n\n" + TRY_IT + ACTIONS_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--config", type=Path, help="JSON config file (see module docstring)")
    parser.add_argument("--record", type=Path, help="append every request here as JSON lines")
    parser.add_argument(
        "--log-level",
        default="WARNING",
        help="DEBUG, INFO, WARNING (default) or ERROR; logs go to stderr",
    )
    parser.add_argument(
        "--exit-with-parent", action="store_true", help="stop when the parent process dies"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s fake_llm %(levelname)s %(message)s",
    )
    host = _loopback_only(args.host)
    try:
        raw = json.loads(args.config.read_text(encoding="utf-8")) if args.config else {}
        config = parse_config(raw)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"fake_llm: bad --config: {exc}") from exc
    asyncio.run(serve(host, args.port, config, args.record, args.exit_with_parent))


if __name__ == "__main__":
    main()
