"""Pydantic models of the contract: the input event, the agents' answers, the outputs.

This package depends on nothing else of the project; ``criterios``, ``grafo`` and
``stream`` build on it.
"""

from esquemas.entrada import EventoInvalido, leer_evento, payload_texto
from esquemas.evento import EventoCambio, FichaProveedor
from esquemas.ficha import Ficha, Problema, Veredicto
from esquemas.salidas import (
    ErrorRechazo,
    EventoRechazado,
    FichaEnRevision,
    FichaPublicada,
    Intento,
    OrigenMensaje,
)

__all__ = [
    "ErrorRechazo",
    "EventoCambio",
    "EventoInvalido",
    "EventoRechazado",
    "Ficha",
    "FichaEnRevision",
    "FichaProveedor",
    "FichaPublicada",
    "Intento",
    "OrigenMensaje",
    "Problema",
    "Veredicto",
    "leer_evento",
    "payload_texto",
]
