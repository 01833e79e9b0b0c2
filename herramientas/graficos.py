"""The one chart style of the command line (``fichas informe``, ``fichas evaluar --comparar``).

A bare ``Figure`` on the Agg canvas rather than pyplot, so no GUI backend or global figure state
is involved (safe in a container and in tests); one palette (Vega's, readable in grey and by
the colour-blind); a ``.svg`` name gives SVG with real text (searchable, diffable), anything
else PNG. matplotlib is the ``report`` extra: it is imported when a chart is drawn.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# What each colour means, the same in every chart.
AZUL = "#4c78a8"  # a rate, a measure
NARANJA = "#f58518"  # a rejection
ROJO = "#e45756"  # a threshold, worse
VERDE = "#54a24b"  # a count of outcomes, better
MORADO = "#b279a2"  # an invalid answer
GRIS = "#9d9d9d"  # counted without detail, no verdict
PPP = 100  # dots per inch of a PNG


def figura(ancho: float, alto: float) -> Any:
    """A new figure of ``ancho`` × ``alto`` inches on the Agg canvas."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(ancho, alto), dpi=PPP)
    FigureCanvasAgg(fig)
    return fig


def guardar(fig: Any, path: Path | str) -> None:
    """Lay the figure out and write it: SVG for a ``.svg`` name, else PNG."""
    from matplotlib import rc_context

    fig.tight_layout()
    formato = "svg" if str(path).endswith(".svg") else "png"
    with rc_context({"svg.fonttype": "none"}):
        fig.savefig(str(path), format=formato)
