"""The contract on the wire, read: a record written by any version of the contract, tolerantly.

The decode half of ``esquemas.wire``, and the one way a reader of the project parses a record
(docs/contrato.md, "Readers never fail open"). The models forbid extras because they are what
this project writes; reading stays tolerant without loosening them:

* a field the model does not name is dropped, at every level (nested models, lists and dicts of
  models), and its path listed in ``Decoded.ignored``;
* a value of a closed list (``Literal``) this version does not know is kept as written and its
  path listed in ``Decoded.unknown`` (an open enum, as protobuf reads one);
* a gate key (``ClavePuerta``, an identity: its id hashes every field) with a non-null field or a
  value this version does not know is another key, never a smaller one: it is read as null at
  the nearest field that may be null (evidence of no gate this version knows), and listed;
* the rest is validated by the model as it stands; ``ValidationError`` when it refuses.

What an unknown value means is each reader's call: a gate record with one closes the gate it
names (``puerta.lectura``). Invariant: ``decode`` never changes a value it knows.
"""

from __future__ import annotations

import copy
import json
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from esquemas.estado_puerta import ClavePuerta

M = TypeVar("M", bound=BaseModel)
Path = tuple[str | int, ...]

# Models whose fields together are an identity: dropping a field would leave another identity.
IDENTITIES: tuple[type[BaseModel], ...] = (ClavePuerta,)


@dataclass(frozen=True)
class Unknown:
    """A value this version cannot interpret: its field path, and why in words."""

    path: str
    reason: str


@dataclass(frozen=True)
class Decoded(Generic[M]):
    """A record as this version reads it, and what it could not read of it."""

    value: M
    data: Any = None  # the record as written, less what ``ignored`` lists and keys read as null
    ignored: tuple[str, ...] = ()
    unknown: tuple[Unknown, ...] = ()

    def understood(self, prefix: str = "") -> bool:
        """Whether every value at the field path ``prefix`` (the whole record by default) and
        below is one this version knows."""
        return not any(_under(u.path, prefix) for u in self.unknown)

    def reasons(self) -> str:
        """What this version could not interpret, in one line ('' when nothing)."""
        return "; ".join(f"{u.path}: {u.reason}" for u in self.unknown)


def decode(model: type[M], data: Any) -> Decoded[M]:
    """``data`` (parsed JSON) read as ``model``, tolerantly (module docstring).

    Raises ``pydantic.ValidationError`` when what this version knows of it is not valid.
    """
    walk = _Walk()
    pruned, _ = walk.prune(model, data, ())
    value = _validated(model, pruned, walk.stand_ins)
    for path, written, _ in walk.stand_ins:
        value = _put(value, path, written)
    return Decoded(value, pruned, tuple(_text(p) for p in walk.ignored), tuple(walk.unknown))


def decode_json(model: type[M], raw: bytes | bytearray | str) -> Decoded[M]:
    """A record's value (JSON bytes or text) read as ``model``; ``ValueError`` when it is not
    JSON (``json.JSONDecodeError``, ``UnicodeDecodeError``) or not valid (``ValidationError``)."""
    return decode(model, json.loads(raw))


