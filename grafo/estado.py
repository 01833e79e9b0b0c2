"""The state of one ficha's loop, as the parent graph checkpoints it.

Only plain JSON-able dicts and lists live here: the agents' pydantic answers are turned into
dicts with ``model_dump()`` the moment they leave the agent, so no checkpoint ever holds a
class that a future LangGraph might refuse to deserialize. ``intentos`` and ``historial`` are
accumulated by reducers; everything else is overwritten by the node that owns it.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


class EstadoFicha(TypedDict, total=False):
    """Keys written by each node; see ``grafo.nodos`` for who writes what."""

    evento: dict[str, Any]  # the EventoCambio, JSON mode
    origen: dict[str, Any]  # what both agents may rely on: supplier ficha, cifras, family
    ficha: dict[str, Any] | None  # the latest generated ficha (None if the output was invalid)
    comprobaciones: dict[str, dict[str, Any]]  # code checks of the latest ficha
    veredicto: dict[str, Any]  # the latest verdict, code failures merged in
    invalida: dict[str, Any] | None  # set when an agent's answer failed validation
    puerta: dict[str, Any] | None  # the gate (PuertaAplicada, JSON) at the latest evaluation
    # v1.6: that gate was open and the event is in the blind shadow share: the final ficha goes
    # to people unpublished, marked ``muestra_sombra`` (grafo.fuente_puerta.en_muestra_sombra)
    sombra: bool
    intentos: Annotated[int, operator.add]
    historial: Annotated[list[dict[str, Any]], operator.add]
    salida: dict[
        str, Any
    ]  # {"destino": ..., "evento": {...}} written by publicar/enviar_a_revision


def origen_de(evento: dict[str, Any], atributos_obligatorios: tuple[str, ...]) -> dict[str, Any]:
    """The part of the event the agents see: never the supplier name or timestamps."""
    return {
        "sku": evento["sku"],
        "familia": evento["familia"],
        "atributos_obligatorios": list(atributos_obligatorios),
        "ficha_proveedor": evento["ficha_proveedor"],
        "cifras": evento.get("cifras", {}),
    }
