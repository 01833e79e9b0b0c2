"""The evaluator variants tried on the same labels: every ``fichas calibrar --recalificar`` run.

Each run certifies one key (its evaluator side is the variant) on a label set, and the chance
that one of k variants tried on the same labels passes by luck grows with k (docs/puerta.md,
"Re-scoring"). So every run is recorded here (``revision_recalificaciones``), published or not
(a dry run whose result decided which variant to publish counts as much), and the next run and
the Puertas page count what was tried. Apart from the queue (``revision.almacen.cola``) because it
changes for another reason: how re-scoring is audited, not what people review. ``contar`` and
``por_clave`` are pure.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from pathlib import Path

from esquemas.estado_puerta import ClavePuerta
from migraciones import Database
from revision.almacen.database import open_database

SQL_REGISTRAR = (
    "insert into revision_recalificaciones (corrida, etiquetas, clave_id, clave, hecha_en, "
    "conservadas, descartadas, resultado, publicar, delta) "
    "values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
)
SQL_FILAS = (
    "select corrida, etiquetas, clave_id, hecha_en, delta from revision_recalificaciones "
    "order by hecha_en, corrida"
)

Fila = tuple[str, str, str, float, float]  # corrida, etiquetas, clave_id, hecha_en, delta


@dataclass(frozen=True)
class Corrida:
    """One ``--recalificar`` run as recorded: the label sets it certified on (one per source),
    the key, how many labelled fichas it kept and dropped by reason, the pooled gate's result."""

    corrida: str
    etiquetas: tuple[str, ...]
    clave: ClavePuerta
    hecha_en: float
    conservadas: int
    descartadas: dict[str, int]
    resultado: str
    publicar: bool  # run with --publicar (a dry run or an audit file alone: False)
    delta: float


@dataclass(frozen=True)
class Variantes:
    """What was tried on some label sets: the key ids (first tried first), the runs, and the
    union bound on the chance that one of them passed by luck (each variant's largest δ)."""

    etiquetas: tuple[str, ...]
    claves: tuple[str, ...]
    corridas: int
    azar: float

    @property
    def n(self) -> int:
        """How many variants (distinct keys) were tried."""
        return len(self.claves)


def contar(filas: Iterable[Fila], etiquetas: Collection[str]) -> Variantes:
    """The variants tried on any of ``etiquetas``: a run on an overlapping label set counts
    (its labels are partly the same ones). Pure."""
    claves: dict[str, float] = {}
    corridas = set()
    for corrida, suyas, clave_id, _, delta in sorted(filas, key=lambda f: (f[3], f[0])):
        if suyas in etiquetas:
            claves[clave_id] = max(delta, claves.get(clave_id, 0.0))
            corridas.add(corrida)
    azar = min(1.0, sum(claves.values()))
    return Variantes(tuple(sorted(etiquetas)), tuple(claves), len(corridas), azar)


def por_clave(filas: Iterable[Fila]) -> dict[str, Variantes]:
    """For every key certified by ``--recalificar``, the variants tried on the label sets it
    was certified on (what the Puertas page shows on its gates). Pure."""
    filas = list(filas)
    suyas: dict[str, set[str]] = {}
    for _, etiquetas, clave_id, _, _ in filas:
        suyas.setdefault(clave_id, set()).add(etiquetas)
    return {clave_id: contar(filas, etiquetas) for clave_id, etiquetas in suyas.items()}


class Recalificaciones:
    """The ``--recalificar`` runs; SQLite or PostgreSQL behind the same coroutines."""

    def __init__(self, database: Database) -> None:
        self._database = database

    @classmethod
    async def abrir(cls, postgres_dsn: str | None, data_dir: Path) -> Recalificaciones:
        """Open the database the configuration names (migrated) for this store alone, as
        ``fichas calibrar`` needs; the app shares one with the queue instead."""
        return cls(await open_database(postgres_dsn, data_dir))

    async def cerrar(self) -> None:
        """Close the database (the connection or the pool)."""
        await self._database.close()

    async def registrar(self, corrida: Corrida) -> None:
        """Record one run, one row per label set, in one transaction."""
        async with self._database.transaction() as run:
            for etiquetas in corrida.etiquetas:
                await run(
                    SQL_REGISTRAR,
                    (
                        corrida.corrida,
                        etiquetas,
                        corrida.clave.texto(),
                        corrida.clave.model_dump_json(),
                        corrida.hecha_en,
                        corrida.conservadas,
                        json.dumps(corrida.descartadas, sort_keys=True),
                        corrida.resultado,
                        int(corrida.publicar),
                        corrida.delta,
                    ),
                )

    async def variantes(self, etiquetas: Collection[str]) -> Variantes:
        """The variants tried on ``etiquetas`` so far (this run's included once recorded)."""
        return contar(await self._filas(), etiquetas)

    async def por_clave(self) -> dict[str, Variantes]:
        """Per key certified by ``--recalificar``: the variants tried on its labels."""
        return por_clave(await self._filas())

    async def _filas(self) -> list[Fila]:
        """Every run's rows (one per run and label set: a small table)."""
        rows = (await self._database.run(SQL_FILAS)).rows
        return [(str(c), str(e), str(k), float(h), float(d)) for c, e, k, h, d in rows]
