"""One certifier round: recomputing a gate's sequence from scratch against advancing its state.

Today the reviewer app recomputes every gate's sequence from the whole store every round
(``certificar_secuencia`` over every decided shadow ficha), so its CPU grows with history. With
the stored state (``puerta.secuencial.EstadoSecuencia``) a round reads the state's JSON,
advances it by the newly decided fichas only (``avanzar``), reads the walk out (``leer``) and
writes the JSON back. This measures the CPU of one round of each, for one gate, with
``--historia`` stored decided fichas (100,000 by default) and ``--nuevas`` new ones (100), and
checks that both give the same result. The store's part (reading the rows, writing the state)
is not measured here: it is the same few rows either way for the stored state, and every row
for the recomputation.

Run: ``python -m bench.puerta_avance`` on an idle machine (CPU time; other load skews it).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import Any

from puerta.secuencial import (
    EstadoSecuencia,
    Observacion,
    ResultadoSecuencial,
    avanzar,
    certificar_secuencia,
    inicial,
    leer,
)

OBJETIVO = 0.9
DELTA = 0.05
SEMILLA = 38


def _fichas(rng: random.Random, cuantas: int) -> list[Observacion]:
    """Decided fichas with scores over the grid and precision 0.95."""
    return [Observacion(rng.uniform(0.5, 1.0), True, rng.random() < 0.95) for _ in range(cuantas)]


def _cpu(funcion: Callable[[], Any], repeticiones: int) -> tuple[float, Any]:
    """Median CPU seconds of ``funcion`` over ``repeticiones`` runs, and its last result."""
    tiempos, resultado = [], None
    for _ in range(repeticiones):
        inicio = time.process_time()
        resultado = funcion()
        tiempos.append(time.process_time() - inicio)
    return sorted(tiempos)[len(tiempos) // 2], resultado


def main(argv: list[str] | None = None) -> int:
    """Print both rounds' CPU; exit 1 if their results differ."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--historia", type=int, default=100_000)
    parser.add_argument("--nuevas", type=int, default=100)
    parser.add_argument("--repeticiones", type=int, default=5)
    args = parser.parse_args(argv)
    rng = random.Random(SEMILLA)
    viejas, nuevas = _fichas(rng, args.historia), _fichas(rng, args.nuevas)
    todas = viejas + nuevas
    guardado = avanzar(inicial(OBJETIVO, DELTA), enumerate(viejas)).a_json()
    llegadas = list(enumerate(nuevas, start=len(viejas)))

    def de_cero() -> ResultadoSecuencial:
        return certificar_secuencia(todas, OBJETIVO, DELTA)

    def avanzado() -> ResultadoSecuencial:
        estado = avanzar(EstadoSecuencia.de_json(guardado), llegadas)
        estado.a_json()
        return leer(estado)

    cpu_cero, res_cero = _cpu(de_cero, args.repeticiones)
    cpu_avance, res_avance = _cpu(avanzado, args.repeticiones)
    print(f"one gate, {args.historia} stored decided fichas, {args.nuevas} new ones:")
    print(f"  recomputed from scratch: {cpu_cero * 1000:.1f} ms of CPU")
    print(f"  stored state advanced:   {cpu_avance * 1000:.2f} ms of CPU")
    if res_cero != res_avance:
        print("the two results differ", file=sys.stderr)
        return 1
    abierta = f"open at λ = {res_cero.umbral} (n {res_cero.n}, k {res_cero.k})"
    print(f"  both give: gate {abierta if res_cero.umbral is not None else 'closed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
