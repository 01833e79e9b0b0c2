"""The store machinery every store shares: connecting, the one ``Database``, migrations, the lock.

Imports nothing of the project (only ``sqlite3`` and ``psycopg``); every package that owns
tables imports it: ``grafo`` (the checkpoints), ``versiones`` (the version store), ``revision``
(the review app) and ``herramientas`` (``fichas migrar``). Four modules:

* ``migraciones.database``: the one store layer, rows and transactions on SQLite or
  PostgreSQL with ``$n`` placeholders, and the opener of a store (``open_database``).
* ``migraciones.numeradas``: numbered migrations per store (the position in the list is the
  version), a migrations table in the database, each migration applied once in a transaction.
* ``migraciones.conexion``: how every store connects (PostgreSQL's timeouts and its one pool
  factory, SQLite's WAL and ``synchronous``) and which drivers' errors mean the database is
  not answering now (``database_unavailable``).
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
    Synchronous,
    connect_sqlite,
    database_unavailable,
    open_pool,
    postgres_connection_kwargs,
)
from migraciones.database import (
    Database,
    PostgresDatabase,
    Rows,
    Run,
    SqliteDatabase,
    StoreOptions,
    migrar_archivo,
    open_database,
    sqlite_sql,
)
from migraciones.numeradas import (
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
    "Database",
    "EsperaAgotada",
    "Esquema",
    "Migracion",
    "PostgresDatabase",
    "Rows",
    "Run",
    "SqliteDatabase",
    "StoreOptions",
    "Synchronous",
    "cerrojo_postgres",
    "cerrojo_sqlite",
    "connect_sqlite",
    "database_unavailable",
    "migrar_archivo",
    "migrar_postgres",
    "migrar_sqlite",
    "open_database",
    "open_pool",
    "postgres_connection_kwargs",
    "sqlite_sql",
    "version_postgres",
    "version_sqlite",
]
