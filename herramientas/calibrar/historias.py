"""The labelled histories replayed under the running judge (``fichas calibrar --recalificar``).

Each history's attempts are judged in order by the loop's own evaluator agent, exactly as the
loop judges an attempt (``grafo.nodos.comprobar_intento``: the code checks and the mapped
origin; ``veredicto_del_bucle``: the code veto and the score); after each one
``grafo.repeticion.seguir`` says whether to judge the next, keep the history or drop it and why,
so the judge is asked no further than the replay needs. Every answer is cached per attempt
(``<salida>.recalificar.parcial.jsonl``), so a run cut short asks nothing twice; the LLM's
transient failures are retried as the graph retries them, for ``--espera-llm`` at most.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from criterios import atributos_obligatorios, fallos

if TYPE_CHECKING:
    from herramientas.evaluar.ejecucion import Cache

Desenlace = tuple[str, dict[str, Any]]  # (CONSERVADA or a reason, the last judged record)


@dataclass(frozen=True)
class Historia:
    """One labelled ficha and the attempts that led to it: what the replay judges.

    ``intentos`` are the stored attempts in order (``intento``, ``ficha``, ``veredicto``; the
    last one is the labelled ficha, whose verdict is never read); ``evento`` what the agents'
    origin is built from (``grafo.estado.origen_de``)."""

    id: str
    evento: dict[str, Any]
    intentos: list[dict[str, Any]]
    aprobada: bool
    criterios: list[str]
    tipo: str | None


async def repetir(
    settings: Any,
    historias: Sequence[Historia],
    cache: Cache,
    concurrencia: int,
    espera_llm: float,
    max_intentos: int,
) -> dict[str, Desenlace]:
    """Every history replayed, at most ``concurrencia`` at a time: its outcome by id."""
    from grafo import build_chat_model, close_chat_model
    from herramientas.evaluar.ejecucion import Progreso, agentes_de
    from stream.gobierno.clave import llm_settings

    model = build_chat_model(llm_settings(settings))
    agentes = agentes_de(settings, model)
    progreso = Progreso(len(historias), 0)
    semaforo = asyncio.Semaphore(concurrencia)
    finales: dict[str, Desenlace] = {}

    async def una(historia: Historia) -> None:
        async with semaforo:
            finales[historia.id] = await _repetir_una(
                agentes, historia, cache, espera_llm, max_intentos
            )
        progreso.avanzar()

    try:
        async with asyncio.TaskGroup() as grupo:
            for historia in historias:
                grupo.create_task(una(historia))
    finally:
        await close_chat_model(model)
    return finales


async def _repetir_una(
    agentes: Any, historia: Historia, cache: Cache, espera_llm: float, max_intentos: int
) -> Desenlace:
    """Judge the history's attempts in order until the rule says where the new loop ends."""
    from grafo.repeticion import Juicio, seguir

    juicios: list[Juicio] = []
    for j, intento in enumerate(historia.intentos, start=1):
        id_cache = f"{historia.id}#{j}"
        registro = cache.hechos.get(id_cache)
        if registro is None:
            registro = await juzgar(agentes, historia, j, intento["ficha"], espera_llm)
            cache.guardar(id_cache, registro)
        juicios.append(Juicio(registro["veredicto"], bool(registro["invalida"])))
        final = seguir(historia.intentos, juicios, max_intentos)
        if final is not None:
            return final, registro
    raise AssertionError("seguir decides at the last stored attempt")


async def juzgar(
    agentes: Any, historia: Historia, intento: int, ficha: dict[str, Any], espera_llm: float
) -> dict[str, Any]:
    """The running judge on one stored attempt, as the loop judges it, as an evaluator-mode
    record (``fichas calibrar`` reads the labelled attempt's as a candidate): the verdict the
    loop would decide on (``veredicto``), the evaluator's own answer and score, the failed code
    checks, and why the answer was invalid (the loop stops there)."""
    from grafo import Backoff
    from grafo.ejecucion import reintentar_llm
    from grafo.errores import SalidaInvalida
    from grafo.estado import origen_de
    from grafo.nodos import comprobar_intento, veredicto_del_bucle

    evento = historia.evento
    origen = origen_de(evento, atributos_obligatorios(evento["familia"]))
    comprobaciones, mapeado = comprobar_intento(ficha, origen)
    registro: dict[str, Any] = {
        "id": historia.id,
        "caso": historia.id,
        "intento": intento,
        "familia": evento["familia"],
        "tipo": historia.tipo,
        "humano": {"aprobada": historia.aprobada, "criterios": historia.criterios},
        "codigo": [f["criterio"] for f in fallos(comprobaciones)],
    }
    try:
        evaluacion = await reintentar_llm(
            lambda: agentes.evaluar(ficha, comprobaciones, mapeado), Backoff(max_wait_s=espera_llm)
        )
    except SalidaInvalida as exc:
        nada = {"aprobada": False, "problemas": [], "puntuacion": None}
        return registro | {"veredicto": nada, "evaluador": nada, "invalida": exc.detalle[:200]}
    propio = evaluacion.veredicto
    problemas = [p.model_dump() for p in propio.problemas]
    return registro | {
        "veredicto": veredicto_del_bucle(evaluacion, comprobaciones),
        "evaluador": {
            "aprobada": bool(propio.aprobada) and not problemas,
            "criterios": sorted({p["criterio"] for p in problemas}),
            "problemas": problemas,
            "puntuacion": evaluacion.puntuacion,
        },
        "invalida": None,
    }
