"""``python -m bench.puerta_secuencial`` at one sequence per cell: both tables complete.

Its own check runs on that sequence: the fast walk of the repeated LTT is compared with
``puerta.certificacion.certificar`` every 20 decisions, and the run exits non-zero if they ever
differ. The shares and counts are the simulation's, reported and never asserted.
"""

from __future__ import annotations

import re

from bench.puerta_secuencial import ESCENARIOS, HORIZONTE_NULO, HORIZONTE_POTENCIA
from tests.bench.conftest import ejecutar, salida

TASA = re.compile(r"^([\d.]+) \[([\d.]+), ([\d.]+)\]$")
DECISIONES = re.compile(rf"^(\d+|> {HORIZONTE_POTENCIA}) / (\d+|> {HORIZONTE_POTENCIA})")


def _filas(texto: str, titulo: str) -> list[list[str]]:
    """The data rows of the Markdown table after ``titulo``, cell by cell."""
    tabla = texto.split(titulo, 1)[1].split("\n\n")[1]
    return [
        [c.strip() for c in f.strip("|").split("|")]
        for f in tabla.splitlines()[2:]
        if f.startswith("| ")
    ]


def test_puerta_secuencial_rellena_las_dos_tablas() -> None:
    texto = salida(ejecutar("bench.puerta_secuencial", "--secuencias", "1", "--semilla", "5"))
    assert "1 sequences per row, seed 5" in texto
    nulas = _filas(texto, f"within {HORIZONTE_NULO} decisions:")
    potencia = _filas(texto, f"within {HORIZONTE_POTENCIA} decisions:")
    celdas = [(e, p) for e in ESCENARIOS for p in ("0.85", "0.88")]
    assert [(f[0], f[1]) for f in nulas] == celdas
    for fila in nulas:
        for celda in fila[2:]:
            tasa = TASA.match(celda)
            assert tasa is not None and tasa.group(1) in ("0.000", "1.000"), fila
            assert 0 <= float(tasa.group(2)) <= float(tasa.group(3)) <= 1, fila
    assert [(f[0], f[1]) for f in potencia] == [
        (e, p) for e in ESCENARIOS for p in ("0.95", "0.99")
    ]
    for fila in potencia:
        assert len(fila) == 5 and all(DECISIONES.match(c) for c in fila[2:]), fila
        decisiones, en_el_tope = fila[2].split(" / ")[0], fila[3].split(" / ")[0]
        if decisiones.isdigit():  # its approvals at the top λ are among its decisions
            assert en_el_tope.isdigit() and 0 < int(en_el_tope) <= int(decisiones), fila
    assert re.search(r"CPU: \d+ s", texto)
