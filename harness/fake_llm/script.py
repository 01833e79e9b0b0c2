"""The fake LLM's script: what it answers, per agent and SKU, as pydantic models.

Every model forbids unknown keys (``extra="forbid"``) and every number is strict (``true`` is
not 1), so a typo in a test's script fails the ``configure`` call that made it instead of
quietly running the default. The JSON form:

    {"latency_ms": 0, "latency_jitter_ms": 0, "max_parallel": 0,
     "default": {"generador": ["valida"], "evaluador": ["aprobar"]},
     "rules": [{"sku": "<regex, fullmatch>", "generador": [...], "evaluador": [...],
                "latency_ms": 250}]}

A script is a list of steps (one step alone may be given without the list). A step is an
action string, or for the evaluator ``{"accion": <action>, "puntuacion": <0..1 or null>}``,
which also scripts the score its log-probabilities give. The script is indexed by how many
requests of that agent the server has already taken for that SKU (0-based); past the end the
last step repeats. ``ACTIONS_HELP`` lists the actions.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from harness.fake_llm.prompt_contract import EVALUATOR, GENERATOR

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

Milliseconds = Annotated[float, Field(ge=0, strict=True)]
Probability = Annotated[float, Field(ge=0, le=1, strict=True)]


class ConfigError(ValueError):
    """A config that cannot be scripted; raised early so a typo fails the test that made it."""


class Step(BaseModel):
    """One scripted answer: the action, and for the evaluator optionally its score.

    Written as a bare action string, or as ``{"accion", "puntuacion"}`` (both keys): the object
    form is what sets ``scored``, even with ``"puntuacion": null`` (a server with no logprobs).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    accion: Annotated[str, Field(strict=True)]
    puntuacion: Probability | None = None

    @model_validator(mode="before")
    @classmethod
    def _bare_action(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"accion": data}
        if isinstance(data, dict) and "puntuacion" not in data:
            raise ValueError('an object step is {"accion": <action>, "puntuacion": <0..1 or null>}')
        return data

    @property
    def scored(self) -> bool:
        """Whether the script set the score (which may be null)."""
        return "puntuacion" in self.model_fields_set


UNSCRIPTED = Step.model_validate("")


def check_action(agent: str, step: Step) -> Step:
    """Whether ``agent`` can take ``step``; raises ``ValueError`` naming the known actions."""
    action = step.accion
    if step.scored and agent != EVALUATOR:
        raise ValueError("an object step (with puntuacion) is an evaluador's, not a generador's")
    if action in COMMON_ACTIONS | (GENERATOR_ACTIONS if agent == GENERATOR else EVALUATOR_ACTIONS):
        return step
    if action.startswith("rechazar:") and agent == EVALUATOR:
        if not action.removeprefix("rechazar:"):
            raise ValueError("'rechazar:' needs a criterion id, e.g. rechazar:C04")
        return step
    if action.startswith("texto:"):
        return step
    if action.startswith("error:"):
        status = action.removeprefix("error:")
        if not status.isdigit() or not 400 <= int(status) <= 599:
            raise ValueError(f"{action!r} needs an HTTP status 400-599")
        return step
    raise ValueError(f"unknown action {action!r} for {agent}; known:\n{ACTIONS_HELP}")


class Scripts(BaseModel):
    """A script per agent; an agent left out keeps what it had (the default's, for a rule)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    generador: list[Step] | None = Field(default=None, min_length=1)
    evaluador: list[Step] | None = Field(default=None, min_length=1)

    @field_validator("generador", "evaluador", mode="before")
    @classmethod
    def _one_step_alone(cls, value: Any) -> Any:
        return [value] if isinstance(value, str | dict) else value

    @field_validator("generador", "evaluador")
    @classmethod
    def _actions_of_the_agent(cls, steps: list[Step] | None, info: ValidationInfo) -> Any:
        return None if steps is None else [check_action(str(info.field_name), s) for s in steps]

    def by_agent(self) -> dict[str, list[Step]]:
        """The scripts given, keyed by agent."""
        scripts = {GENERATOR: self.generador, EVALUATOR: self.evaluador}
        return {agent: script for agent, script in scripts.items() if script is not None}


class DefaultScripts(Scripts):
    """The scripts of every SKU no rule matches: write a valid ficha, approve it."""

    generador: list[Step] | None = Field(default=[Step.model_validate("valida")], min_length=1)
    evaluador: list[Step] | None = Field(default=[Step.model_validate("aprobar")], min_length=1)


class Rule(Scripts):
    """Per-SKU override of the default scripts (and optionally of the latency)."""

    sku: Annotated[str, Field(strict=True)]
    latency_ms: Milliseconds | None = None

    @field_validator("sku")
    @classmethod
    def _a_regex(cls, sku: str) -> str:
        try:
            re.compile(sku)
        except re.error as exc:
            raise ValueError(f"not a valid regex: {exc}") from exc
        return sku


class Config(BaseModel):
    """The whole script; ``raw`` is what was posted, over the defaults (``GET /_admin/config``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    latency_ms: Milliseconds = 0
    latency_jitter_ms: Milliseconds = 0
    max_parallel: Annotated[int, Field(ge=0, strict=True)] = 0
    default: DefaultScripts = DefaultScripts()
    rules: list[Rule] = []
    _raw: dict[str, Any] = PrivateAttr(default_factory=dict)

    @property
    def raw(self) -> dict[str, Any]:
        return self._raw

    def scripts_for(self, sku: str) -> tuple[dict[str, list[Step]], float]:
        """The scripts and latency for ``sku``: the first rule whose regex matches it wins."""
        scripts = self.default.by_agent()
        latency = self.latency_ms
        for rule in self.rules:
            if re.fullmatch(rule.sku, sku):
                scripts.update(rule.by_agent())
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


def parse_config(data: Any) -> Config:
    """Validate a config object; missing keys take ``DEFAULT_CONFIG`` values.

    The posted object replaces the whole config (no deep merge), so what a test posts is
    exactly what runs, whatever an earlier test configured.
    """
    if not isinstance(data, dict):
        raise ConfigError("config must be a JSON object")
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_explain(exc)) from None
    config._raw = {**DEFAULT_CONFIG, **data}
    return config


def _explain(exc: ValidationError) -> str:
    """One line per problem, ``where: what``, as a test's failure message should read."""
    lines = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "config"
        lines.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
    return "\n".join(lines)
