"""Reviewer decisions a family needs in shadow mode before its gate opens, by the model's scores.

The gate opens (``puerta.secuencial``, looked at after every decision) once the grid's
strictest threshold, 0.95, has enough people-approved fichas: the fichas scored below it do
not count there. So the decisions a family needs depend on two properties of the model: the
true precision of what it approves, and the share ``q`` of decided fichas (code checks passed)
that it scores at 0.95 or more. This Monte Carlo gives the median and p90 of decisions to the
first opening for a grid of both, with scores uniform on [1 - 0.05/q, 1] (so a share q reaches
0.95) and labels independent of the score (the same precision at every threshold), as
``bench.puerta_secuencial``'s ``repartidas`` rows. Counts, not times: load does not change them.

Run: ``python -m bench.puerta_decisiones`` (about a minute of CPU). The table is in
docs/despliegue.md, "Capacidad".
"""

from __future__ import annotations

import argparse
import math
import random
import time

from estadistica import percentile
from puerta.secuencial import REJILLA, Observacion, SecuenciaPuerta

OBJETIVO = 0.9
DELTA = 0.05
SEMILLA = 2029
SECUENCIAS = 1000
HORIZONTE = 6000
PRECISIONES = (0.95, 0.97, 0.99)
CUOTAS = (1.0, 0.5, 0.25, 0.1)


def decisiones_hasta_abrir(rng: random.Random, precision: float, cuota: float) -> int | None:
    """Decisions until the sequential opener first opens (None: not within the horizon)."""
    abridor = SecuenciaPuerta(OBJETIVO, DELTA)
    inferior = 1 - (1 - REJILLA[0]) / cuota
    for t in range(1, HORIZONTE + 1):
        puntuacion = rng.uniform(inferior, 1.0)
        abridor.actualizar(Observacion(puntuacion, True, rng.random() < precision))
        if abridor.umbral() is not None:
            return t
    return None


def _celda(semilla: int, precision: float, cuota: float, secuencias: int) -> str:
    """Median / p90 of decisions to open over the sequences (not opened counts as never)."""
    rng = random.Random(f"{semilla}|{precision}|{cuota}")
    tiempos = [decisiones_hasta_abrir(rng, precision, cuota) for _ in range(secuencias)]
    valores = [math.inf if t is None else t for t in tiempos]
    sin_abrir = sum(t is None for t in tiempos)

    def texto(q: float) -> str:
        v = percentile(valores, q)
        return f"> {HORIZONTE}" if v == math.inf else f"{v:.0f}"

    return f"{texto(0.5)} / {texto(0.9)}" + (f" ({sin_abrir} never)" if sin_abrir else "")


def main(argv: list[str] | None = None) -> int:
    """Print the table as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secuencias", type=int, default=SECUENCIAS)
    parser.add_argument("--semilla", type=int, default=SEMILLA)
    args = parser.parse_args(argv)
    inicio = time.process_time()
    print(
        f"objetivo {OBJETIVO}, delta {DELTA}, {args.secuencias} sequences per cell, seed "
        f"{args.semilla}; decisions to the first opening, median / p90\n"
    )
    print("| share scored ≥ 0.95 | " + " | ".join(f"precision {p}" for p in PRECISIONES) + " |")
    print("| --- |" + " --- |" * len(PRECISIONES))
    for cuota in CUOTAS:
        celdas = [_celda(args.semilla, p, cuota, args.secuencias) for p in PRECISIONES]
        print(f"| {cuota:g} | " + " | ".join(celdas) + " |")
    print(f"\nCPU: {time.process_time() - inicio:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
