"""``python -m bench.puerta_avance``: the recomputed and the advanced round give the same gate.

At 5,000 stored fichas the seeded sequence opens the gate at the grid's most lenient λ, so the
comparison the tool makes (it exits 1 when the two results differ) is between two walks of
the whole grid, not two closed gates.
"""

from __future__ import annotations

import re

from tests.bench.conftest import ejecutar, salida


def test_puerta_avance_da_la_misma_puerta_por_los_dos_caminos() -> None:
    texto = salida(
        ejecutar(
            "bench.puerta_avance", "--historia", "5000", "--nuevas", "20", "--repeticiones", "1"
        )
    )
    assert "one gate, 5000 stored decided fichas, 20 new ones:" in texto
    for camino in ("recomputed from scratch", "stored state advanced"):
        cpu = re.search(rf"{camino}: +([\d.]+) ms of CPU", texto)
        assert cpu is not None and float(cpu.group(1)) >= 0, texto
    abierta = re.search(r"both give: gate open at λ = ([\d.]+) \(n (\d+), k (\d+)\)", texto)
    assert abierta is not None, texto
    # every decided ficha counts at the most lenient λ, and fewer than a tenth were rejected
    umbral, n, k = float(abierta.group(1)), int(abierta.group(2)), int(abierta.group(3))
    assert umbral == 0.5 and n == 5020 and 0 < k < n / 10
