"""What ``fichas calibrar`` prints: the key, what was left out and why, each gate and its figures.

``resumen`` (the terminal's summary: the key, every source's counts left out by reason, the
candidates and each gate open, covered or closed with n, k and λ), ``lineas_cobertura`` (per
family without its own gate, whether the pooled gate covers it and why) and
``describir_origen`` (the one line ``EstadoPuerta.origen_datos`` keeps). Pure: text from
``Datos`` and the certifications, nothing read or written. Invariant: every count of
``Datos.origen`` is printed, so no evidence is left out silently. docs/puerta.md,
"fichas calibrar".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from esquemas.constantes import MOTIVO_PUERTA_CUBIERTA
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from herramientas.calibrar import recalificar
from herramientas.calibrar.entradas import FUERA, Datos
from puerta.certificacion import Certificacion, CoberturaLote, minimo_aprobaciones

RAZONES_COBERTURA = {
    "cubierta": "covered by the pooled gate",
    "propia": "has its own gate",
    "conjunta_cerrada": "not covered: the pooled gate did not certify",
    "excluida": "not covered: its own approvals at the pooled threshold show its precision "
    "below the objective",
    "umbral_propio": "not covered: without its own data the pooled walk certifies another "
    "threshold, so its own test there would not be at a threshold fixed before its labels",
    "sin_certificar": "not covered: its own approvals at the pooled threshold do not certify it",
}


def lineas_cobertura(coberturas: Mapping[str, CoberturaLote], delta: float) -> list[str]:
    """One line per family of the batch without its own gate: covered by the pooled gate or
    not, and why (v1.5: the pooled gate alone publishes no family; v1.6: the family's own
    approvals certify the pooled λ, which the walk picks without them). The p is that of its
    own certification, or for an excluded family that of the exclusion."""
    lineas = []
    for familia, cob in sorted(coberturas.items()):
        if cob.razon == "propia":
            continue
        p = cob.p_exclusion if cob.razon == "excluida" else cob.p
        cifras = (
            f" (own approvals at λ {cob.umbral:.6g}: n={cob.n}, k={cob.k}, p={p:.4g} "
            f"against δ {delta})"
            if cob.umbral is not None
            else ""
        )
        lineas.append(f"family {familia}: {RAZONES_COBERTURA[cob.razon]}{cifras}")
    return lineas


def describir_origen(datos: Datos) -> str:
    """``EstadoPuerta.origen_datos``: the method, then the data (v1.3); the audit file has
    the details. E.g. ``ltt:recalificado; conjunto ejemplos/evaluacion/casos.jsonl (188)``."""
    metodos = "+".join(dict.fromkeys(datos.metodos))
    partes = [
        f"fichas evaluar {Path(f['ruta']).name} sha256:{f['sha256'][:12]} "
        f"({f['candidatas']} candidatas)"
        for f in datos.origen.get("ficheros", [])
    ]
    if "decisiones" in datos.origen:
        d = datos.origen["decisiones"]
        partes.append(f"decisiones {d['topic']} ({d['usadas']} de {d['decisiones']})")
    partes += [f"{r['fuente']} ({r['candidatas']})" for r in datos.origen.get("recalificado", [])]
    if "variantes" in datos.origen:
        n = datos.origen["variantes"]["variantes"]
        partes.append(f"variantes del evaluador en estas etiquetas: {n}")
    return "; ".join([metodos, *partes])


def fuera_de_la_cuenta(datos: Datos) -> list[str]:
    """One line per source saying what was left out and why: evidence never expires silently."""
    lineas = []
    if "decisiones" in datos.origen:
        d = datos.origen["decisiones"]
        lineas.append(
            f"decisions on {d['topic']}: {d['decisiones']} read, {d['usadas']} used for this key"
        )
        lineas += [
            f"  left out: {d[motivo]} {texto}" for motivo, texto in FUERA.items() if d[motivo]
        ]
        if d["otras_claves"]:
            claves = ", ".join(f"{k} ({n})" for k, n in sorted(d["otras_claves"].items()))
            lineas.append(f"  other keys seen: {claves}")
    if datos.origen.get("recalificado"):
        lineas += _fuera_de_la_repeticion(datos.origen["recalificado"])
    if "variantes" in datos.origen:
        v = datos.origen["variantes"]
        lineas.append(
            f"evaluator variants tried on these labels: {v['variantes']} (keys "
            f"{', '.join(v['claves'])}; {v['corridas']} run(s) of --recalificar). The guarantee "
            f"is per variant (δ {v['delta']} each): the chance that one of them passed by luck "
            f"is up to {v['azar']:.3g}"
        )
    return lineas


def _fuera_de_la_repeticion(fuentes: Sequence[Mapping[str, Any]]) -> list[str]:
    """Per re-scored source: what was kept, and every item left out by reason, those the
    replay dropped (``grafo.repeticion.MOTIVOS``) included."""
    from grafo.repeticion import MOTIVOS

    lineas = []
    for r in fuentes:
        lineas.append(
            f"re-scored by the running evaluator: {r['candidatas']} from {r['fuente']} "
            "(the labelled attempt of every history the new loop would end on)"
        )
        lineas += [
            f"  left out: {r[motivo]} {texto}"
            for motivo, texto in (recalificar.FUERA | MOTIVOS).items()
            if r.get(motivo)
        ]
    return lineas


def resumen(
    estados: Sequence[EstadoPuerta],
    certificaciones: Mapping[str, Certificacion],
    datos: Datos,
    objetivo: float,
    delta: float,
    clave: ClavePuerta,
) -> str:
    """A few lines for the terminal: what was left out, each gate open or closed, n, k, λ."""
    minimo = minimo_aprobaciones(objetivo, delta)
    puntuadas = sum(1 for c in datos.candidatas if c.puntuacion is not None)
    lineas = [f"key {clave.texto()}: {clave.model_dump_json(exclude_none=True)}"]
    if clave.prompt_generador_sha256 is None:
        lineas.append(
            "warning: this key has no generator side (prompt_generador_sha256): no v1.3 worker "
            "applies it; give --clave-desde-config or --prompt-generador-sha"
        )
    lineas += fuera_de_la_cuenta(datos)
    lineas += [
        f"candidates: {len(datos.candidatas)} labelled, {puntuadas} scored and approvable; "
        f"objective {objetivo}, delta {delta} (at least {minimo} people-approved needed)"
    ]
    for estado in estados:
        cert = certificaciones.get(estado.familia)
        if estado.motivo == MOTIVO_PUERTA_CUBIERTA:
            lineas.append(
                f"gate {estado.familia}: OPEN through the pooled gate from score "
                f"{estado.umbral:.6g} (covered: n={estado.n} approvals of its own there, "
                f"k={estado.k} rejected by people)"
            )
        elif estado.abierta:
            p = f", p={cert.p:.4f}" if cert else ""
            lineas.append(
                f"gate {estado.familia}: OPEN from score {estado.umbral:.6g} "
                f"(n={estado.n} approvals, k={estado.k} rejected by people{p})"
            )
        elif estado.motivo == "sin_datos_suficientes":
            limpias = cert.aprobadas_por_personas if cert else 0
            lineas.append(
                f"gate {estado.familia}: CLOSED, too few labels: {limpias} people-approved "
                f"scored candidates, {minimo} needed to certify precision {objetivo}"
            )
        else:
            lineas.append(
                f"gate {estado.familia}: CLOSED ({estado.motivo}): no threshold certifies "
                f"precision {objetivo} (all scored: n={estado.n}, k={estado.k})"
            )
    lineas += [f"warning: {a}" for a in datos.avisos]
    return "\n".join(lineas)
