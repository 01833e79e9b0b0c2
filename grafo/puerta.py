"""What the loop needs of the publication gate: the running key, and a source of gates.

The gate itself (certification, the online bound, the topic ``fichas.puerta``) lives outside
the graph; the graph only asks, at each evaluation, "which open gate applies to this family
under the configuration I run with?" through ``FuentePuerta``. The answer is written into the
state by ``evaluar`` and read by the pure ``decidir``, so a run resumed from its checkpoint
decides on the snapshot it took, not on whatever the gate says after the restart.

``clave_puerta`` is here because only the graph knows which evaluator prompt it sends: the
key is the sha256 of that exact text, so an edited prompt (or criteria table, which fills the
prompt) is a new key, and a gate certified on the old one no longer applies.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from esquemas.puerta import ClavePuerta, PuertaAplicada
from grafo.mensajes import prompt_del_evaluador

__all__ = ["FuentePuerta", "PuertaCerrada", "clave_puerta"]


def clave_puerta(
    modelo: str, rubrica: bool, criterios_version: str, senal: bool = False
) -> ClavePuerta:
    """The key a gate must carry to apply to a loop run with these settings.

    ``rubrica`` picks the evaluator (and its prompt) the loop runs: the rubric evaluator's
    score is another quantity than the single verdict's, so it is another key. ``senal``
    (the unsupported-words signal shown to the evaluator) changes its prompt, so its key.
    """
    prompt = prompt_del_evaluador(rubrica, senal)
    return ClavePuerta(
        modelo=modelo,
        prompt_evaluador_sha256=hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
        criterios_version=criterios_version,
        modo_evaluador="rubrica" if rubrica else "veredicto",
    )


class FuentePuerta(Protocol):
    """Where the loop reads the gate from: one call per evaluation, cheap and never blocking.

    ``umbral`` answers the open gate that applies to ``familia`` under the running key, or
    None when the gate is closed (no record, a record for another key, or closed by its
    record). Implementations: the worker's view of ``fichas.puerta``, an audit file for the
    offline command, ``PuertaCerrada``.
    """

    def umbral(self, familia: str) -> PuertaAplicada | None:
        """The open gate of ``familia``, or None: closed."""


class PuertaCerrada:
    """No gate at all: every family is closed (the default when nothing says otherwise)."""

    def umbral(self, familia: str) -> PuertaAplicada | None:
        """Always closed."""
        return None
