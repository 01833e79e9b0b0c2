"""Pydantic models of the contract: the input event, the agents' answers, the outputs.

Contract constants (destinations, reasons, codes, limits) live in ``esquemas.constantes``; the
wire format every writer uses (value bytes, headers per record kind, the tolerant reader) in
``esquemas.wire``.
This package depends on nothing else of the project; ``criterios``, ``grafo`` and
``stream`` build on it.
"""

from esquemas.entrada import EventoInvalido, leer_evento, payload_texto
from esquemas.evento import EventoCambio, FichaProveedor
from esquemas.ficha import Ficha, Problema, Veredicto
from esquemas.puerta import ClavePuerta, EstadoPuerta, PuertaAplicada, id_puerta, id_retencion
from esquemas.salidas import (
    DecisionRevision,
    ErrorRechazo,
    EventoRechazado,
    Evidencia,
    FichaEnRevision,
    FichaPublicada,
    Intento,
    Origen,
    OrigenMensaje,
    RevisionHumana,
)

__all__ = [
    "ClavePuerta",
    "DecisionRevision",
    "ErrorRechazo",
    "EstadoPuerta",
    "EventoCambio",
    "EventoInvalido",
    "EventoRechazado",
    "Evidencia",
    "Ficha",
    "FichaEnRevision",
    "FichaProveedor",
    "FichaPublicada",
    "Intento",
    "Origen",
    "OrigenMensaje",
    "Problema",
    "PuertaAplicada",
    "RevisionHumana",
    "Veredicto",
    "id_puerta",
    "id_retencion",
    "leer_evento",
    "payload_texto",
]
