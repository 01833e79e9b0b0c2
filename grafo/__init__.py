"""The ficha loop as a LangGraph graph: generator, code checks, evaluator with veto, decidir.

Knows nothing of Kafka: the caller hands it ``EventoCambio`` objects and emits the outcome the
graph leaves in its state. The modules: ``estado``, ``mensajes`` (what each agent is shown),
``prompts`` (the templates), ``prompt_archivo`` (a file's text in a template's place, checked
at every command's start), ``chat_model``, ``agentes``, ``rubrica``, ``citas`` and
``puntuacion`` (the evaluator's modes and score), ``nodos`` and ``construccion`` (the graph),
``repeticion`` (where the loop would stop on a stored history under another judge),
``checkpointer``, ``ejecucion`` (one event through it), ``retry`` and ``errores`` (LLM
failures), ``intentos`` (attempt summaries), ``contexto`` (the event in every log line),
``sensores`` (hooks), ``fuente_puerta`` (the running key and the source of gates),
``identidad`` (which model the server serves), ``logprobs_probe`` (the start-up check of the
evaluator's log-probabilities).

Imports ``esquemas``, ``criterios`` and ``migraciones`` (the checkpointer's pool and schema
lock); ``stream`` (never the prompts), ``herramientas`` and ``harness`` import it.
docs/grafo.md holds the why. The public names below load on first use (PEP 562), so
``grafo.retry`` or ``grafo.intentos`` load without LangChain, LangGraph and openai (about 2 s
of CPU a process) for commands that never call an agent.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grafo.agentes import Agentes as Agentes
    from grafo.agentes import Evaluacion as Evaluacion
    from grafo.chat_model import LLMSettings as LLMSettings
    from grafo.chat_model import build_chat_model as build_chat_model
    from grafo.chat_model import close_chat_model as close_chat_model
    from grafo.checkpointer import open_checkpointer as open_checkpointer
    from grafo.construccion import construir_grafo as construir_grafo
    from grafo.ejecucion import LLMHealth as LLMHealth
    from grafo.ejecucion import Procesador as Procesador
    from grafo.ejecucion import Resultado as Resultado
    from grafo.fuente_puerta import FuentePuerta as FuentePuerta
    from grafo.fuente_puerta import PuertaCerrada as PuertaCerrada
    from grafo.fuente_puerta import clave_puerta as clave_puerta
    from grafo.fuente_puerta import modelo_servido as modelo_servido
    from grafo.fuente_puerta import muestreo_de as muestreo_de
    from grafo.fuente_puerta import muestreos as muestreos
    from grafo.intentos import Rechazo as Rechazo
    from grafo.intentos import ResumenIntento as ResumenIntento
    from grafo.logprobs_probe import LogprobsProbe as LogprobsProbe
    from grafo.logprobs_probe import probe_logprobs as probe_logprobs
    from grafo.mensajes import Plantillas as Plantillas
    from grafo.nodos import Nodos as Nodos
    from grafo.nodos import decidir as decidir
    from grafo.nodos import origen_revision as origen_revision
    from grafo.retry import Backoff as Backoff
    from grafo.retry import LLMUnavailable as LLMUnavailable
    from grafo.sensores import NullSensor as NullSensor
    from grafo.sensores import Sensor as Sensor

# Where each public name is defined.
_DONDE: dict[str, str] = {
    "Agentes": "grafo.agentes",
    "Backoff": "grafo.retry",
    "Evaluacion": "grafo.agentes",
    "FuentePuerta": "grafo.fuente_puerta",
    "LLMHealth": "grafo.ejecucion",
    "LLMSettings": "grafo.chat_model",
    "LLMUnavailable": "grafo.retry",
    "LogprobsProbe": "grafo.logprobs_probe",
    "Nodos": "grafo.nodos",
    "NullSensor": "grafo.sensores",
    "Plantillas": "grafo.mensajes",
    "Procesador": "grafo.ejecucion",
    "PuertaCerrada": "grafo.fuente_puerta",
    "Rechazo": "grafo.intentos",
    "Resultado": "grafo.ejecucion",
    "ResumenIntento": "grafo.intentos",
    "Sensor": "grafo.sensores",
    "build_chat_model": "grafo.chat_model",
    "clave_puerta": "grafo.fuente_puerta",
    "close_chat_model": "grafo.chat_model",
    "construir_grafo": "grafo.construccion",
    "decidir": "grafo.nodos",
    "modelo_servido": "grafo.fuente_puerta",
    "muestreo_de": "grafo.fuente_puerta",
    "muestreos": "grafo.fuente_puerta",
    "open_checkpointer": "grafo.checkpointer",
    "origen_revision": "grafo.nodos",
    "probe_logprobs": "grafo.logprobs_probe",
}

__all__ = sorted(_DONDE)


def __getattr__(nombre: str) -> Any:
    """Import the submodule that defines ``nombre`` the first time it is asked for."""
    try:
        modulo = _DONDE[nombre]
    except KeyError:
        raise AttributeError(f"module 'grafo' has no attribute {nombre!r}") from None
    valor = getattr(importlib.import_module(modulo), nombre)
    globals()[nombre] = valor
    return valor
