"""Schema migrations of the project's stores, and the lock that makes them one step at a time.

Three modules, importable from every package that owns tables (``grafo`` for the checkpoints,
``stream`` for the version store, ``revision`` for the review app): this package depends on
nothing of the project, only on ``sqlite3`` and ``psycopg``.

* ``migraciones.esquema``: numbered migrations per store (the position in the list is the
  version), a migrations table in the database, each migration applied once in a transaction.
* ``migraciones.conexion``: how every store connects (PostgreSQL's timeouts, SQLite's WAL).
* ``migraciones.cerrojo``: the lock held while anything migrates: PostgreSQL's advisory lock
  ``CLAVE_CERROJO`` or, on the embedded SQLite data folder, an ``flock`` on a file in it.

``fichas migrar`` (``herramientas.migrar``) takes the lock once for its whole run; a worker or
the review app takes it around the migrations of the stores it opens, so any number of them
started at the same instant on a new or an old database serialise on it and all come up.
"""

from migraciones.cerrojo import CLAVE_CERROJO, EsperaAgotada, cerrojo_postgres, cerrojo_sqlite
from migraciones.conexion import (
    PG_CONNECT_TIMEOUT_S,
    PG_IDLE_IN_TRANSACTION_TIMEOUT_MS,
    PG_STATEMENT_TIMEOUT_MS,
    connect_sqlite,
    postgres_connection_kwargs,
)
from migraciones.esquema import (
    Cambio,
    Esquema,
    Migracion,
    migrar_postgres,
    migrar_sqlite,
    version_postgres,
    version_sqlite,
)

__all__ = [
    "CLAVE_CERROJO",
    "PG_CONNECT_TIMEOUT_S",
    "PG_IDLE_IN_TRANSACTION_TIMEOUT_MS",
    "PG_STATEMENT_TIMEOUT_MS",
    "Cambio",
    "EsperaAgotada",
    "Esquema",
    "Migracion",
    "cerrojo_postgres",
    "cerrojo_sqlite",
    "connect_sqlite",
    "migrar_postgres",
    "migrar_sqlite",
    "postgres_connection_kwargs",
    "version_postgres",
    "version_sqlite",
]
