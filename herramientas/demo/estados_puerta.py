"""The publication gate in the demo: an optional gate file, and the summary's gate lines.

The demo's worker runs under the default ``FICHAS_PUERTA=certificada`` and follows this run's
own gate topic (``fichas.puerta.demo-<run id>``), so a gate is closed unless ``--puerta FILE``
(or ``FICHAS_PUERTA_ARCHIVO``) gives one: its states are written to that topic before the
worker starts. The summary says per family whether the gate is open, with λ, n and k, as the
worker itself reports them on its ``/metrics`` (``fichas_puerta_*``): what was applied, not
what the file says.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from infra.config import Settings
from puerta.auditoria import estados_de_archivo
from puerta.topico import escribir_estados


async def escribir_archivo(settings: Settings, archivo: Path, topic: str) -> int:
    """Write the gate states of ``archivo`` to ``topic``; how many there were."""
    estados = estados_de_archivo(archivo)
    await escribir_estados(settings, estados.values(), topic=topic)
    return len(estados)


def lineas_puerta(metricas: str, familias: Iterable[str]) -> list[str]:
    """Summary lines: the gate of each family in ``familias`` as the worker exports it."""
    valores: dict[tuple[str, str], float] = {}
    sin_certificar = False
    for familia_metrica in text_string_to_metric_families(metricas):
        for muestra in familia_metrica.samples:
            if muestra.name == "fichas_puerta_sin_certificar":
                sin_certificar = muestra.value == 1
            elif muestra.name.startswith("fichas_puerta_"):
                nombre = muestra.name.removeprefix("fichas_puerta_")
                valores[(nombre, muestra.labels.get("family", ""))] = muestra.value
    if sin_certificar:
        return ["  puerta: FICHAS_PUERTA=veredicto, publicaciones SIN certificar"]
    lineas = ["  puerta de publicación por familia:"]
    for familia in sorted(set(familias)):
        if ("abierta", familia) not in valores:
            lineas.append(f"    {familia}: sin datos del worker")
            continue
        n, k = int(valores.get(("n", familia), 0)), int(valores.get(("k", familia), 0))
        umbral = valores.get(("umbral", familia), math.nan)
        if valores.get(("retenida", familia)) == 1:
            lineas.append(f"    {familia}: retenida por una persona; todo a revisión")
        elif valores[("abierta", familia)] == 1:
            lineas.append(f"    {familia}: abierta, λ {umbral:.4f}, n {n}, k {k}")
        else:
            lineas.append(f"    {familia}: cerrada (n {n}, k {k}); todo a revisión")
    return lineas


def lineas_tokens(metricas: str, fichas: int) -> list[str]:
    """Summary line: the tokens the LLM server reported for this run, per agent and per ficha.

    What the loop's retries cost is read here: since v1.3 a closed gate no longer cuts the
    loop after one attempt, so a run's tokens per ficha include the retries shadow mode runs.
    """
    tokens: dict[str, float] = {}
    for familia_metrica in text_string_to_metric_families(metricas):
        for muestra in familia_metrica.samples:
            if muestra.name == "fichas_llm_tokens_total":
                agente = muestra.labels.get("agent", "?")
                tokens[agente] = tokens.get(agente, 0.0) + muestra.value
    if not tokens:
        return []
    total = sum(tokens.values())
    partes = ", ".join(f"{agente} {valor:.0f}" for agente, valor in sorted(tokens.items()))
    por_ficha = f", {total / fichas:.0f} por ficha" if fichas else ""
    return [f"  tokens del LLM: {total:.0f} ({partes}){por_ficha}"]
