"""The end-of-run summary: counts per fate, approval per attempt, latency percentiles."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from esquemas.constantes import DESTINO_PUBLICADAS, DESTINO_REVISION
from estadistica import percentile
from herramientas.definiciones import Informe, Salida
from herramientas.demo.avance import DLQ, OBSOLETO, PENDING, PUBLICADA, REVISION, Progress
from herramientas.informe import calcular_informe


@dataclass
class Summary:
    """The closing numbers of a run."""

    counts: dict[str, int]
    informe: Informe
    latencies_ms: list[int]
    p50_ms: int | None
    p95_ms: int | None
    pending: int = 0
    duplicates: int = 0


def summarize(progress: Progress, max_intentos: int | None = None) -> Summary:
    """Counts per fate, approval per attempt (``herramientas.informe``), latency percentiles."""
    counts = dict.fromkeys((PUBLICADA, REVISION, DLQ, OBSOLETO, PENDING), 0)
    for line in progress.lines:
        counts[progress.state(line)] += 1
    fichas: list[Salida] = [
        (line.destino, line.evento_salida)
        for line in progress.lines
        if line.destino in (DESTINO_PUBLICADAS, DESTINO_REVISION)
        and line.destino is not None
        and line.evento_salida is not None
    ]
    informe = calcular_informe(fichas, max_intentos=max_intentos)
    latencies = [
        ms
        for line in progress.lines
        if line.destino in (DESTINO_PUBLICADAS, DESTINO_REVISION)
        and (ms := line.latency_ms) is not None
    ]
    pending = counts.pop(PENDING)
    return Summary(
        counts=counts,
        informe=informe,
        latencies_ms=latencies,
        p50_ms=percentile(latencies, 0.50),
        p95_ms=percentile(latencies, 0.95),
        pending=pending,
        duplicates=progress.duplicates,
    )


def seconds(ms: int | None) -> str:
    """Milliseconds as seconds with one decimal, or a dash when unknown."""
    return "-" if ms is None else f"{ms / 1000:.1f} s"


def _pct(rate: float | None) -> str:
    return "-" if rate is None else f"{rate:.0%}"


def render_summary(summary: Summary, where: Sequence[str], puerta: Sequence[str] = ()) -> str:
    """The closing text: counts, approval per attempt, the gate per family (``puerta``, lines
    from ``herramientas.demo.estados_puerta``), latency, where the outcomes are."""
    c = summary.counts
    out = [
        "Resumen",
        f"  publicadas {c[PUBLICADA]}   revisión manual {c[REVISION]}   DLQ {c[DLQ]}   "
        f"obsoletas {c[OBSOLETO]}"
        + (f"   sin terminar {summary.pending}" if summary.pending else ""),
        "  aprobación por intento:",
    ]
    for fila in summary.informe.por_intento:
        out.append(
            f"    intento {fila.intento}: {fila.aprobadas}/{fila.llegaron} aprobadas "
            f"({_pct(fila.tasa)})"
        )
    if not summary.informe.por_intento:
        out.append("    (ninguna ficha terminada)")
    if summary.informe.rechazos:
        rechazos = ", ".join(f"{k} {v}" for k, v in summary.informe.rechazos.items())
        out.append(f"  rechazos por criterio (fichas en revisión): {rechazos}")
    out += puerta
    out.append(
        f"  latencia por evento (de producido a salida): p50 {seconds(summary.p50_ms)}, "
        f"p95 {seconds(summary.p95_ms)} (n={len(summary.latencies_ms)})"
    )
    if summary.duplicates:
        out.append(
            f"  salidas repetidas descartadas (entrega al menos una vez): {summary.duplicates}"
        )
    out.append("  salidas escritas en:")
    out += [f"    {w}" for w in where]
    return "\n".join(out) + "\n"
