"""The review app's database: where it is and how it is opened, on the one store layer.

One ``migraciones.Database`` serves the app's two stores, the queue
(``revision.almacen.cola.Almacen``) and the accounts (``revision.almacen.cuentas.Cuentas``):
SQLite ``revision.sqlite`` in ``FICHAS_DATA_DIR``, or PostgreSQL with ``FICHAS_POSTGRES_DSN``
(tables ``revision_*``, ``revision.almacen.migrations``). The app opens it once and gives both
stores the same object. ``OPCIONES`` are the app's choices (on a thread, ``synchronous=full``; a
checked pool named ``fichas revisor``). Why: docs/revision.md, "La base de datos".
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
