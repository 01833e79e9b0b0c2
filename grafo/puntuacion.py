"""The evaluator's score: ``s = P(aprobada = true)``, read from the token log-probabilities.

Pure functions over the ``logprobs`` object of an OpenAI chat completion
(``AIMessage.response_metadata["logprobs"]``), tested with fixed token lists. Invariants: the
verdict token is found by the JSON path of its value (never by text search), its alternatives
are renormalised over the variants of ``true`` and ``false`` (llama.cpp reports before the
grammar, vLLM after), and below ``MASA_MINIMA`` of boolean mass the score is None (the gate
counts it as not approved). How and why, with a hand check against the real server:
docs/grafo.md, "The evaluator's score".
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

MASA_MINIMA = 0.5  # minimum probability on true+false variants for a score (docstring: why)
TOP_LOGPROBS = 10  # alternatives the evaluator asks for at every token (see recortar_logprobs)
RUTA_APROBADA: tuple[str, ...] = ("aprobada",)

_WHITESPACE = b" \t\n\r"
_AFTER_WORD = frozenset(",}] \t\n\r")  # what may follow a complete true/false in JSON


def puntuacion_veredicto(
    logprobs: Mapping[str, Any] | None, masa_minima: float = MASA_MINIMA
) -> float | None:
    """``P(aprobada = true)`` of a ``Veredicto`` answer; None without usable logprobs."""
    return probabilidad_verdadero(logprobs, RUTA_APROBADA, masa_minima)


def puntuacion_rubrica(
    logprobs: Mapping[str, Any] | None,
    preguntas: Sequence[str],
    masa_minima: float = MASA_MINIMA,
) -> float | None:
    """The rubric's score: the product over its questions of ``P(falla = false)``.

    Approved means no question fails, so (reading the questions as independent, the only
    reading the tokens allow) P(approvable) is the product. None if any question has no score.
    """
    producto = 1.0
    for pregunta in preguntas:
        p_falla = probabilidad_verdadero(logprobs, (pregunta, "falla"), masa_minima)
        if p_falla is None:
            return None
        producto *= 1.0 - p_falla
    return producto


def probabilidad_verdadero(
    logprobs: Mapping[str, Any] | None,
    ruta: tuple[str, ...],
    masa_minima: float = MASA_MINIMA,
) -> float | None:
    """P(value at ``ruta`` = true), renormalised over true/false variants; None below the floor.

    ``logprobs`` is the chat completion's ``choices[0].logprobs`` ({"content": [token...]}).
    None when it is missing, when the key is not in the answer, or when the variants carry
    less than ``masa_minima`` of the probability at the verdict token.
    """
    tokens = _content_tokens(logprobs)
    if not tokens:
        return None
    pieces = [_token_bytes(t) for t in tokens]
    offset = _value_offset(b"".join(pieces), ruta)
    if offset is None:
        return None
    return _probabilidad_en(tokens, pieces, offset, masa_minima)


def probabilidades_verdadero(
    logprobs: Mapping[str, Any] | None,
    ruta: tuple[str, ...],
    masa_minima: float = MASA_MINIMA,
) -> list[float | None]:
    """``probabilidad_verdadero`` at every member at ``ruta``, in the answer's order.

    For a path inside an array of objects (the ``citas`` evaluator's ``("citas",
    "respaldada")``: one boolean per claim), where the single-value reading takes the first.
    [] without logprobs or without any such member.
    """
    tokens = _content_tokens(logprobs)
    if not tokens:
        return []
    pieces = [_token_bytes(t) for t in tokens]
    return [
        _probabilidad_en(tokens, pieces, offset, masa_minima)
        for path, offset in _member_values(b"".join(pieces))
        if path == ruta
    ]


def _probabilidad_en(
    tokens: Sequence[Mapping[str, Any]], pieces: Sequence[bytes], offset: int, masa_minima: float
) -> float | None:
    """P(true) at the value starting at byte ``offset``, renormalised; None below the floor."""
    index, start = _token_at(pieces, offset)
    prefix = pieces[index][: offset - start].decode("utf-8", "replace")
    masa_true, masa_false = _masses(tokens[index], prefix)
    total = masa_true + masa_false
    if total < masa_minima or total <= 0:
        return None
    return masa_true / total


def recortar_logprobs(
    logprobs: Mapping[str, Any] | None, rutas: Sequence[tuple[str, ...]]
) -> dict[str, Any] | None:
    """The part of a logprobs object the score reads: the same score from far less data.

    The server sends ``top_logprobs`` alternatives for every token of the answer (10 for each
    of a rejection's ~100 tokens: tens of KB), though the score reads only the alternatives
    at the tokens that start the values at ``rutas``. The OpenAI API cannot ask for them at one
    token, so they are cut on arrival, before any langchain or SDK object holds them
    (``grafo.chat_model``): the tokens up to the last scored one are kept (the scanner needs
    their bytes to find the values), with ``top_logprobs`` only at the scored ones; the rest
    is dropped. ``probabilidad_verdadero`` gives the same value for every path in ``rutas``
    on the cut object as on the whole one (``tests/grafo/test_puntuacion.py``). When a path
    is not in the answer the object is returned whole: the score is None either way, and
    nothing is lost for whoever looks at it.
    """
    tokens = _content_tokens(logprobs)
    if not tokens:
        return dict(logprobs) if isinstance(logprobs, Mapping) else None
    pieces = [_token_bytes(t) for t in tokens]
    buscadas = set(rutas)
    offsets: dict[tuple[str, ...], int] = {}
    for ruta, offset in _member_values(b"".join(pieces)):
        if ruta in buscadas:
            offsets.setdefault(ruta, offset)  # the first member at a path, as _value_offset
            if len(offsets) == len(buscadas):
                break  # the verdict comes first: the rest of the answer need not be read
    leidos: set[int] = set()
    for ruta in rutas:
        if ruta not in offsets:
            return dict(logprobs) if isinstance(logprobs, Mapping) else None
        leidos.add(_token_at(pieces, offsets[ruta])[0])
    content = [
        dict(t) if i in leidos else {k: v for k, v in t.items() if k != "top_logprobs"}
        for i, t in enumerate(tokens[: max(leidos) + 1])
    ]
    return {"content": content}


def _content_tokens(logprobs: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The token list of a logprobs object, or [] when the server gave none."""
    if not isinstance(logprobs, Mapping):
        return []
    content = logprobs.get("content")
    if not isinstance(content, list):
        return []
    return [t for t in content if isinstance(t, Mapping) and isinstance(t.get("token"), str)]


def _token_bytes(token: Mapping[str, Any]) -> bytes:
    """The token's bytes as the server reported them, else its text in UTF-8."""
    raw = token.get("bytes")
    if isinstance(raw, list) and raw and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        return bytes(raw)
    return str(token["token"]).encode("utf-8")


def _token_at(pieces: Sequence[bytes], offset: int) -> tuple[int, int]:
    """Index of the token whose byte span holds ``offset``, and where that token starts."""
    start = 0
    for index, piece in enumerate(pieces):
        if start <= offset < start + len(piece):
            return index, start
        start += len(piece)
    raise ValueError(f"offset {offset} is past the last token")  # _value_offset rules it out


def _masses(token: Mapping[str, Any], prefix: str) -> tuple[float, float]:
    """Probability on true variants and on false variants among the token's alternatives."""
    alternatives: dict[str, float] = {}
    top = token.get("top_logprobs")
    for alt in top if isinstance(top, list) else []:
        if isinstance(alt, Mapping) and isinstance(alt.get("token"), str):
            logprob = alt.get("logprob")
            if isinstance(logprob, int | float) and not math.isnan(logprob):
                text = alt["token"]
                alternatives[text] = alternatives.get(text, 0.0) + math.exp(logprob)
    chosen = token.get("logprob")
    if token["token"] not in alternatives and isinstance(chosen, int | float):
        alternatives[token["token"]] = math.exp(chosen)
    masas = {"true": 0.0, "false": 0.0}
    for text, probability in alternatives.items():
        word = _variant_of(text, prefix)
        if word is not None:
            masas[word] += probability
    return masas["true"], masas["false"]


def _variant_of(text: str, prefix: str) -> str | None:
    """``"true"`` or ``"false"`` when the alternative token starts that word, else None."""
    rest = text.lstrip()
    structure = "".join(prefix.split())  # the verdict token's own non-space prefix, e.g. '":'
    if structure:
        if not rest.startswith(structure):
            return None
        rest = rest[len(structure) :].lstrip()
    rest = rest.casefold()
    if not rest:
        return None
    for word in ("true", "false"):
        if word.startswith(rest):
            return word
        if rest.startswith(word) and rest[len(word)] in _AFTER_WORD:
            return word
    return None


def _value_offset(data: bytes, ruta: tuple[str, ...]) -> int | None:
    """Byte offset where the first member at ``ruta`` has its value, or None if none has."""
    for path, offset in _member_values(data):
        if path == ruta:
            return offset
    return None


def _member_values(data: bytes) -> Iterator[tuple[tuple[str, ...], int]]:
    """Every object member's key path and the offset of its value's first byte.

    A forgiving scanner, not a validator: it needs only to know, at each byte, whether it is
    inside a string and which keys lead there. Arrays add no key (a member inside an array
    element has the array's key path), which is enough for the paths asked for here.
    """
    stack: list[str | None] = []  # per open container: the key of the member being read
    i, n = 0, len(data)
    pending: str | None = None  # a string just read that may be a key
    while i < n:
        c = data[i]
        if c == ord('"'):
            end = _string_end(data, i)
            pending = data[i + 1 : end].decode("utf-8", "replace")
            i = end + 1
            continue
        if c == ord(":") and pending is not None and stack:
            stack[-1] = pending
            j = i + 1
            while j < n and data[j] in _WHITESPACE:
                j += 1
            if j < n:
                yield tuple(k for k in stack if k is not None), j
        elif c in b"{[":
            stack.append(None)
        elif c in b"}]":
            if stack:
                stack.pop()
        elif c == ord(",") and stack:
            stack[-1] = None
        if c not in _WHITESPACE:
            pending = None
        i += 1


def _string_end(data: bytes, start: int) -> int:
    """Offset of the quote closing the string opened at ``start`` (or the end of the data)."""
    i = start + 1
    while i < len(data):
        if data[i] == ord("\\"):
            i += 2
            continue
        if data[i] == ord('"'):
            return i
        i += 1
    return len(data)
