"""Where a worker's % of the LLM-bound limit goes: the fake LLM's slots, second by second.

``bench.run``'s limit (``bench.feed.llm_bound``) is the throughput of an LLM whose ``cap``
slots are never idle. No client reaches it on a finite feed, and the part it cannot reach is
not the worker's: the last fichas of a burst leave slots idle while they finish. So a
worker's ``pct_limite`` mixes three things, which this module separates from the fake LLM's
own record of every request (``GET /_admin/requests``: when it arrived, how long it held a
slot, which SKU it was for):

- ``techo_pct``: the ceiling of the feed itself. The same feed on ``cap`` slots with no gap at
  all between a ficha's calls, each ficha started the moment a slot frees, in feed order
  (``techo_s``, list scheduling). For the 1600-event mix of docs/rendimiento.md it is 96.6 %.
- ``ocupacion_pct``: the share of slot-seconds that were busy between the feed's first
  request and the last answer.
- the gaps between two calls of one ficha (``hueco_*_ms``): the worker's time between an answer
  and the ficha's next request (code checks, checkpoint, graph, and the wait behind other
  fichas' work on the event loop). With ``FICHAS_CONCURRENCIA`` = cap each millisecond of gap
  is a millisecond a slot is idle.

All of it is pure arithmetic on records, tested in ``tests/bench/test_ocupacion.py``.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import pairwise
from typing import Any

from estadistica import percentile


def techo_s(llamadas: Sequence[int], cap: int, latencia_s: float) -> float:
    """Makespan of the feed on ``cap`` slots with no gaps: each ficha (``llamadas[i]`` calls of
    ``latencia_s``, one after another) starts, in feed order, on the first slot to free."""
    libres = [0.0] * cap
    fin = 0.0
    for n in llamadas:
        empieza = heapq.heappop(libres)
        termina = empieza + n * latencia_s
        heapq.heappush(libres, termina)
        fin = max(fin, termina)
    return fin


def techo_pct(llamadas: Sequence[int], cap: int, latencia_s: float) -> float:
    """The best % of the LLM-bound limit this feed allows (``techo_s`` against the limit)."""
    if not llamadas:
        return 0.0
    limite_s = sum(llamadas) * latencia_s / cap  # the feed's time at every slot always busy
    return 100 * limite_s / techo_s(llamadas, cap, latencia_s)


def ocupacion(registros: Iterable[Mapping[str, Any]], cap: int) -> dict[str, float]:
    """Busy share of the slots and the gaps between a ficha's calls, from the fake's records.

    ``registros``: ``received_at`` (epoch s), ``duration_ms``, ``slot_ms`` and ``sku`` of each
    request answered (requests with no duration, or no SKU, such as the worker's start-up
    probe, are left out). A slot is busy for ``slot_ms`` (``duration_ms`` when a record has
    none): with more requests than slots, the rest of the duration is a wait in the server's
    queue. The window runs from the first request to the last answer.
    """
    validos = [r for r in registros if r.get("duration_ms") is not None and r.get("sku")]
    llamadas = [
        (float(r["received_at"]), float(r["duration_ms"]) / 1000, str(r["sku"])) for r in validos
    ]
    if not llamadas:
        return {}
    ocupado = sum(float(r.get("slot_ms") or r["duration_ms"]) / 1000 for r in validos)
    inicio = min(t for t, _, _ in llamadas)
    fin = max(t + d for t, d, _ in llamadas)
    ventana = max(fin - inicio, 1e-9)
    huecos = _huecos(llamadas)
    return {
        "ocupacion_pct": round(100 * ocupado / (cap * ventana), 1),
        "ventana_s": round(ventana, 2),
        "llamada_media_ms": round(1000 * sum(d for _, d, _ in llamadas) / len(llamadas), 1),
        "huecos": len(huecos),
        "hueco_medio_ms": round(sum(huecos) / len(huecos), 1) if huecos else 0.0,
        "hueco_p50_ms": _ms(percentile(huecos, 0.50)),
        "hueco_p90_ms": _ms(percentile(huecos, 0.90)),
        "hueco_p99_ms": _ms(percentile(huecos, 0.99)),
    }


def _huecos(llamadas: Sequence[tuple[float, float, str]]) -> list[float]:
    """Milliseconds from each answer to the same SKU's next request (one SKU per ficha)."""
    por_sku: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for llegada, duracion, sku in llamadas:
        por_sku[sku].append((llegada, duracion))
    huecos: list[float] = []
    for serie in por_sku.values():
        serie.sort()
        for (llegada, duracion), (siguiente, _) in pairwise(serie):
            huecos.append(1000 * (siguiente - llegada - duracion))
    return huecos


def _ms(valor: float | None) -> float:
    """A percentile rounded for the report (0 when there is none)."""
    return round(valor, 1) if valor is not None else 0.0


def linea(nombre: str, datos: Mapping[str, Any]) -> str:
    """One line of the run's report for a scenario's occupancy (``bench.run``)."""
    return (
        f"llm slots, {nombre}: busy {datos['ocupacion_pct']} % of {datos['ventana_s']} s "
        f"(ceiling of this feed {datos['techo_pct']} %); gap between a ficha's calls "
        f"p50 {datos['hueco_p50_ms']} ms, mean {datos['hueco_medio_ms']} ms, "
        f"p99 {datos['hueco_p99_ms']} ms"
    )
