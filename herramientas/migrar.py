"""``fichas migrar``: create or upgrade every store's schema, as one step, under one lock.

The stores: the checkpoints (LangGraph's saver, its own migrations), the worker's version store
(``versiones.almacen``) and the review app's database (``revision.almacen.database``), in the
PostgreSQL database of ``FICHAS_POSTGRES_DSN`` or, without it, in the SQLite files of
``FICHAS_DATA_DIR``. The whole run holds the schema lock (``migraciones.cerrojo``: PostgreSQL's
advisory lock 727274, or an ``flock`` on the data folder's ``.migrar.lock``), so any number of runs
at once leave one correct schema and all exit 0; run twice, the second finds nothing to do.

Workers and the review app run the migrations of the stores they open at start, under the same
lock, so they also come up on a new database; ``fichas migrar`` makes that a step of its own
for deployments (the one-shot compose service, the Kubernetes init container of every pod): the
migration runs before the new release serves, and a failure stops the rollout there (the pod
stays in Init, the old ones keep serving) instead of crash-looping every replica. Exit 0 done;
1 failed (the server away, a migration's error); 2 bad configuration, or PostgreSQL refused
the DSN (one line naming it, ``migraciones.conexion.rechazo_postgres``); 5 the lock stayed held.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from migraciones import (
    Cambio,
    EsperaAgotada,
    cerrojo_postgres,
    cerrojo_sqlite,
    migrar_archivo,
    migrar_postgres,
)
from migraciones.cerrojo import ESPERA_MAX_S
from migraciones.conexion import rechazo_postgres

EXIT_FALLO = 1
EXIT_USAGE = 2
EXIT_CERROJO = 5

DESCRIPTION = """\
Create or upgrade the schema of every store: the checkpoints (LangGraph), the worker's
version store and the review app's store; in the PostgreSQL database of FICHAS_POSTGRES_DSN,
or else in the SQLite files of FICHAS_DATA_DIR.

When to run it: before starting the workers and the review app of a new release (docker
compose runs it as the one-shot 'migrar' service, Kubernetes as the 'migrar' init container
of every pod), on a new database, or to see the schema versions. Workers and the review app
also apply what is missing when they start, under the same lock, so forgetting it never breaks
a start; running it first keeps schema changes out of the rollout of the replicas
(docs/operacion.md).

It holds the schema lock for its whole run (PostgreSQL: pg_advisory_lock(727274); SQLite:
flock on FICHAS_DATA_DIR/.migrar.lock), prints each store's schema version before and after,
and is idempotent: run it twice, or eight times at once, every run exits 0.

Exit codes: 0 done; 1 a migration failed or the database is unreachable (the message says
which store; nothing of that migration was applied); 2 bad configuration; 5 the lock stayed
held for longer than --espera seconds."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fichas migrar",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--espera",
        type=float,
        default=ESPERA_MAX_S,
        metavar="S",
        help=f"give up after S seconds waiting for the lock (default {ESPERA_MAX_S:.0f})",
    )
    return parser


async def migrar(postgres_dsn: str | None, data_dir: Path, espera_max_s: float) -> list[Cambio]:
    """Every store's migrations, in dependency order, under the lock held for the whole run."""
    from grafo import checkpointer
    from revision.almacen import database
    from versiones import almacen

    propios = (almacen.OPCIONES, database.OPCIONES)  # the stores on migraciones.Database
    if postgres_dsn:
        async with cerrojo_postgres(postgres_dsn, espera_max_s) as conn:
            cambios = [await checkpointer.preparar_postgres(postgres_dsn)]
            for opciones in propios:
                cambios.append(await migrar_postgres(conn, opciones.esquema))
            return cambios
    async with cerrojo_sqlite(data_dir, espera_max_s):
        return [
            checkpointer.preparar_sqlite(data_dir / checkpointer.SQLITE_FILE),
            *(migrar_archivo(data_dir, opciones) for opciones in propios),
        ]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``fichas migrar``."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    from herramientas.arranque import leer_ajustes

    settings = leer_ajustes("migrar")
    if settings is None:
        return EXIT_USAGE
    donde = "PostgreSQL" if settings.postgres_dsn else f"SQLite in {settings.data_dir}"
    print(f"fichas migrar: {donde}", flush=True)
    try:
        cambios = asyncio.run(migrar(settings.postgres_dsn, settings.data_dir, args.espera))
    except EsperaAgotada as exc:
        print(f"fichas migrar: {exc}", file=sys.stderr)
        return EXIT_CERROJO
    except Exception as exc:
        rechazo = rechazo_postgres(exc, settings.postgres_dsn)
        if rechazo is not None:  # a login, a database, a privilege: settings, exit 2
            print(f"fichas migrar: {rechazo}", file=sys.stderr)
            return EXIT_USAGE
        print(f"fichas migrar: failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_FALLO
    for cambio in cambios:
        print(cambio.linea(), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
