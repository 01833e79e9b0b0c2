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
"""

from grafo.agentes import Agentes, Evaluacion
from grafo.chat_model import LLMSettings, build_chat_model, close_chat_model
from grafo.checkpointer import open_checkpointer
from grafo.construccion import construir_grafo
from grafo.ejecucion import (
    LLMHealth,
    LLMUnavailable,
    Procesador,
    Rechazo,
    Resultado,
    ResumenIntento,
)
from grafo.logprobs_probe import LogprobsProbe, probe_logprobs
from grafo.mensajes import Plantillas
from grafo.nodos import Nodos, decidir, origen_revision
from grafo.puerta import (
    FuentePuerta,
    PuertaCerrada,
    clave_puerta,
    modelo_servido,
    muestreo_de,
    muestreos,
)
from grafo.retry import Backoff
from grafo.sensores import NullSensor, Sensor

__all__ = [
    "Agentes",
    "Backoff",
    "Evaluacion",
    "FuentePuerta",
    "LLMHealth",
    "LLMSettings",
    "LLMUnavailable",
    "LogprobsProbe",
    "Nodos",
    "NullSensor",
    "Plantillas",
    "Procesador",
    "PuertaCerrada",
    "Rechazo",
    "Resultado",
    "ResumenIntento",
    "Sensor",
    "build_chat_model",
    "clave_puerta",
    "close_chat_model",
    "construir_grafo",
    "decidir",
    "modelo_servido",
    "muestreo_de",
    "muestreos",
    "open_checkpointer",
    "origen_revision",
    "probe_logprobs",
]
