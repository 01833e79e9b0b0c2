"""The gate's sequence recomputed from every stored row: the reference for the certifier's
incremental rounds (issue 38), used by their test and their benchmark.

Before issue 38 every round read all of a key's rows and rebuilt each sequence from scratch;
the certifier now advances stored states with the new decisions only. This is that old
computation, kept as the oracle both are compared with (docs/puerta.md).
"""

from __future__ import annotations

from collections.abc import Iterable

from puerta.secuencial import Observacion
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
