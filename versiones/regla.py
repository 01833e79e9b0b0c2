"""The claim rule, pure: what an event may become given what the store knows.

An event is the same event when its SKU, version and content's fingerprint (``Clave``) are;
``dictaminar`` decides, once before the graph and once at the claim, whether it is new,
already decided (``REGISTRADO``: emit the stored outcome), obsolete (a newer version of the SKU
is known: ``obsoleta``, the one rule of an obsolete version) or a reused ``event_id``.
``decidir_reclamo`` is that rule as the store's compare-and-set applies it. No I/O here: the
store (``versiones.almacen``) reads what the rule needs and writes what it decided.
The long reason: docs/stream.md, "The version store and the outcome records".
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from esquemas import EventoCambio
from esquemas.canonico import sha256_canonico


def huella(evento: EventoCambio) -> str:
    """Fingerprint of an event's content: sha256 of its canonical JSON (key order ignored)."""
    return sha256_canonico(evento.model_dump(mode="json"))


@dataclass(frozen=True)
class Clave:
    """What makes an event the same event: its SKU, its version and its content's fingerprint."""

    sku: str
    version: int
    huella: str

    @classmethod
    def de_evento(cls, evento: EventoCambio) -> Clave:
        """The key of an event as it arrived."""
        return cls(evento.sku, evento.version, huella(evento))


@dataclass(frozen=True)
class ResultadoGuardado:
    """The stored outcome of one ``event_id``: what was decided, for which input."""

    event_id: str
    sku: str
    version: int
    huella: str
    destino: str
    salida: dict[str, Any]

    @property
    def clave(self) -> Clave:
        """The key of the event this outcome was decided for."""
        return Clave(self.sku, self.version, self.huella)


class Dictamen(enum.Enum):
    """What the claim rule decided (not ``esquemas.Veredicto``, the evaluator's judgement)."""

    NUEVO = "nuevo"  # nothing decided yet: run it (before the graph), record it (at the claim)
    REGISTRADO = "registrado"  # already decided for this event_id: emit the stored outcome
    OBSOLETO = "obsoleto"  # a newer version of the SKU is known: emit nothing
    REUTILIZADO = "reutilizado"  # the event_id was seen with another SKU, version or content


@dataclass(frozen=True)
class Reclamo:
    """The decision and the outcome to emit (the stored one when it already existed)."""

    dictamen: Dictamen
    guardado: ResultadoGuardado | None


def obsoleta(version: int, vigente: int | None) -> bool:
    """The one rule of an obsolete version: a newer version of the same SKU is known.

    ``vigente`` is the newest version known elsewhere (queued behind the event, recorded in
    the store, or None when there is none); ``dictaminar`` is its one caller. Versions start at
    1 (``EventoCambio.version``), so a stored 0 never makes one obsolete.
    """
    return vigente is not None and vigente > version


def mas_nueva(*versiones: int | None) -> int | None:
    """The newest of the versions known (None when none is)."""
    return max((v for v in versiones if v is not None), default=None)


def dictaminar(clave: Clave, vigente: int | None, existente: ResultadoGuardado | None) -> Dictamen:
    """The claim rule, pure: asked once before the graph and once at the claim.

    Those are the two steps after which the answer can change: before the graph it is asked
    with what the lane and the store know (an event the rule does not let through costs no
    LLM call); at the claim, under the SKU's lock, with what the store knows after the run (a
    newer version handled meanwhile, or another run that won). An ``event_id`` seen with
    another SKU, version or content is refused first, then a newer version makes it obsolete.
    """
    if existente is not None and existente.clave != clave:
        return Dictamen.REUTILIZADO
    if obsoleta(clave.version, vigente):
        return Dictamen.OBSOLETO
    return Dictamen.REGISTRADO if existente is not None else Dictamen.NUEVO


def decidir_reclamo(
    guardado: ResultadoGuardado, stored_version: int | None, existente: ResultadoGuardado | None
) -> Reclamo:
    """The compare-and-set of the store: ``dictaminar``, and the outcome it lets emit."""
    dictamen = dictaminar(guardado.clave, stored_version, existente)
    if dictamen is Dictamen.NUEVO:
        return Reclamo(dictamen, guardado)
    if dictamen is Dictamen.OBSOLETO:
        return Reclamo(dictamen, None)
    return Reclamo(dictamen, existente)
