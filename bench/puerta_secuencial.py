"""Opening a gate while looking after every decision: the anytime-valid opener against re-run LTT.

The reviewer app looks at the shadow-mode decisions after every one of them and opens the gate
the first time the evidence allows. This Monte Carlo measures what that does to the guarantee
of two openers, on the same simulated sequences:

- ``secuencial``: ``puerta.secuencial`` (betting e-process per threshold of ``REJILLA``,
  fixed-sequence walk), asked after every decision;
- ``LTT repetido``: the fixed-n Learn-then-Test of ``puerta.certificacion`` re-run on every
  decision so far after each new one, opening at the first pass (optional stopping).

The sequences: every decided ficha passed its code checks; people approve it with probability
``precision`` (the true precision), independently of everything else; its score is uniform on
an interval, independent of the label, so the true precision is the same at every threshold:

- ``sobre la rejilla``: scores uniform on [0.95, 1], above every threshold of the grid, so each
  decision is an approval at every λ (distinct scores still give LTT a threshold per ficha);
- ``repartidas``: scores uniform on [0.5, 1], so the grid's strictest λ (0.95) sees a tenth of
  the decisions (what a grid's strict end costs).

Measured: with precision below the objective (0.85, 0.88) every opening is false, so the
false-open rate is the share of sequences opened at some look within the horizon; with
precision above it (0.95, 0.99), the decisions until the first opening (median and p90, over
the sequences that opened within the longer horizon, with the count that did not).

Run: ``python -m bench.puerta_secuencial`` (about a minute of CPU); ``--secuencias`` and
``--semilla`` change the size and the seed. The table is in docs/puerta.md.

The repeated LTT uses a fast walk equivalent to ``certificar`` (same p-values, same start at
``minimo_aprobaciones``, same stop); the run checks it against ``certificar`` itself on the
first sequences of every cell and stops with an error if they ever differ.
"""

from __future__ import annotations

import argparse
import bisect
import functools
import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from estadistica import percentile, wilson
from puerta.certificacion import Candidata, certificar, cola_binomial, minimo_aprobaciones
from puerta.secuencial import REJILLA, Observacion, SecuenciaPuerta

OBJETIVO = 0.9
DELTA = 0.05
SEMILLA = 2029
SECUENCIAS = 1000
HORIZONTE_NULO = 500  # decisions watched when precision is below the objective
HORIZONTE_POTENCIA = 2000  # decisions allowed to open when it is above
COMPROBADAS = 2  # sequences per cell where the fast LTT walk is checked against ``certificar``
ESCENARIOS: dict[str, tuple[float, float]] = {
    "sobre la rejilla": (0.95, 1.0),
    "repartidas": (0.5, 1.0),
}


@functools.cache
def _p(k: int, n: int) -> float:
    """The LTT p-value of ``puerta.certificacion``, cached: the walk asks the same ones often."""
    return cola_binomial(k, n, 1 - OBJETIVO)


class LTTRepetido:
    """The fixed-n LTT walk over every decision so far, kept sorted as decisions arrive."""

    def __init__(self) -> None:
        self.minimo = minimo_aprobaciones(OBJETIVO, DELTA)
        self.ordenadas: list[tuple[float, bool]] = []  # (-score, approved), strictest first

    def actualizar(self, puntuacion: float, aprobada: bool) -> None:
        """Add one decided ficha (distinct continuous scores: no ties)."""
        bisect.insort(self.ordenadas, (-puntuacion, aprobada))

    def umbral(self) -> float | None:
        """What ``certificar`` would certify on the decisions so far."""
        ultimo: float | None = None
        k = 0
        for n, (negativa, aprobada) in enumerate(self.ordenadas, start=1):
            k += not aprobada
            if n < self.minimo:
                continue
            if _p(k, n) > DELTA:
                break
            ultimo = -negativa
        return ultimo

    def comprobar(self) -> None:
        """Stop the run if the fast walk and ``certificar`` disagree on the decisions so far."""
        candidatas = [Candidata(-s, a) for s, a in self.ordenadas]
        esperado = certificar(candidatas, OBJETIVO, DELTA).umbral
        if esperado != self.umbral():
            sys.exit(f"fast LTT walk disagrees with certificar: {self.umbral()} != {esperado}")


@dataclass
class Apertura:
    """When each opener first opened on one sequence (None: not within the horizon)."""

    secuencial: int | None = None
    ltt: int | None = None
    en_el_tope: int | None = None  # approvals at the grid's strictest λ when ``secuencial`` opened


