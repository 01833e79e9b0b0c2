"""The gate's guarantee against how people review, drift and upgrades (issue 47): v1.5 and v1.6
on the same simulated sequences.

Six measurements, each a Monte Carlo over seeded sequences (objective 0.9, δ 0.05):

- ``abrir``: labels to open at precision 0.95 and 0.92 with every score above the grid, and
  decisions to open with scores spread on [0.5, 1] (a tenth reach 0.95) or informative scores
  (precision rising with the score);
- ``error``: type-I error, the share of sequences opened at a λ whose precision is below the
  objective within ``HORIZONTE`` decisions, at precision exactly 0.9 and at 0.88, scores above
  the grid and spread;
- ``selectivos``: reviewers who leave a share of the would-be rejections undecided until a newer
  version supersedes them, true precision 0.86 (item 1);
- ``cobertura``: a family at precision 0.8 (and 0.7, 0.95) under an open pooled gate: how often
  it is covered (item 3);
- ``cierre``: sampled verdicts after a drop from 0.95 to 0.8 that follows 0, 100 or 1,000 good
  ones, until the gate closes; and false closures at precision exactly 0.9 (item 4);
- ``catalogo``: F gates at once, every one at the objective exactly: false openings in all.

The runs are vectorised with numpy (each sequence one row); before any figure is printed, the
first sequences of every cell are run again through the product's own code (``puerta.secuencial``,
``puerta.deteccion``, ``puerta.cota``) and a v1.5 reference written here from the v1.5 code, and
the run stops with an error if an opening or closing time differs. Counts, not times: the load
of the machine does not change them.

Run: ``python -m bench.puerta_garantia`` (about 8 minutes of CPU; ``--rapido`` for a small run).
The tables are in docs/puerta.md, "The guarantee, measured".
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from estadistica import wilson
from puerta.apuestas import TRUNCAMIENTO
from puerta.cota import CotaEnLinea
from puerta.deteccion import BLOQUE, apuesta_kelly, detector, observar, umbral_log
from puerta.exclusion import APUESTAS_EXCLUSION, ProcesoExclusion
from puerta.secuencial import PESOS, REJILLA, Observacion, SecuenciaPuerta

OBJETIVO = 0.9
DELTA = 0.05
SEMILLA = 4747
G = np.array(REJILLA)
MEZCLA = np.array(APUESTAS_EXCLUSION)
HORIZONTE = 2000  # decisions watched for type-I error and coverage
HORIZONTE_SELECTIVOS = 10_000  # v1.5's selective reviewers open slowly: watch longer
NUNCA = 10**9
COMPROBADAS = 3  # sequences per cell checked against the product's code

V15 = "v1.5"
V16 = "v1.6"


@dataclass(frozen=True)
class Regla:
    """One opener: its bet (plug-in alone, or averaged with the fixed-bet mixture), its walk's
    weights, and whether an obsolete ficha is skipped (v1.5) or a failure (v1.6)."""

    media: bool
    pesos: tuple[float, ...]
    obsoleta_es_fallo: bool


REGLAS = {
    V15: Regla(False, (1.0,) + (0.0,) * (len(REJILLA) - 1), False),
    V16: Regla(True, PESOS, True),
}


# --- The opener, vectorised --------------------------------------------------------------


def abrir(
    s: np.ndarray, x: np.ndarray, regla: Regla, rejilla: np.ndarray = G
) -> tuple[np.ndarray, np.ndarray]:
    """First decision (1-based) at which each sequence opens, and at which λ (nan: never).

    ``s``: scores (N, T); ``x``: 1 approved as is, 0 not, -1 obsolete before decided.
    """
    n_seq, largo = s.shape
    g = len(rejilla)
    pesos = np.array(regla.pesos)
    q = OBJETIVO
    si, no = np.log1p(MEZCLA * (1 - q) / q), np.log1p(-MEZCLA)
    aprob = np.zeros((n_seq, g))
    total = np.zeros((n_seq, g))
    plugin = np.zeros((n_seq, g))
    maximo = np.zeros((n_seq, g))
    primera = np.full(n_seq, NUNCA)
    umbral = np.full(n_seq, np.nan)
    vivas = np.ones(n_seq, dtype=bool)
    for t in range(largo):
        alcanza = s[:, t][:, None] >= rejilla[None, :]
        xt = x[:, t][:, None]
        if regla.obsoleta_es_fallo:
            cuenta, exito = alcanza, (xt == 1)
        else:
            cuenta, exito = alcanza & (xt >= 0), (xt == 1)
        apuesta = np.clip(((aprob + 1) / (total + 1) - q) / (q * (1 - q)), 0, TRUNCAMIENTO / q)
        plugin = np.where(cuenta, plugin + np.log1p(apuesta * (exito - q)), plugin)
        aprob = aprob + (cuenta & exito)
        total = total + cuenta
        if regla.media:
            logs = aprob[..., None] * si + (total - aprob)[..., None] * no
            mayor = logs.max(-1)
            mezcla = mayor + np.log(np.exp(logs - mayor[..., None]).mean(-1))
            alto = np.maximum(plugin, mezcla)
            valor = alto + np.log((np.exp(plugin - alto) + np.exp(mezcla - alto)) / 2)
        else:
            valor = plugin
        maximo = np.maximum(maximo, np.where(cuenta, valor, maximo))
        rechazadas = _fallback(maximo, pesos)
        abiertas = rechazadas.any(1) & vivas
        if abiertas.any():
            indice = g - 1 - np.argmax(rechazadas[:, ::-1], axis=1)
            primera[abiertas] = t + 1
            umbral[abiertas] = rejilla[indice[abiertas]]
            vivas &= ~abiertas
            if not vivas.any():
                break
    return primera, umbral


def _fallback(maximo: np.ndarray, pesos: np.ndarray) -> np.ndarray:
    """Which λ the fallback walk rejects, per sequence (``puerta.secuencial``'s walk)."""
    n_seq, g = maximo.shape
    rechazadas = np.zeros((n_seq, g), dtype=bool)
    alfa = np.zeros(n_seq)
    for j in range(g):
        alfa = DELTA * pesos[j] + (np.where(rechazadas[:, j - 1], alfa, 0.0) if j else 0.0)
        with np.errstate(divide="ignore"):
            nivel = np.where(alfa > 0, np.log(1.0 / np.maximum(alfa, 1e-300)), np.inf)
        rechazadas[:, j] = maximo[:, j] >= nivel
    return rechazadas


# --- References: the product's code, and v1.5's opener -----------------------------------


def _referencia_v16(s: np.ndarray, x: np.ndarray, rejilla: np.ndarray = G) -> tuple[int, float]:
    """The product's own engine on one sequence: first opening and its λ."""
    motor = SecuenciaPuerta(OBJETIVO, DELTA, tuple(rejilla), pesos=_pesos_de(rejilla))
    for t, (puntuacion, etiqueta) in enumerate(zip(s, x, strict=True)):
        aprobada = None if etiqueta < 0 else bool(etiqueta)
        motor.actualizar(Observacion(float(puntuacion), True, aprobada))
        umbral = motor.umbral()
        if umbral is not None:
            return t + 1, umbral
    return NUNCA, math.nan


def _pesos_de(rejilla: np.ndarray) -> tuple[float, ...]:
    return PESOS if tuple(rejilla) == REJILLA else (1.0,) + (0.0,) * (len(rejilla) - 1)


def _referencia_v15(s: np.ndarray, x: np.ndarray, rejilla: np.ndarray = G) -> tuple[int, float]:
    """v1.5's opener as its code was (``git show effb5a2:puerta/secuencial.py``): the plug-in
    bet alone, obsolete fichas skipped, the walk strictest first at the full δ."""
    limite = math.log(1 / DELTA)
    estado = [[0, 0, 0.0, 0.0] for _ in rejilla]  # n, approved, log capital, running max
    for t, (puntuacion, etiqueta) in enumerate(zip(s, x, strict=True)):
        for j, umbral in enumerate(rejilla):
            if etiqueta < 0 or puntuacion < umbral:
                continue
            n, aprobadas, log_capital, maximo = estado[j]
            estimada = (aprobadas + 1) / (n + 1)
            apuesta = min(
                max((estimada - OBJETIVO) / (OBJETIVO * (1 - OBJETIVO)), 0.0),
                TRUNCAMIENTO / OBJETIVO,
            )
            log_capital += math.log1p(apuesta * (float(etiqueta) - OBJETIVO))
            estado[j] = [n + 1, aprobadas + int(etiqueta), log_capital, max(maximo, log_capital)]
        pasados = 0
        while pasados < len(rejilla) and estado[pasados][3] >= limite:
            pasados += 1
        if pasados:
            return t + 1, float(rejilla[pasados - 1])
    return NUNCA, math.nan


def comprobar_apertura(
    s: np.ndarray,
    x: np.ndarray,
    primera: np.ndarray,
    umbral: np.ndarray,
    version: str,
    rejilla: np.ndarray = G,
) -> None:
    """Stop the run if the vectorised opener and the reference disagree on a sequence."""
    referencia = _referencia_v16 if version == V16 else _referencia_v15
    for i in range(min(COMPROBADAS, len(s))):
        t, u = referencia(s[i], x[i], rejilla)
        ok = t == primera[i] and (t == NUNCA or math.isclose(u, umbral[i]))
        if not ok:
            sys.exit(
                f"{version}: sequence {i} opens at {primera[i]} λ {umbral[i]} "
                f"vectorised, {t} λ {u} in the reference"
            )


# --- Scenarios ----------------------------------------------------------------------------


def puntuaciones(rng: np.random.Generator, forma: str, n: int, largo: int) -> np.ndarray:
    """Scores above the grid (uniform on [0.95, 1]) or spread (uniform on [0.5, 1])."""
    bajo = 0.95 if forma == "sobre la rejilla" else 0.5
    return rng.uniform(bajo, 1.0, (n, largo))


def etiquetas(
    rng: np.random.Generator, probabilidad: np.ndarray | float, forma: tuple[int, int]
) -> np.ndarray:
    """1 approved as is with ``probabilidad`` (per cell or constant), else 0."""
    return (rng.random(forma) < probabilidad).astype(np.int8)


def _mediana_p90(valores: np.ndarray, largo: int) -> str:
    """'median / p90' with '> largo' for a quantile among the never-opened."""

    def fmt(q: float) -> str:
        v = np.percentile(valores, q)
        return f"> {largo:,}" if v >= NUNCA else f"{int(v):,}"

    return f"{fmt(50)} / {fmt(90)}"


def _proporcion(aciertos: int, total: int) -> str:
    bajo, alto = wilson(aciertos, total)
    return f"{aciertos / total:.4f} [{bajo:.4f}, {alto:.4f}]"


def medir_apertura(rng: np.random.Generator, secuencias: int) -> list[str]:
    """Labels (decisions) to open, v1.5 against v1.6, on the same sequences."""
    filas = [
        "| scores | true precision | v1.5: decisions to open (median / p90) | "
        "v1.6 | v1.6 λ at opening (median) |",
        "| --- | --- | --: | --: | --: |",
    ]
    celdas: list[tuple[str, float | str, int]] = [
        ("sobre la rejilla", 0.99, 600),
        ("sobre la rejilla", 0.95, 3000),
        ("sobre la rejilla", 0.92, 8000),
        ("repartidas", 0.95, 4000),
        ("informativas", "0.8 + 0.19 (s - 0.5) / 0.5", 4000),
    ]
    for forma, precision, largo in celdas:
        n = secuencias if precision != 0.92 else max(secuencias // 2, COMPROBADAS)
        s = puntuaciones(rng, "repartidas" if forma == "informativas" else forma, n, largo)
        p = 0.8 + 0.19 * (s - 0.5) / 0.5 if forma == "informativas" else float(precision)
        x = etiquetas(rng, p, s.shape)
        resultados = {}
        for version, regla in REGLAS.items():
            primera, umbral = abrir(s, x, regla)
            comprobar_apertura(s, x, primera, umbral, version)
            resultados[version] = (primera, umbral)
        filas.append(
            f"| {forma} | {precision} | {_mediana_p90(resultados[V15][0], largo)} | "
            f"{_mediana_p90(resultados[V16][0], largo)} | "
            f"{np.nanmedian(resultados[V16][1]):.2f} |"
        )
    return filas


def medir_error(rng: np.random.Generator, secuencias: int) -> list[str]:
    """Type-I error within ``HORIZONTE`` decisions: every λ's precision is below the objective
    or at it exactly (the worst case), so every opening is false."""
    filas = [
        f"| scores | true precision | runs | v1.5: opened within {HORIZONTE:,} | v1.6 |",
        "| --- | --- | --: | --- | --- |",
    ]
    for forma in ("sobre la rejilla", "repartidas"):
        for precision in (0.9, 0.88):
            s = puntuaciones(rng, forma, secuencias, HORIZONTE)
            x = etiquetas(rng, precision, s.shape)
            celda = []
            for version, regla in REGLAS.items():
                primera, umbral = abrir(s, x, regla)
                comprobar_apertura(s, x, primera, umbral, version)
                celda.append(_proporcion(int((primera < NUNCA).sum()), secuencias))
            filas.append(f"| {forma} | {precision} | {secuencias:,} | {celda[0]} | {celda[1]} |")
    return filas


def medir_selectivos(rng: np.random.Generator, secuencias: int) -> list[str]:
    """Reviewers leave would-be rejections undecided until superseded; true precision 0.86."""
    filas = [
        f"| left undecided until superseded | runs | v1.5 (skipped): opened within "
        f"{HORIZONTE_SELECTIVOS:,} | v1.6 (a failure) |",
        "| --- | --: | --- | --- |",
    ]
    for descripcion, cuota in (
        ("5 % of the fichas (all would-be rejections)", 0.05 / 0.14),
        ("5 % of the would-be rejections", 0.05),
    ):
        s = puntuaciones(rng, "sobre la rejilla", secuencias, HORIZONTE_SELECTIVOS)
        x = etiquetas(rng, 0.86, s.shape)
        dejadas = (x == 0) & (rng.random(s.shape) < cuota)
        x = np.where(dejadas, -1, x).astype(np.int8)
        celda = []
        for version, regla in REGLAS.items():
            primera, umbral = abrir(s, x, regla)
            comprobar_apertura(s, x, primera, umbral, version)
            celda.append(_proporcion(int((primera < NUNCA).sum()), secuencias))
        filas.append(f"| {descripcion} | {secuencias:,} | {celda[0]} | {celda[1]} |")
    return filas


def medir_cobertura(rng: np.random.Generator, secuencias: int) -> list[str]:
    """A family under an open pooled gate at λ_*: v1.5 covered it after 20 approvals at λ_*
    unless its exclusion had crossed; v1.6 only when its own e-process at λ_* since the pooled
    certification crosses 1/δ (``puerta.cobertura``). Its fichas all score above λ_*."""
    filas = [
        f"| family's true precision | runs | v1.5: covered | v1.6: covered within "
        f"{HORIZONTE:,} of its fichas | v1.6: its fichas to coverage (median / p90) |",
        "| --- | --: | --- | --- | --: |",
    ]
    for precision in (0.7, 0.8, 0.95):
        x = etiquetas(rng, precision, (secuencias, HORIZONTE))
        s = np.ones_like(x, dtype=float)
        antes = _cubierta_v15(x)
        primera, umbral = abrir(s, x, Regla(True, (1.0,), True), np.array([0.8]))
        comprobar_apertura(s, x, primera, umbral, V16, np.array([0.8]))
        cubiertas = int((primera < NUNCA).sum())
        filas.append(
            f"| {precision} | {secuencias:,} | {_proporcion(int(antes.sum()), secuencias)} | "
            f"{_proporcion(cubiertas, secuencias)} | {_mediana_p90(primera, HORIZONTE)} |"
        )
    return filas


def _cubierta_v15(x: np.ndarray) -> np.ndarray:
    """v1.5's rule: covered at its 20th approval at λ_* unless its exclusion crossed by then
    (``puerta.exclusion``'s mixture; checked against ``ProcesoExclusion`` on the first rows)."""
    limite = math.log(1 / DELTA)
    c = MEZCLA
    si, no = np.log1p(-c), np.log1p(c * OBJETIVO / (1 - OBJETIVO))
    aprob = np.cumsum(x[:, :20] == 1, axis=1)
    rech = np.cumsum(x[:, :20] == 0, axis=1)
    logs = aprob[..., None] * si + rech[..., None] * no
    mayor = logs.max(-1)
    mezcla = mayor + np.log(np.exp(logs - mayor[..., None]).mean(-1))
    cubierta = ~(mezcla >= limite).any(1)
    for i in range(min(COMPROBADAS, len(x))):
        proceso = ProcesoExclusion(OBJETIVO, DELTA)
        for etiqueta in x[i, :20]:
            proceso.actualizar(bool(etiqueta == 1))
        if proceso.cruzado == cubierta[i]:
            sys.exit(f"v1.5 coverage: sequence {i} disagrees with ProcesoExclusion")
    return cubierta


# --- Closing ------------------------------------------------------------------------------


def cerrar(x: np.ndarray, version: str) -> np.ndarray:
    """Verdict (1-based) at which each sequence of sampled verdicts closes the gate (NUNCA:
    never). v1.5: the online bound's upper side below the objective, at δ. v1.6: that at δ/2,
    or the change detector at δ/2 (``puerta.cierre``)."""
    n_seq, largo = x.shape
    delta_cota = DELTA if version == V15 else DELTA / 2
    m = 0.101  # the upper bound < 0.9 exactly when the 1-x side rejects the grid mean 0.101
    limite = math.log(1 / delta_cota)
    log_k = np.zeros(n_seq)
    suma = np.zeros(n_seq)
    cuadrados = np.zeros(n_seq)
    b = apuesta_kelly(OBJETIVO)
    log_r = np.full(n_seq, -np.inf)
    cierre = np.full(n_seq, NUNCA)
    for t in range(1, largo + 1):
        y = 1.0 - x[:, t - 1]
        varianza = (0.25 + cuadrados) / t
        lam = np.minimum(np.sqrt(2 * limite / (varianza * t * math.log1p(t))), 0.5 / m)
        log_k += np.log1p(lam * (y - m))
        suma += y
        cuadrados += (y - (0.5 + suma) / (t + 1)) ** 2
        cerrada = log_k >= limite
        if version == V16:
            factor = np.log1p(b * (OBJETIVO - x[:, t - 1]))
            log_r = factor + (np.logaddexp(log_r, 0.0) if t > 1 else 0.0)
            cerrada |= log_r >= umbral_log(t, DELTA / 2)
        nuevas = cerrada & (cierre == NUNCA)
        cierre[nuevas] = t
        if (cierre < NUNCA).all():
            break
    return cierre


def _referencia_cierre(x: np.ndarray, version: str) -> int:
    """The product's bound (and detector) on one sequence."""
    cota = CotaEnLinea(delta=DELTA if version == V15 else DELTA / 2)
    estado = detector(OBJETIVO, DELTA / 2)
    for t, v in enumerate(x, start=1):
        cota.actualizar(bool(v))
        estado = observar(estado, bool(v))
        if cota.cota_superior < OBJETIVO or (version == V16 and estado.alarma):
            return t
    return NUNCA


def medir_cierre(rng: np.random.Generator, secuencias: int) -> list[str]:
    """Sampled verdicts after a drop 0.95 -> 0.8 until closed; false closures at 0.9."""
    filas = [
        "| good verdicts (0.95) before the drop to 0.8 | runs | v1.5: verdicts after the "
        "drop to close (median / p90) | v1.6 |",
        "| --- | --: | --: | --: |",
    ]
    despues = 8000
    for antes in (0, 100, 1000):
        n = secuencias
        x = np.concatenate(
            [etiquetas(rng, 0.95, (n, antes)), etiquetas(rng, 0.8, (n, despues))], axis=1
        )
        celda = []
        for version in (V15, V16):
            cierre = cerrar(x, version)
            _comprobar_cierre(x, cierre, version)
            tras = np.where(cierre < NUNCA, cierre - antes, NUNCA)
            tras = np.where(tras <= 0, 0, tras)  # closed before the drop: a false closure
            celda.append(_mediana_p90(tras, despues))
        filas.append(f"| {antes:,} | {n:,} | {celda[0]} | {celda[1]} |")
    largo = 5000
    x = etiquetas(rng, OBJETIVO, (secuencias, largo))
    falsas = []
    for version in (V15, V16):
        cierre = cerrar(x, version)
        _comprobar_cierre(x, cierre, version)
        falsas.append(_proporcion(int((cierre < NUNCA).sum()), secuencias))
    filas += [
        "",
        f"| precision exactly 0.9 | runs | v1.5: closed within {largo:,} verdicts | v1.6 |",
        "| --- | --: | --- | --- |",
        f"| 0.9 | {secuencias:,} | {falsas[0]} | {falsas[1]} |",
    ]
    return filas


def _comprobar_cierre(x: np.ndarray, cierre: np.ndarray, version: str) -> None:
    for i in range(min(COMPROBADAS, len(x))):
        if _referencia_cierre(x[i], version) != cierre[i]:
            sys.exit(
                f"{version} closing: sequence {i} closes at {cierre[i]} vectorised, "
                f"{_referencia_cierre(x[i], version)} in the product's code"
            )


def medir_catalogo(rng: np.random.Generator, secuencias: int) -> list[str]:
    """F gates at once, each at the objective exactly (the worst case), each with its own δ:
    how many of them open wrongly within ``HORIZONTE`` decisions each. The marginal guarantee
    says at most F·δ on average."""
    filas = [
        "| gates in play (F) | runs | false openings per run, mean | F·δ | "
        "runs with at least one |",
        "| --- | --: | --: | --: | --- |",
    ]
    for familias in (5, 20):
        n = max(secuencias // familias, COMPROBADAS)
        s = puntuaciones(rng, "sobre la rejilla", n * familias, HORIZONTE)
        x = etiquetas(rng, OBJETIVO, s.shape)
        primera, _ = abrir(s, x, REGLAS[V16])
        falsas = (primera < NUNCA).reshape(n, familias).sum(1)
        filas.append(
            f"| {familias} | {n:,} | {falsas.mean():.3f} | {familias * DELTA:.2f} | "
            f"{_proporcion(int((falsas > 0).sum()), n)} |"
        )
    return filas


MEDIDAS: dict[str, Callable[[np.random.Generator, int], list[str]]] = {
    "abrir": medir_apertura,
    "error": medir_error,
    "selectivos": medir_selectivos,
    "cobertura": medir_cobertura,
    "cierre": medir_cierre,
    "catalogo": medir_catalogo,
}


def main(argv: list[str] | None = None) -> int:
    """Print every table (or those named), in markdown, on the same seeds."""
    parser = argparse.ArgumentParser(prog="python -m bench.puerta_garantia")
    parser.add_argument("medidas", nargs="*", help=f"any of {', '.join(MEDIDAS)} (default all)")
    parser.add_argument("--secuencias", type=int, default=2000)
    parser.add_argument("--semilla", type=int, default=SEMILLA)
    parser.add_argument("--rapido", action="store_true", help="100 sequences per cell")
    args = parser.parse_args(argv)
    if desconocidas := set(args.medidas) - set(MEDIDAS):
        parser.error(f"unknown: {', '.join(sorted(desconocidas))}")
    secuencias = 100 if args.rapido else args.secuencias
    print(
        f"objective {OBJETIVO}, δ {DELTA}, seed {args.semilla}, {secuencias} sequences per "
        f"cell; detector block {BLOQUE}; v1.6 walk weights {PESOS}"
    )
    for nombre in args.medidas or list(MEDIDAS):
        inicio = time.process_time()
        rng = np.random.default_rng([args.semilla, list(MEDIDAS).index(nombre)])
        filas = MEDIDAS[nombre](rng, secuencias)
        print(f"\n## {nombre} ({time.process_time() - inicio:.0f} s of CPU)\n")
        print("\n".join(filas))
    return 0


if __name__ == "__main__":
    sys.exit(main())
