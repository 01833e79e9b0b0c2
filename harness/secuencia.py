"""The gate's sequence recomputed from every stored row: the reference for the certifier's
incremental rounds (issue 38), used by their test and their benchmark; and the gate's numbers
tests need (approvals to open or cover, incorrect verdicts to close), asked of the code.

Before issue 38 every round read all of a key's rows and rebuilt each sequence from scratch;
the certifier now advances stored states with the new decisions only. This is that old
computation, kept as the oracle both are compared with (docs/puerta.md).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from esquemas.constantes import DELTA_PUERTA, OBJETIVO_PUERTA
from puerta.apuestas import LIMITE_FALTAN, ProcesoE
from puerta.cierre import Cierre
from puerta.secuencial import Observacion, certificar_secuencia
from revision.almacen.cola import FilaSecuencia
from revision.certificador.secuencias import cuenta, observacion


def secuencia_de_cero(
    filas: Iterable[FilaSecuencia], desde: int
) -> tuple[list[Observacion], int, int, int, str | None]:
    """The decided prefix of the rows from order ``desde`` on, and the counts: arrived,
    decided, pending, and the first ficha still open (which ends the prefix)."""
    prefijo: list[Observacion] = []
    llegadas = decididas = pendientes = 0
    bloqueo: str | None = None
    for fila in filas:
        if fila.orden < desde:
            continue
        relevante = cuenta(fila)
        llegadas += relevante
        obs = observacion(fila)
        if obs is None:
            pendientes += relevante
            if relevante and bloqueo is None:
                bloqueo = fila.event_id
            continue
        if bloqueo is None:
            prefijo.append(obs)
            decididas += relevante
    return prefijo, llegadas, decididas, pendientes, bloqueo


@functools.cache
def aprobaciones_para_abrir(
    objetivo: float = OBJETIVO_PUERTA, delta: float = DELTA_PUERTA, puntuacion: float = 0.97
) -> int:
    """Consecutive approvals at ``puntuacion`` that open a fresh gate (the walk over the
    grid): the opener's arithmetic asked of ``puerta.secuencial``, never copied into a test."""
    obs = Observacion(puntuacion, True, True)
    for m in range(1, LIMITE_FALTAN):
        if certificar_secuencia([obs] * m, objetivo, delta).abierta:
            return m
    raise ValueError(f"no run of approvals at {puntuacion} opens a gate")


def aprobaciones_para_cubrir(objetivo: float = OBJETIVO_PUERTA, delta: float = DELTA_PUERTA) -> int:
    """Consecutive approvals at the pooled λ that cover a family: its own one-λ e-process
    crossing 1/δ (``puerta.cobertura``)."""
    faltan = ProcesoE(objetivo, delta).faltan()
    assert faltan is not None
    return faltan


def incorrectas_para_cerrar(
    objetivo: float = OBJETIVO_PUERTA, delta: float = DELTA_PUERTA, antes: Sequence[bool] = ()
) -> int:
    """Incorrect sampled verdicts in a row that close a gate after the verdicts ``antes`` (in
    publication order; none: right after its certification, where the bound at δ/2 closes
    first), as ``puerta.cierre`` says."""
    cierre = Cierre(objetivo, delta)
    for correcta in antes:
        cierre.anotar(correcta)
    if cierre.motivo() is not None:
        raise ValueError("the verdicts before close the gate already")
    for i in range(1, LIMITE_FALTAN):
        cierre.anotar(False)
        if cierre.motivo() is not None:
            return i
    raise ValueError("no run of incorrect verdicts closes a gate")
