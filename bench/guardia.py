"""The CPU guard of ``bench.run``: worker CPU per 3-attempt ficha in units of this machine.

CPU per ficha in milliseconds depends on the machine and on what else runs on it: CI's
2 cores shared with other jobs, a laptop, an idle server. A fixed bound in milliseconds
either flakes on a busy machine or misses a regression on a fast one. So the guard divides
the ``worker_1_3int`` row's CPU per ficha by the CPU of a fixed piece of pure-Python work
(``trabajo``: JSON, regular expressions, small objects, the kind of work the worker's
interpreter does) measured by the harness in the same run, before and after that scenario.
Both scale with the machine's speed and with the contention of the moment, so their ratio
is how many units of work a 3-attempt ficha costs, whatever the machine.

``LIMITE`` is set from measurements (docs/rendimiento.md, "La guardia"): half way between
what the code costs now and twice that, so a doubling fails the run and run-to-run noise
does not. ``bench.run`` exits with status 3 when the guard fails; ``tests/bench`` runs
``bench.run --quick`` in CI.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from dataclasses import dataclass
from typing import Any

# Units of ``trabajo`` per 3-attempt ficha above which the guard fails; see the docstring.
LIMITE = 1000.0  # PROVISIONAL
# How many times the calibration work is measured each time (the median is kept).
REPETICIONES = 5

_PALABRA = re.compile(r"\w+")


@dataclass(frozen=True)
class _Punto:
    x: int
    y: int


def trabajo() -> int:
    """One unit of calibration: fixed pure-Python work, about 5 ms on this project's machine.

    It imports nothing of the project and nothing that changes with it, so it measures the
    machine, not the code under test.
    """
    doc: dict[str, Any] = {
        "sku": "CAL-1",
        "titulo": "Zapatilla de running ligera con parte superior de malla",
        "atributos": {"talla": "42", "color": "negro", "material": "malla"},
        "cifras": list(range(40)),
    }
    total = 0
    for i in range(120):
        texto = json.dumps(doc, ensure_ascii=False)
        copia = json.loads(texto)
        total += len(_PALABRA.findall(texto)) + len(copia["cifras"])
        puntos = [_Punto(i, j) for j in range(30)]
        total += sum(p.x + p.y for p in puntos)
        total += len({f"{k}:{v}" for k, v in copia["atributos"].items()})
    return total


def calibrar(repeticiones: int = REPETICIONES) -> float:
    """CPU milliseconds of one ``trabajo``: the median of ``repeticiones`` measurements."""
    trabajo()  # warm-up
    medidas = []
    for _ in range(repeticiones):
        start = time.process_time()
        trabajo()
        medidas.append((time.process_time() - start) * 1000)
    return statistics.median(medidas)


def veredicto_guardia(
    cpu_ms_ficha_3: float, calibraciones_ms: list[float], limite: float | None = None
) -> dict[str, Any]:
    """The guard's figures and whether it holds: units of work per 3-attempt ficha."""
    limite = LIMITE if limite is None else limite
    unidad = statistics.median(calibraciones_ms)
    razon = cpu_ms_ficha_3 / unidad if unidad > 0 else float("inf")
    return {
        "cpu_ms_ficha_3": cpu_ms_ficha_3,
        "calibracion_ms": [round(c, 3) for c in calibraciones_ms],
        "unidad_ms": round(unidad, 3),
        "razon": round(razon, 2),
        "limite": limite,
        "cumple": razon <= limite,
    }
