"""How fast the exclusion e-process catches a bad family, and how rarely it excludes a good one.

A covered family whose exclusion e-process (``puerta.exclusion``) reaches 1/δ loses its coverage
(v1.6: coverage itself needs the family's own certification at the pooled λ, docs/puerta.md).
This Monte Carlo feeds the exclusion mixture one decided approval at a time, each approved by
people with the family's true precision independently, and counts the sequences in which the
mixture reached 1/δ within h approvals: the chance that a family of that precision is excluded
(for a family at or above the objective, a false exclusion: Ville bounds it by δ at every
horizon at once). The last column is the chance that a family is not excluded by its
``MIRADA``-th approval (what the v1.5 rule, which covered after 20 approvals, let through). Also
checked: 5 approved and 5 rejected cross 1/δ in every order.

Run: ``python -m bench.puerta_exclusion`` (a few seconds of CPU); ``--secuencias`` and
``--semilla`` change the size and the seed. The table is in docs/puerta.md, "Coverage".
"""

from __future__ import annotations

import argparse
import itertools
import random
import sys
import time

from estadistica import wilson
from puerta.exclusion import APUESTAS_EXCLUSION, ProcesoExclusion

OBJETIVO = 0.9
DELTA = 0.05
SEMILLA = 3838
SECUENCIAS = 2000
HORIZONTES = (10, 20, 50, 100, 300)
PRECISIONES = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
MIRADA = 20  # approvals: v1.5 covered a family after this many if not excluded


def excluida_en(rng: random.Random, precision: float, horizonte: int) -> int | None:
    """The approval at which the mixture first reached 1/δ (None: not within ``horizonte``)."""
    proceso = ProcesoExclusion(OBJETIVO, DELTA)
    for t in range(1, horizonte + 1):
        proceso.actualizar(rng.random() < precision)
        if proceso.cruzado:
            return t
    return None


def _tasa(veces: int, total: int) -> str:
    """A share with its 95 % Wilson interval."""
    intervalo = wilson(veces, total)
    assert intervalo is not None
    return f"{veces / total:.3f} [{intervalo[0]:.3f}, {intervalo[1]:.3f}]"


def cinco_de_diez() -> bool:
    """Whether 5 approved and 5 rejected reach 1/δ in each of the 252 orders."""
    for rechazos in itertools.combinations(range(10), 5):
        proceso = ProcesoExclusion(OBJETIVO, DELTA)
        for i in range(10):
            proceso.actualizar(i not in rechazos)
        if not proceso.cruzado:
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    """Print the table as Markdown."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--secuencias", type=int, default=SECUENCIAS)
    parser.add_argument("--semilla", type=int, default=SEMILLA)
    args = parser.parse_args(argv)
    inicio = time.process_time()
    if not cinco_de_diez():
        sys.exit("5 approved / 5 rejected did not exclude in some order")
    print(
        f"objetivo {OBJETIVO}, delta {DELTA}, bets {APUESTAS_EXCLUSION} (fractions of "
        f"1/(1 - objetivo)), {args.secuencias} sequences per row, seed {args.semilla}; "
        "5 approved / 5 rejected exclude in all 252 orders\n"
    )
    cabecera = " | ".join(f"within {h}" for h in HORIZONTES)
    print(f"| true precision | {cabecera} | coverable at {MIRADA} |")
    print("| --- |" + " --- |" * (len(HORIZONTES) + 1))
    for precision in PRECISIONES:
        rng = random.Random(f"{args.semilla}|{precision}")
        momentos = [excluida_en(rng, precision, max(HORIZONTES)) for _ in range(args.secuencias)]
        celdas = [
            _tasa(sum(t is not None and t <= h for t in momentos), len(momentos))
            for h in HORIZONTES
        ]
        cubribles = sum(t is None or t > MIRADA for t in momentos)
        print(f"| {precision} | {' | '.join(celdas)} | {_tasa(cubribles, len(momentos))} |")
    print(f"\n{time.process_time() - inicio:.0f} s of CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
