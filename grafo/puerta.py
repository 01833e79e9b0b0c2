"""What the loop needs of the publication gate: the running key, and a source of gates.

The gate itself (certification, the online bound, the topic ``fichas.puerta``) lives outside
the graph; the graph only asks, at each evaluation, "which open gate applies to this family
under the configuration I run with?" through ``FuentePuerta``. The answer is written into the
state by ``evaluar`` and read by the pure ``decidir``, so a run resumed from its checkpoint
decides on the snapshot it took, not on whatever the gate says after the restart.

``clave_puerta`` is here because only the graph knows which prompts it sends: the key holds the
sha256 of the evaluator's exact text and of the generator's configuration, so an edited prompt
(or criteria table, which fills both prompts) is a new key, and a gate certified on the old one
no longer applies. The generator is in the key (contract v1.3) because a threshold certifies
P(people approve | code passes, score >= λ) over the fichas the loop writes: a new generator
writes other fichas, and the old evidence says nothing of them.
"""

from __future__ import annotations

import hashlib
from typing import Protocol

from esquemas.puerta import ClavePuerta, PuertaAplicada
from grafo.mensajes import modo_evaluador, prompt_del_evaluador, prompt_generador

__all__ = ["FuentePuerta", "PuertaCerrada", "clave_puerta", "configuracion_generador"]


def configuracion_generador(ejemplos: bool, limpiar_origen: bool, max_intentos: int) -> str:
    """The text whose sha256 is the key's ``prompt_generador_sha256``.

    The generator's system prompt as sent, followed by the two settings that change which fichas
    reach people without changing that prompt: whether the generator reads the cleaned origin
    (``FICHAS_LIMPIAR_ORIGEN``) and the attempt cap (``FICHAS_MAX_INTENTOS``: a third attempt
    writes fichas the first never would). Either one changed keeps the prompt's text and still
    changes the population a threshold was certified on, so it must be another key.
    """
    ajustes = f"\n\n[fichas: limpiar_origen={limpiar_origen} max_intentos={max_intentos}]\n"
    return prompt_generador(ejemplos) + ajustes


def _sha256(texto: str) -> str:
    """Hex sha256 of a text's UTF-8 bytes."""
    return hashlib.sha256(texto.encode("utf-8")).hexdigest()


def clave_puerta(
    modelo: str,
    rubrica: bool | str,
    criterios_version: str,
    senal: bool = False,
    *,
    ejemplos: bool = False,
    limpiar_origen: bool = False,
    max_intentos: int = 3,
) -> ClavePuerta:
    """The key a gate must carry to apply to a loop run with these settings.

    ``rubrica`` picks the evaluator (and its prompt) the loop runs, by mode name
    (``veredicto``, ``rubrica``, ``citas``) or True for the rubric: each mode's score is
    another quantity, so another key. ``senal``
    (the unsupported-words signal shown to the evaluator) changes its prompt, so its key.
    ``ejemplos``, ``limpiar_origen`` and ``max_intentos`` are the generator's side
    (``configuracion_generador``).
    """
    return ClavePuerta(
        modelo=modelo,
        prompt_evaluador_sha256=_sha256(prompt_del_evaluador(rubrica, senal)),
        criterios_version=criterios_version,
        modo_evaluador=modo_evaluador(rubrica),  # type: ignore[arg-type]
        prompt_generador_sha256=_sha256(
            configuracion_generador(ejemplos, limpiar_origen, max_intentos)
        ),
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
