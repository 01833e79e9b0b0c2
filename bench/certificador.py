"""One round of the reviewer app's certifier against the store: stored states against today's.

Builds a review store (SQLite in a temporary folder, or a new PostgreSQL database with
``--dsn``) holding ``--filas`` decided shadow-mode fichas of one key over ``--familias``
families, lets the certifier advance every sequence once (the one-time cost after an
upgrade), then ``--repeticiones`` times adds ``--nuevas`` decided fichas and times one round
(``revision.certificador.apertura.Apertura.revisar``: the rows after each stored position, the
indexed counts, the states written back). Against it, "today": the round as it was before issue 38
(bf7e643's ``revision/certificador/apertura.py``): every shadow row read (``Almacen.secuencias``)
and every sequence recomputed from scratch with ``puerta.secuencial.certificar_secuencia``. Both are
CPU seconds of this process (the SQLite statements run on its threads; PostgreSQL's server CPU is
not counted), median over the repetitions. It checks that both give the same sequences and exits 1
if not. Figures go to docs/rendimiento.md ("Issue 38: the certifier's round").

Run on an idle machine: ``python -m bench.certificador`` (sizes 1,000 and 100,000);
smoke: ``python -m bench.certificador --filas 200,2000 --nuevas 20 --repeticiones 1``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from esquemas.constantes import DELTA_PUERTA, FAMILIA_TODAS, OBJETIVO_PUERTA
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from harness.secuencia import secuencia_de_cero
from puerta.secuencial import REJILLA, avanzar, inicial, leer
from revision.almacen.cola import Almacen, FilaSecuencia
from revision.certificador.apertura import Apertura

SEMILLA = 3838
CLAVE = ClavePuerta(
    modelo="bench",
    prompt_evaluador_sha256="e" * 64,
    criterios_version="bench",
    modo_evaluador="veredicto",
    prompt_generador_sha256="g" * 64,
)


def _filas(rng: random.Random, desde: int, cuantas: int, familias: int) -> list[tuple[Any, ...]]:
    """(event_id, familia, puntuacion, codigo_ok, orden, decision) of decided shadow fichas:
    scores over the grid, a few code failures, precision 0.95 (so no λ certifies early and
    every round walks a live grid)."""
    filas = []
    for orden in range(desde, desde + cuantas):
        familia = f"familia-{rng.randrange(familias)}"
        puntuacion = rng.uniform(0.3, 1.0)
        codigo_ok = rng.random() < 0.95
        decision = "aprobada" if rng.random() < 0.95 else "rechazada"
        filas.append((f"b-{orden}", familia, puntuacion, codigo_ok, orden, decision))
    return filas


class _Store:
    """Bulk inserts straight into the app's tables (the app's own path is one transaction per
    item, far too slow to fill 100,000 rows)."""

    def __init__(self, dsn: str | None, carpeta: Path) -> None:
        self.dsn = dsn
        self.carpeta = carpeta
        self.llegadas: dict[str, int] = {}

    def insertar(self, filas: Sequence[tuple[Any, ...]]) -> None:
        items, evidencias, decisiones, secuencias = [], [], [], set()
        clave_json = CLAVE.model_dump_json()
        for event_id, familia, puntuacion, codigo_ok, orden, decision in filas:
            llegada = self.llegadas.get(familia, 0)
            self.llegadas[familia] = llegada + 1
            items.append((event_id, "r", familia, float(orden), float(orden)))
            evidencias.append(
                (
                    event_id,
                    CLAVE.texto(),
                    clave_json,
                    familia,
                    puntuacion,
                    int(codigo_ok),
                    orden,
                    llegada,
                )
            )
            decisiones.append((event_id, decision, familia, float(orden)))
            secuencias |= {(CLAVE.texto(), familia, clave_json), (CLAVE.texto(), "*", clave_json)}
        sql = [
            (
                "insert into revision_items (event_id, tipo, motivo, sku, version, familia, "
                "criterios, datos, recibido_en, estado, cerrado_en) values ({p}, 'revision', "
                "'sin_garantia', {p}, 1, {p}, '[]', '{{}}', {p}, 'decidida', {p})",
                items,
            ),
            (
                "insert into revision_evidencias (event_id, clave_id, clave, familia, "
                "puntuacion, codigo_ok, sombra, orden, llegada) values "
                "({p}, {p}, {p}, {p}, {p}, {p}, 1, {p}, {p})",
                evidencias,
            ),
            (
                "insert into revision_decisiones (event_id, tipo, decision, familia, criterios, "
                "revisor, decidida_en, segundos, registro, publicacion, enviada) values "
                "({p}, 'revision', {p}, {p}, '[]', 'bench', {p}, 0, '{{}}', null, 1)",
                decisiones,
            ),
            (
                "insert into revision_secuencias (clave_id, familia, clave, desde, posicion, "
                "estado) values ({p}, {p}, {p}, 0, -1, null) on conflict do nothing",
                sorted(secuencias),
            ),
        ]
        if self.dsn:
            import psycopg

            with psycopg.connect(self.dsn) as conn, conn.cursor() as cur:
                for texto, valores in sql:
                    cur.executemany(texto.format(p="%s"), valores)
        else:
            conn = sqlite3.connect(self.carpeta / "revision.sqlite")
            with conn:
                for texto, valores in sql:
                    conn.executemany(texto.format(p="?"), valores)
            conn.close()


def _hoy(
    filas: Sequence[FilaSecuencia], reinicios: Mapping[tuple[str, str], int]
) -> dict[str, tuple[Any, ...]]:
    """bf7e643's round, pure part: per key, the pooled and every family's sequence from every
    row, recomputed from scratch. Gate id -> (result, arrived, decided, pending, blocker, the
    state's per-λ numbers)."""
    por_clave: dict[str, list[FilaSecuencia]] = {}
    for fila in filas:
        por_clave.setdefault(fila.clave.texto(), []).append(fila)
    resultado = {}
    for clave_id, de_clave in por_clave.items():
        conjunta = reinicios.get((FAMILIA_TODAS, clave_id), 0)
        grupos = {FAMILIA_TODAS: (de_clave, conjunta)}
        for familia in sorted({f.familia for f in de_clave}):
            desde = max(conjunta, reinicios.get((familia, clave_id), 0))
            grupos[familia] = ([f for f in de_clave if f.familia == familia], desde)
        for familia, (propias, desde) in grupos.items():
            prefijo, llegadas, decididas, pendientes, bloqueo = secuencia_de_cero(propias, desde)
            # certificar_secuencia(prefijo, ...) is exactly leer(avanzar(inicial(...), prefijo)):
            # the state is kept to compare it, field by field, with the stored one.
            estado = avanzar(inicial(OBJETIVO_PUERTA, DELTA_PUERTA, REJILLA), enumerate(prefijo))
            res = leer(estado)
            resultado[f"{familia}|{clave_id}"] = (
                res,
                llegadas,
                decididas,
                pendientes,
                bloqueo,
                estado.umbrales,
            )
    return resultado


def _cpu(funcion: Callable[[], Any]) -> tuple[float, float, Any]:
    """(CPU seconds of this process, wall seconds, result) of one call."""
    cpu, pared = time.process_time(), time.perf_counter()
    resultado = funcion()
    return time.process_time() - cpu, time.perf_counter() - pared, resultado


async def _medir(
    dsn: str | None, carpeta: Path, filas: int, nuevas: int, familias: int, repeticiones: int
) -> dict[str, Any]:
    """One size: the first round, then ``repeticiones`` rounds after ``nuevas`` decisions."""
    rng = random.Random(SEMILLA)
    almacen = await Almacen.abrir(dsn, carpeta)
    await almacen.cerrar()
    store = _Store(dsn, carpeta)
    store.insertar(_filas(rng, 0, filas, familias))
    almacen = await Almacen.abrir(dsn, carpeta)
    escritos: list[EstadoPuerta] = []

    estados: dict[str, EstadoPuerta] = {}

    async def escribir(estado: EstadoPuerta) -> None:
        """The gate topic, read back at once: an opening is not tried again."""
        escritos.append(estado)
        estados[estado.id] = estado

    apertura = Apertura(almacen, lambda: estados, escribir)
    loop = asyncio.get_running_loop()

    def ronda() -> Any:
        return asyncio.run_coroutine_threadsafe(apertura.revisar(), loop).result()

    try:
        primera = await asyncio.to_thread(_cpu, ronda)
        rondas, hoy = [], []
        siguiente = filas
        for _ in range(repeticiones):
            store.insertar(_filas(rng, siguiente, nuevas, familias))
            siguiente += nuevas
            rondas.append(await asyncio.to_thread(_cpu, ronda))

            async def de_cero() -> Any:
                return _hoy(await almacen.secuencias(), await almacen.reinicios())

            def hoy_() -> Any:
                return asyncio.run_coroutine_threadsafe(de_cero(), loop).result()

            hoy.append(await asyncio.to_thread(_cpu, hoy_))
            _comparar(apertura, hoy[-1][2])
    finally:
        await almacen.cerrar()
    return {
        "filas": filas,
        "primera_cpu_s": primera[0],
        "ronda_cpu_s": statistics.median(r[0] for r in rondas),
        "ronda_pared_s": statistics.median(r[1] for r in rondas),
        "hoy_cpu_s": statistics.median(h[0] for h in hoy),
        "hoy_pared_s": statistics.median(h[1] for h in hoy),
    }


def _comparar(apertura: Apertura, hoy: Mapping[str, tuple[Any, ...]]) -> None:
    """The advanced sequences equal the recomputation from scratch, bit for bit: the walk's
    result (every λ's n, k, e-values), the counts, the blocker, and the stored state's numbers
    per λ (log-capitals, running maxima, exclusion)."""
    avanzadas = {s.id: s for s in apertura.secuencias if s.clave == CLAVE}
    if set(avanzadas) != set(hoy):
        raise AssertionError(f"different sequences: {sorted(avanzadas)} vs {sorted(hoy)}")
    for id_, sec in avanzadas.items():
        esperado = hoy[id_]
        obtenido = (
            sec.resultado,
            sec.llegadas,
            sec.decididas,
            sec.pendientes,
            sec.bloqueo,
            sec.estado.umbrales,
        )
        if obtenido != esperado:
            raise AssertionError(f"{id_}: advanced {obtenido[1:5]} != recomputed {esperado[1:5]}")


def main(argv: list[str] | None = None) -> int:
    """Print one line per size and the ratio of the largest to the smallest; exit 1 if the
    advanced sequences differ from the recomputation."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--filas", default="1000,100000", help="stored rows, comma-separated")
    parser.add_argument("--nuevas", type=int, default=100)
    parser.add_argument("--familias", type=int, default=5)
    parser.add_argument("--repeticiones", type=int, default=5)
    parser.add_argument("--dsn", default=None, help="PostgreSQL server (a new database on it)")
    args = parser.parse_args(argv)
    logging.getLogger("revision").setLevel(logging.ERROR)  # the openings' log lines
    medidas = []
    for filas in (int(f) for f in args.filas.split(",")):
        with ExitStack() as pila:
            carpeta = Path(pila.enter_context(tempfile.TemporaryDirectory()))
            dsn = None
            if args.dsn:
                from harness.basedatos import base_nueva

                dsn = pila.enter_context(base_nueva(args.dsn, "fichas_bench"))
            try:
                medida = asyncio.run(
                    _medir(dsn, carpeta, filas, args.nuevas, args.familias, args.repeticiones)
                )
            except AssertionError as exc:
                print(f"the advanced state differs from the recomputation: {exc}", file=sys.stderr)
                return 1
        medidas.append(medida)
        print(
            f"{filas:>7} stored rows + {args.nuevas} new: round "
            f"{medida['ronda_cpu_s'] * 1000:8.1f} ms CPU "
            f"({medida['ronda_pared_s'] * 1000:.1f} ms wall); today "
            f"{medida['hoy_cpu_s'] * 1000:8.1f} ms CPU; first round after an upgrade "
            f"{medida['primera_cpu_s']:.2f} s CPU",
            flush=True,
        )
    if len(medidas) > 1:
        razon = medidas[-1]["ronda_cpu_s"] / max(medidas[0]["ronda_cpu_s"], 1e-9)
        print(f"round CPU at {medidas[-1]['filas']} rows / at {medidas[0]['filas']}: {razon:.2f}x")
    print(json.dumps({"certificador": medidas}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