@dataclass
class _Walk:
    """One record's walk: what was dropped, what is unknown, and what stands in for it while
    the model validates (a known value, put back as written afterwards)."""

    ignored: list[Path] = field(default_factory=list)
    unknown: list[Unknown] = field(default_factory=list)
    stand_ins: list[tuple[Path, Any, tuple[Any, ...]]] = field(default_factory=list)

    def prune(
        self, annotation: Any, data: Any, path: Path, in_key: bool = False
    ) -> tuple[Any, bool]:
        """``data`` without the fields ``annotation`` does not name, and whether a gate key in
        it is one this version does not know (nulled at the nearest optional field above)."""
        annotation = _plain(annotation)
        origin = get_origin(annotation)
        args = get_args(annotation)
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            return self._model(annotation, data, path, in_key)
        if origin in (Union, types.UnionType):
            return self._optional(annotation, data, path, in_key)
        if origin is Literal:
            return self._literal(annotation, data, path), in_key and _new_value(annotation, data)
        if origin in (list, tuple) and isinstance(data, list) and args:
            if origin is tuple and args[-1] is not Ellipsis:
                return data, False
            items = [self.prune(args[0], v, (*path, i), in_key) for i, v in enumerate(data)]
            return [v for v, _ in items], any(lost for _, lost in items)
        if origin is dict and isinstance(data, dict) and len(args) == 2:
            pairs = {k: self.prune(args[1], v, (*path, k), in_key) for k, v in data.items()}
            return {k: v for k, (v, _) in pairs.items()}, any(lost for _, lost in pairs.values())
        return data, False

    def _model(
        self, model: type[BaseModel], data: Any, path: Path, in_key: bool
    ) -> tuple[Any, bool]:
        """A model's fields, pruned; what a gate key does not know is recorded at the key."""
        if not isinstance(data, dict):
            return data, False  # the model refuses it with its own words
        identity = model in IDENTITIES
        inside = in_key or identity
        kept: dict[str, Any] = {}
        new_fields: list[str] = []
        lost = False
        for name, value in data.items():
            info = model.model_fields.get(name)
            if info is None:
                self.ignored.append((*path, name))
                if inside and value is not None:
                    new_fields.append(name)
                continue
            kept[name], field_lost = self.prune(info.annotation, value, (*path, name), inside)
            lost |= field_lost
        lost |= bool(new_fields)
        if identity and lost:
            values = [u.path for u in self.unknown if _under(u.path, _text(path))]
            what = [f"field {n}" for n in new_fields] + [f"the value of {v}" for v in values]
            reason = f"a gate key this version does not know ({', '.join(what)})"
            self.unknown.append(Unknown(_text(path), reason))
        return kept, lost

    def _optional(self, annotation: Any, data: Any, path: Path, in_key: bool) -> tuple[Any, bool]:
        """``X | None``: a gate key this version does not know, inside, is read as null here."""
        arms = [a for a in get_args(annotation) if a is not type(None)]
        if data is None or len(arms) != 1:
            return data, False
        pruned, lost = self.prune(arms[0], data, path, in_key)
        if not lost or in_key or type(None) not in get_args(annotation):
            return pruned, lost
        where = _text(path)
        inner = [u for u in self.unknown if _under(u.path, where)]
        self.unknown = [u for u in self.unknown if u not in inner]
        self.stand_ins = [s for s in self.stand_ins if s[0][: len(path)] != path]
        reason = "; ".join(u.reason if u.path == where else f"{u.path}: {u.reason}" for u in inner)
        self.unknown.append(Unknown(where, f"read as null, {reason}"))
        return None, False

    def _literal(self, annotation: Any, data: Any, path: Path) -> Any:
        """A value of a closed list: a new one is kept as written, listed, and stood in for by
        a known one while the model validates the rest."""
        if not _new_value(annotation, data):
            return data
        allowed = get_args(annotation)
        self.unknown.append(Unknown(_text(path), f"{data!r} is not one of {list(allowed)}"))
        self.stand_ins.append((path, data, allowed))
        return data


def _validated(
    model: type[M], pruned: Any, stand_ins: list[tuple[Path, Any, tuple[Any, ...]]]
) -> M:
    """The model of the pruned record, a known value standing in for each new one: the first
    the closed list holds, or, when the model refuses that (a check across fields), the next
    ones, one stand-in at a time; the first refusal when none passes."""
    chosen = [allowed[0] for _, _, allowed in stand_ins]
    try:
        return model.model_validate(_standing_in(pruned, stand_ins, chosen))
    except ValidationError as exc:
        refusal = exc
    for i, (_, _, allowed) in enumerate(stand_ins):
        for option in allowed[1:]:
            trial = [*chosen[:i], option, *chosen[i + 1 :]]
            try:
                return model.model_validate(_standing_in(pruned, stand_ins, trial))
            except ValidationError:
                continue
    raise refusal


def _standing_in(
    pruned: Any, stand_ins: list[tuple[Path, Any, tuple[Any, ...]]], chosen: list[Any]
) -> Any:
    """A copy of the pruned record with the chosen known values where new ones stand."""
    if not stand_ins:
        return pruned
    copied = copy.deepcopy(pruned)
    for (path, _, _), known in zip(stand_ins, chosen, strict=True):
        copied = _put(copied, path, known)
    return copied


def _new_value(annotation: Any, data: Any) -> bool:
    """Whether ``data`` is of the literal's kind but not one it lists (a value a later version
    added); a value of another kind is left for the model to refuse."""
    allowed = get_args(annotation)
    return bool(allowed) and isinstance(data, type(allowed[0])) and data not in allowed


def _plain(annotation: Any) -> Any:
    """The annotation without ``Annotated`` metadata."""
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _put(obj: Any, path: Path, value: Any) -> Any:
    """A copy of ``obj`` with ``value`` at ``path``; a model through ``model_copy``, which does
    not validate (how a new value goes back where the model validated a known one)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, BaseModel):
        return obj.model_copy(update={str(head): _put(getattr(obj, str(head)), rest, value)})
    if isinstance(obj, list):
        return [_put(v, rest, value) if i == head else v for i, v in enumerate(obj)]
    if isinstance(obj, Mapping):
        return {k: _put(v, rest, value) if k == head else v for k, v in obj.items()}
    return obj


def _text(path: Path) -> str:
    """A field path as text: ``publicacion.revision.decision``, ``historial[2].veredicto``."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _under(path: str, prefix: str) -> bool:
    """Whether the field path ``path`` is ``prefix`` or below it."""
    return not prefix or path == prefix or path.startswith((f"{prefix}.", f"{prefix}["))
