"""The ficha loop as a LangGraph graph: generator, code checks, evaluator with veto, decidir.

Knows nothing of Kafka: the caller hands it ``EventoCambio`` objects and emits the outcome the
graph leaves in its state. Public entry points: ``build_chat_model``, ``Agentes``, ``Nodos``,
``construir_grafo``, ``open_checkpointer`` and ``Procesador``; for the publication gate,
``clave_puerta`` (the running key, with ``modelo_servido`` and ``muestreos`` for the served
model and the request settings; ``grafo.identidad`` asks the server which model it serves) and
``FuentePuerta`` (where the gate is read from); ``Plantillas``, texts that replace the
package's prompt templates (the caller reads them: from ``FICHAS_PROMPT_*_ARCHIVO``);
``probe_logprobs``, the start-up check that the server gives the evaluator's log-probabilities;
``origen_revision``, the one builder of what a reviewer compares a ficha against.

Imports ``esquemas``, ``criterios`` and ``migraciones`` (the checkpointer's pool and schema
lock); ``stream`` (never the prompts), ``herramientas`` and ``harness`` import it.
docs/grafo.md holds the why.

The names below are imported on first use (PEP 562): a submodule such as ``grafo.retry`` or
``grafo.intentos`` loads without LangChain, LangGraph and openai (about 2 s of CPU a process),
so ``fichas calibrar``, ``informe`` or ``producir`` do not pay for the agents they never call.
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
    from grafo.intentos import Rechazo as Rechazo
    from grafo.intentos import ResumenIntento as ResumenIntento
    from grafo.logprobs_probe import LogprobsProbe as LogprobsProbe
    from grafo.logprobs_probe import probe_logprobs as probe_logprobs
    from grafo.mensajes import Plantillas as Plantillas
    from grafo.nodos import Nodos as Nodos
    from grafo.nodos import decidir as decidir
    from grafo.nodos import origen_revision as origen_revision
    from grafo.puerta import FuentePuerta as FuentePuerta
    from grafo.puerta import PuertaCerrada as PuertaCerrada
    from grafo.puerta import clave_puerta as clave_puerta
    from grafo.puerta import modelo_servido as modelo_servido
    from grafo.puerta import muestreo_de as muestreo_de
    from grafo.puerta import muestreos as muestreos
    from grafo.retry import Backoff as Backoff
    from grafo.retry import LLMUnavailable as LLMUnavailable
    from grafo.sensores import NullSensor as NullSensor
    from grafo.sensores import Sensor as Sensor

# Where each public name is defined.
_DONDE: dict[str, str] = {
    "Agentes": "grafo.agentes",
    "Backoff": "grafo.retry",
    "Evaluacion": "grafo.agentes",
    "FuentePuerta": "grafo.puerta",
    "LLMHealth": "grafo.ejecucion",
    "LLMSettings": "grafo.chat_model",
    "LLMUnavailable": "grafo.retry",
    "LogprobsProbe": "grafo.logprobs_probe",
    "Nodos": "grafo.nodos",
    "NullSensor": "grafo.sensores",
    "Plantillas": "grafo.mensajes",
    "Procesador": "grafo.ejecucion",
    "PuertaCerrada": "grafo.puerta",
    "Rechazo": "grafo.intentos",
    "Resultado": "grafo.ejecucion",
    "ResumenIntento": "grafo.intentos",
    "Sensor": "grafo.sensores",
    "build_chat_model": "grafo.chat_model",
    "clave_puerta": "grafo.puerta",
    "close_chat_model": "grafo.chat_model",
    "construir_grafo": "grafo.construccion",
    "decidir": "grafo.nodos",
    "modelo_servido": "grafo.puerta",
    "muestreo_de": "grafo.puerta",
    "muestreos": "grafo.puerta",
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
