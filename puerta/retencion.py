"""A person's hold and release of a gate: the records, and whether a gate is held now (pure).

A hold closes one gate (one family or ``*``, under one key) for every worker at once, keeps the
automatic opener from reopening it and writes no label. It lives at the gate's hold id
(``esquemas.estado_puerta.id_retencion``), never at the gate id, so no opening can overwrite it; its
value is an ``EstadoPuerta`` with motivo ``retenida`` or ``liberada``, the person in
``retenida_por``, their reason in ``nota``, and neutral values elsewhere (closed, no λ, the
gate's constants, n = k = 0, ``origen_datos`` ``persona``). Invariants: the newest hold record
of a gate decides (``retenida``: held; ``liberada`` or none: not held); a hold belongs to one
key and does not follow a key change. Why: docs/puerta.md, "Holds".
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from esquemas.constantes import (
    DELTA_PUERTA,
    MOTIVO_PUERTA_LIBERADA,
    MOTIVO_PUERTA_RETENIDA,
    OBJETIVO_PUERTA,
    ORIGEN_PERSONA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_retencion


def registro_retencion(
    familia: str,
    clave: ClavePuerta,
    retener: bool,
    persona: str,
    nota: str | None,
    ahora: datetime,
) -> EstadoPuerta:
    """The hold (``retener``) or release record of one gate, signed by ``persona``.

    ``nota`` is the reason as the person wrote it, stripped; an empty one is null. A name or
    reason longer than the contract allows is refused (``ValueError``), never cut.
    """
    limpia = nota.strip() if nota is not None else None
    return EstadoPuerta(
        familia=familia,
        clave=clave,
        abierta=False,
        umbral=None,
        objetivo=OBJETIVO_PUERTA,
        delta=DELTA_PUERTA,
        n=0,
        k=0,
        origen_datos=ORIGEN_PERSONA,
        motivo=MOTIVO_PUERTA_RETENIDA if retener else MOTIVO_PUERTA_LIBERADA,
        actualizada_en=ahora,
        retenida_por=persona.strip(),
        nota=limpia or None,
    )


def retencion(
    familia: str, clave: ClavePuerta, estados: Mapping[str, EstadoPuerta]
) -> EstadoPuerta | None:
    """The hold record that holds this gate now; None when it is not held.

    Only a record at exactly this gate's hold id, whose value says the same family and key,
    counts: a record of another key never holds this one.
    """
    registro = estados.get(id_retencion(familia, clave))
    if (
        registro is None
        or registro.familia != familia
        or registro.clave != clave
        or registro.motivo != MOTIVO_PUERTA_RETENIDA
    ):
        return None
    return registro
