"""The benchmark feed: N events whose approval attempt is scripted per SKU in the fake LLM.

Each event has its own SKU, and the SKU's prefix says when the fake evaluator approves it:
``A1-`` at attempt 1, ``A2-`` at 2, ``A3-`` at 3, ``NV-`` never. The fake server counts
requests per (agent, SKU), so one SKU per event keeps every script independent. Events are
interleaved by largest remainder, so any prefix of the feed has (almost) the configured mix:
the naive run, which only gets a prefix, sees the same mix as the worker.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from harness.eventos import evento_dict

# prefix -> (attempt that is approved or None, evaluator script)
CLASES: dict[str, tuple[int | None, list[str]]] = {
    "1": (1, ["aprobar"]),
    "2": (2, ["rechazar", "aprobar"]),
    "3": (3, ["rechazar", "rechazar", "aprobar"]),
    "never": (None, ["rechazar"]),
}
PREFIJOS = {"1": "A1", "2": "A2", "3": "A3", "never": "NV"}
DEFAULT_SHARE = "1:0.5,2:0.3,3:0.1,never:0.1"


def parse_share(text: str) -> dict[str, float]:
    """``1:0.5,2:0.3,3:0.1,never:0.1`` -> normalised shares; unknown classes fail loudly."""
    share: dict[str, float] = {}
    for part in text.split(","):
        name, _, value = part.strip().partition(":")
        if name not in CLASES:
            raise ValueError(f"unknown class {name!r} in --share; use 1, 2, 3 or never")
        share[name] = float(value)
    total = sum(share.values())
    if total <= 0:
        raise ValueError("--share must have a positive total")
    return {name: value / total for name, value in share.items() if value > 0}


def llm_calls(clase: str, max_intentos: int = 3) -> int:
    """LLM calls one ficha needs: generator + evaluator per attempt."""
    aprobada_en = CLASES[clase][0]
    intentos = max_intentos if aprobada_en is None else min(aprobada_en, max_intentos)
    return 2 * intentos


def mean_calls(share: dict[str, float], max_intentos: int = 3) -> float:
    """Mean LLM calls per ficha for a mix: the chain length the LLM-bound limit divides by."""
    return sum(p * llm_calls(clase, max_intentos) for clase, p in share.items())


def llm_bound(share: dict[str, float], latency_ms: float, cap: int) -> float:
    """Fichas/s when the LLM server's ``cap`` parallel slots are always busy.

    limit = cap / (mean calls per ficha x latency per call). No client can beat it: each call
    holds one slot for ``latency_ms``.
    """
    return cap / (mean_calls(share) * latency_ms / 1000)


@dataclass(frozen=True)
class Evento:
    """One feed entry: the SKU (also the Kafka key), its class, and the JSON value."""

    sku: str
    clase: str
    valor: bytes


def make_feed(n: int, share: dict[str, float], tag: str) -> list[Evento]:
    """``n`` events with SKUs ``<prefix>-<tag>-<i>``, interleaved so prefixes keep the mix."""
    counts = dict.fromkeys(share, 0)
    feed: list[Evento] = []
    for i in range(n):
        # pick the class furthest behind its target share
        clase = max(share, key=lambda c: share[c] * (i + 1) - counts[c])
        counts[clase] += 1
        sku = f"{PREFIJOS[clase]}-{tag}-{i:05d}"
        evento: dict[str, Any] = evento_dict(sku, 1, event_id=f"{sku}-v1")
        feed.append(Evento(sku, clase, json.dumps(evento).encode()))
    return feed


def fake_llm_config(latency_ms: float, cap: int) -> dict[str, Any]:
    """Fake server script: latency, parallel cap, and one rule per class prefix."""
    return {
        "latency_ms": latency_ms,
        "max_parallel": cap,
        "rules": [
            {"sku": f"{PREFIJOS[clase]}-.*", "evaluador": script}
            for clase, (_, script) in CLASES.items()
        ],
    }
