"""Which gate state applies to a ficha: its family's own, or the pooled one; none means closed.

Pure, so the worker decides on a snapshot of ``fichas.puerta`` (``puerta.topico``) with no I/O.

Rule (docs/puerta.md):

- The family's own record decides when it is open (its data certified alone), or when it was
  closed by the online bound (motivo ``cota_en_linea_bajo_objetivo``): the sample showed that
  this family's automatic publications are not good enough, and the pooled gate must not
  reopen it behind the monitor's back.
- Otherwise (no own record, or one closed for lack of data or of certification) the pooled
  ``*`` record decides.
- Only records of the running key count. Their id embeds the key, so records of another model,
  prompt, criteria version or evaluator mode never match; a record whose value disagrees with
  its id is ignored too. No record at all: closed (the caller gets None).
"""

from __future__ import annotations

from collections.abc import Mapping

from esquemas.constantes import FAMILIA_TODAS, MOTIVO_PUERTA_COTA_BAJA
from esquemas.puerta import ClavePuerta, EstadoPuerta, PuertaAplicada, id_puerta


def _registro(
    familia: str, clave: ClavePuerta, estados: Mapping[str, EstadoPuerta]
) -> EstadoPuerta | None:
    """The record of exactly this family and key, if there is one and it is what its id says."""
    estado = estados.get(id_puerta(familia, clave))
    if estado is None or estado.familia != familia or estado.clave != clave:
        return None
    return estado


def puerta_para(
    familia: str, clave: ClavePuerta, estados: Mapping[str, EstadoPuerta]
) -> EstadoPuerta | None:
    """The gate state that governs ``familia`` under the running ``clave`` (None: closed)."""
    propia = _registro(familia, clave, estados)
    if propia is not None and (propia.abierta or propia.motivo == MOTIVO_PUERTA_COTA_BAJA):
        return propia
    return _registro(FAMILIA_TODAS, clave, estados)


def umbral_aplicable(estado: EstadoPuerta | None) -> PuertaAplicada | None:
    """What a published ficha carries of an open gate; None when the gate is closed.

    ``certificada_en`` is when the state was written (``actualizada_en``): the moment this
    threshold became the one in force.
    """
    if estado is None or not estado.abierta or estado.umbral is None:
        return None
    return PuertaAplicada(
        umbral=estado.umbral,
        objetivo=estado.objetivo,
        clave=estado.clave,
        familia=estado.familia,
        certificada_en=estado.actualizada_en,
        n=estado.n,
        k=estado.k,
    )
