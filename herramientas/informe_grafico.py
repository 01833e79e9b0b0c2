"""The chart of ``fichas informe --png``: approval per attempt, rejections by criterion, review
reasons, in the command line's one chart style (``herramientas.graficos``).

Apart from the report's figures (``herramientas.informe``): it changes with how the report is
drawn, and it is the only part that needs matplotlib (the ``report`` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from herramientas import graficos
from herramientas.definiciones import (
    Informe,
    etiqueta_criterio,
    nombres_criterios,
    porcentaje,
)


def render_png(informe: Informe, path: Path | str) -> None:
    """Three bar charts: approval per attempt (with n and the threshold), rejections by
    criterion (named), and manual-review reasons.

    In the command line's one chart style (``herramientas.graficos``).
    """
    from matplotlib.ticker import MaxNLocator

    fig = graficos.figura(15, 4.8)
    tasas, rechazos, motivos = fig.subplots(1, 3)

    intentos = [str(f.intento) for f in informe.por_intento]
    valores = [100 * (f.tasa or 0.0) for f in informe.por_intento]
    barras = tasas.bar(intentos, valores, color=graficos.AZUL)
    tasas.bar_label(
        barras,
        labels=[f"{porcentaje(f.tasa)}\n{f.aprobadas}/{f.llegaron}" for f in informe.por_intento],
    )
    tasas.axhline(
        100 * informe.umbral,
        color=graficos.ROJO,
        linestyle="--",
        label=f"umbral {porcentaje(informe.umbral)}",
    )
    tasas.set_ylim(0, 115)
    tasas.set_xlabel("intento (etiqueta: aprobadas/llegaron)")
    tasas.set_ylabel("% aprobadas de las que llegan")
    tasas.set_title("Aprobación por intento")
    tasas.legend(loc="upper right")

    nombres = nombres_criterios()
    criterios = [etiqueta_criterio(c, nombres).replace(" ", "\n", 1) for c in informe.rechazos]
    cuentas = list(informe.rechazos.values())
    colores = [graficos.NARANJA] * len(criterios)
    if informe.salidas_invalidas:
        criterios.append("salida\ninválida")
        cuentas.append(informe.salidas_invalidas)
        colores.append(graficos.MORADO)
    if informe.rechazos_sin_detalle:  # grey: counted, but no criterion is known for them
        criterios.append("sin detalle\n(publicadas)")
        cuentas.append(informe.rechazos_sin_detalle)
        colores.append(graficos.GRIS)
    _barras(rechazos, criterios, cuentas, colores, "sin rechazos", MaxNLocator)
    rechazos.set_xlabel("criterio")
    rechazos.set_ylabel("rechazos")
    rechazos.set_title("Rechazos por criterio")

    _barras(
        motivos,
        list(informe.motivos),
        list(informe.motivos.values()),
        [graficos.VERDE] * len(informe.motivos),
        "ninguna ficha en revisión",
        MaxNLocator,
    )
    motivos.set_xlabel("motivo")
    motivos.set_ylabel("fichas")
    motivos.set_title("Motivos de revisión manual")

    graficos.guardar(fig, path)


def _barras(
    ejes: Any,
    etiquetas: list[str],
    cuentas: list[int],
    colores: list[str],
    vacio: str,
    locator: Any,
) -> None:
    """Bars with their counts on top, or a centred note when there is nothing to draw."""
    if etiquetas:
        barras = ejes.bar(etiquetas, cuentas, color=colores)
        ejes.bar_label(barras)
        ejes.yaxis.set_major_locator(locator(integer=True))
        ejes.tick_params(axis="x", labelsize=8)
    else:
        ejes.text(0.5, 0.5, vacio, ha="center", va="center")