def simular(
    rng: random.Random,
    precision: float,
    puntuaciones: tuple[float, float],
    horizonte: int,
    comprobar: bool,
) -> Apertura:
    """One sequence, both openers looking after every decision until both opened."""
    opener = SecuenciaPuerta(OBJETIVO, DELTA)
    ltt = LTTRepetido()
    apertura = Apertura()
    for t in range(1, horizonte + 1):
        puntuacion = rng.uniform(*puntuaciones)
        aprobada = rng.random() < precision
        if apertura.secuencial is None:
            opener.actualizar(Observacion(puntuacion, True, aprobada))
            if opener.umbral() is not None:
                apertura.secuencial = t
                apertura.en_el_tope = opener.procesos[0].n
        if apertura.ltt is None:
            ltt.actualizar(puntuacion, aprobada)
            if comprobar and t % 20 == 0:
                ltt.comprobar()
            if ltt.umbral() is not None:
                apertura.ltt = t
        if apertura.secuencial is not None and apertura.ltt is not None:
            break
    return apertura


def _celda(
    semilla: int, escenario: str, precision: float, secuencias: int, horizonte: int
) -> list[Apertura]:
    """All sequences of one (scenario, precision), from their own seeded generator."""
    rng = random.Random(f"{semilla}|{escenario}|{precision}")
    return [
        simular(rng, precision, ESCENARIOS[escenario], horizonte, i < COMPROBADAS)
        for i in range(secuencias)
    ]


def _tasa(aperturas: list[Apertura], campo: Callable[[Apertura], int | None]) -> str:
    """Share opened, with its 95 % Wilson interval."""
    abiertas = sum(campo(a) is not None for a in aperturas)
    intervalo = wilson(abiertas, len(aperturas))
    assert intervalo is not None
    return f"{abiertas / len(aperturas):.3f} [{intervalo[0]:.3f}, {intervalo[1]:.3f}]"


def _cuantas(aperturas: list[Apertura], campo: Callable[[Apertura], int | None]) -> str:
    """Median and p90 of decisions to open over all sequences (one not opened counts as never)."""
    tiempos = [math.inf if (t := campo(a)) is None else t for a in aperturas]
    sin_abrir = sum(t == math.inf for t in tiempos)

    def texto(q: float) -> str:
        valor = percentile(tiempos, q)
        return f"> {HORIZONTE_POTENCIA}" if valor == math.inf else f"{valor:.0f}"

    return f"{texto(0.5)} / {texto(0.9)}" + (f" ({sin_abrir} never)" if sin_abrir else "")


def main(argv: list[str] | None = None) -> int:
    """Print both tables as Markdown."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--secuencias", type=int, default=SECUENCIAS)
    parser.add_argument("--semilla", type=int, default=SEMILLA)
    args = parser.parse_args(argv)
    inicio = time.process_time()

    def secuencial(a: Apertura) -> int | None:
        return a.secuencial

    def ltt(a: Apertura) -> int | None:
        return a.ltt

    def en_el_tope(a: Apertura) -> int | None:
        return a.en_el_tope

    print(
        f"objetivo {OBJETIVO}, delta {DELTA}, {args.secuencias} sequences per row, "
        f"seed {args.semilla}\n"
    )
    print(f"False openings, looking after every decision, within {HORIZONTE_NULO} decisions:\n")
    print("| scores | true precision | `puerta.secuencial` | LTT re-run after every decision |")
    print("| --- | --- | --- | --- |")
    for escenario in ESCENARIOS:
        for precision in (0.85, 0.88):
            celda = _celda(args.semilla, escenario, precision, args.secuencias, HORIZONTE_NULO)
            print(
                f"| {escenario} | {precision} | {_tasa(celda, secuencial)} | {_tasa(celda, ltt)} |"
            )
    print(f"\nDecisions to open (median / p90), within {HORIZONTE_POTENCIA} decisions:\n")
    print(
        "| scores | true precision | `puerta.secuencial`: decisions "
        f"| its approvals at λ = {REJILLA[0]} | repeated LTT (not valid): decisions |"
    )
    print("| --- | --- | --- | --- | --- |")
    for escenario in ESCENARIOS:
        for precision in (0.95, 0.99):
            celda = _celda(args.semilla, escenario, precision, args.secuencias, HORIZONTE_POTENCIA)
            print(
                f"| {escenario} | {precision} | {_cuantas(celda, secuencial)} "
                f"| {_cuantas(celda, en_el_tope)} | {_cuantas(celda, ltt)} |"
            )
    print(f"\nCPU: {time.process_time() - inicio:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
