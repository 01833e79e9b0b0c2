"""What ``fichas evaluar`` prints and draws: the headline numbers of a run, the paired
comparison of two runs, and its chart (in the house style, ``herramientas.graficos``)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from herramientas import graficos

# -- rendering ------------------------------------------------------------------------------


def _fmt(bloque: Mapping[str, Any]) -> str:
    """A value with its interval, or a dash."""
    valor = bloque.get("valor")
    if valor is None:
        return "-"
    ic = bloque.get("ic95")
    return f"{valor:.2f} [{ic[0]:.2f}, {ic[1]:.2f}]" if ic else f"{valor:.2f}"


def resumen(resultado: Mapping[str, Any]) -> str:
    """A few lines for the terminal: the headline numbers of the run."""
    m = resultado["metricas"]
    if resultado["modo"] == "evaluador":
        lineas = [f"candidatas: {m['n']} (salidas inválidas: {m['salidas_invalidas']})"]
        for quien in ("evaluador", "sistema"):
            g = m[quien]["global"]
            mz = g["matriz"]
            lineas.append(
                f"{quien}: vp={mz['vp']} fp={mz['fp']} fn={mz['fn']} vn={mz['vn']}  "
                f"precisión {_fmt(g['precision'])}  recall {_fmt(g['recall'])}  "
                f"kappa {_fmt(g['kappa'])}"
            )
        lineas.append(_linea_puntuacion(m["puntuacion"]["global"], "personas"))
        return "\n".join(lineas)
    publicadas = ", ".join(
        f"intento {k}: {v['exitos']}" for k, v in m["publicadas_por_intento"].items()
    )
    return "\n".join(
        [
            f"eventos: {m['n']}  publicadas: {_fmt(m['publicadas'])} ({publicadas or 'ninguna'})",
            f"revisión: {m['revision']['exitos']} {m['revision_por_motivo']}",
            "publicadas con defecto mecánico: "
            f"{m['publicadas_con_defecto_mecanico']['total']}, con texto inyectado: "
            f"{m['publicadas_con_texto_inyectado']['total']}, distintas de la referencia: "
            f"{m['publicadas_distintas_de_referencia']['total']}",
            f"llamadas por ficha: {m['llm']['por_ficha']['llamadas']}  "
            f"latencia p50 {m['latencia_s']['p50']} s, p95 {m['latencia_s']['p95']} s",
            _linea_puntuacion(m["puntuacion"], "referencia, última ficha"),
        ]
    )


def _linea_puntuacion(bloque: Mapping[str, Any], etiqueta: str) -> str:
    """The score's AUC against its label, and how many items had a score."""
    return (
        f"puntuación: AUC {_fmt(bloque['auc'])} frente a {etiqueta} "
        f"({bloque['con_puntuacion']}/{bloque['n']} con puntuación, "
        f"{bloque['positivos']} positivas)"
    )


def resumen_comparacion(comparacion: Mapping[str, Any]) -> str:
    """One line per statistic: A, B, delta, interval, verdict."""
    lineas = [f"pareados: {comparacion['n_pareados']}"]
    for nombre, d in comparacion["deltas"].items():
        ic = d["ic95"]
        ic_txt = f"[{ic[0]:+.3f}, {ic[1]:+.3f}]" if ic else "-"
        delta = "-" if d["delta"] is None else f"{d['delta']:+.3f}"
        lineas.append(
            f"  {nombre:<38}{d['a']!s:>9}{d['b']!s:>9}{delta:>9} {ic_txt:>20}  {d['veredicto']}"
        )
    return "\n".join(lineas)


def grafico_comparacion(comparacion: Mapping[str, Any], png: Path) -> None:
    """One small panel per statistic: the delta with its 95 % interval, coloured by verdict
    (in the command line's one chart style, ``herramientas.graficos``)."""
    deltas = comparacion["deltas"]
    colores = {"mejor": graficos.VERDE, "peor": graficos.ROJO}
    fig = graficos.figura(7, 0.8 * len(deltas) + 1)
    ejes = fig.subplots(len(deltas), 1, squeeze=False)
    for eje, (nombre, d) in zip(ejes[:, 0], deltas.items(), strict=True):
        eje.axvline(0, color="black", linewidth=0.8)
        if d["delta"] is not None:
            ic = d["ic95"] or [d["delta"], d["delta"]]
            eje.errorbar(
                [d["delta"]],
                [0],
                xerr=[[d["delta"] - ic[0]], [ic[1] - d["delta"]]],
                fmt="o",
                color=colores.get(d["veredicto"], graficos.GRIS),
                capsize=4,
            )
            ancho = max(abs(ic[0]), abs(ic[1])) * 1.2 or 1.0  # all zero: a unit scale
            eje.set_xlim(-ancho, ancho)
        eje.set_yticks([])
        eje.set_ylabel(nombre, rotation=0, ha="right", va="center", fontsize=8)
        eje.set_title(f"{d['veredicto']} (mejor si {d['sentido']})", fontsize=7, loc="right")
    fig.suptitle(f"B − A, IC 95 % bootstrap, n = {comparacion['n_pareados']}", fontsize=9)
    graficos.guardar(fig, png)
