"""The review app's database: where it is and how it is opened, on the one store layer.

One database serves the app's two stores, the review queue (``revision.almacen.cola.Almacen``) and
the reviewers' accounts (``revision.almacen.cuentas.Cuentas``): embedded SQLite ``revision.sqlite``
in ``FICHAS_DATA_DIR``, or PostgreSQL when ``FICHAS_POSTGRES_DSN`` is set (tables prefixed
``revision_`` so they live next to the worker's, with the same names on both;
``revision.almacen.migrations``). It is a ``migraciones.Database`` (rows, transactions, ``$n``
placeholders): the app opens it once (``open_database``) and gives both stores the same object, so
on SQLite they share one connection and one lock; each store's ``abrir`` opens one of its own for
the commands that need only one of them.

``OPCIONES`` are the app's choices: on SQLite every statement on a thread and every commit
fsynced (``synchronous=full``), on PostgreSQL a pool that checks a connection before lending
it (a server restart heals without an error page) and names itself ``fichas revisor``. Why:
docs/revision.md, "La base de datos".
"""

from __future__ import annotations

from pathlib import Path

import migraciones
from migraciones import Database, StoreOptions
from revision.almacen.migrations import ESQUEMA

SQLITE_FILE = "revision.sqlite"
APPLICATION_NAME = "fichas revisor"  # application_name of its PostgreSQL connections
OPCIONES = StoreOptions(
    esquema=ESQUEMA,
    sqlite_file=SQLITE_FILE,
    synchronous="full",
    on_thread=True,
    pool_max=4,
    check=True,
    application_name=APPLICATION_NAME,
)


def exists(postgres_dsn: str | None, data_dir: Path) -> bool:
    """Whether a database is there to read (a report never creates an empty one by accident)."""
    return bool(postgres_dsn) or (data_dir / SQLITE_FILE).exists()


async def open_database(postgres_dsn: str | None, data_dir: Path) -> Database:
    """Open the database the configuration names, migrated under the schema lock."""
    return await migraciones.open_database(postgres_dsn, data_dir, OPCIONES)
