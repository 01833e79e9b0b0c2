"""The version store's tables, on SQLite and PostgreSQL, as numbered migrations.

Two tables, ``fichas_versiones`` (the newest version handled per SKU) and
``fichas_resultados`` (the outcome of each ``event_id``), the same names on both dialects
since migration 1. Migration 0 reproduces the schema of the release before migrations, so a
database that release left opens unchanged (``migraciones.numeradas``); the position of a
migration is its version, so a migration is only ever appended, never edited. The migrations
table is ``fichas_migraciones``. ``versiones.almacen`` applies them.
"""

from __future__ import annotations

from migraciones import Esquema, Migracion

# The schema of the release before migrations, as it left a database: migration 0 of both
# dialects. On PostgreSQL that release also ran, at every start, the ``alter``s below (the
# type change only when the column was not bigint yet); here they are unconditional and
# idempotent: ``type bigint`` on a bigint column changes nothing, ``add column if not exists``
# skips a column that is there. On SQLite it added ``actualizada_en`` to a ``versiones`` table of
# an older release after ``pragma table_info``; SQLite has no ``add column if not exists``, so
# migration 0 does not: a data folder last opened by a release older than that one (commit
# 186e170, before the retention) must be opened once by the release before migrations first
# (docs/operacion.md).
_POSTGRES_0 = (
    "create table if not exists fichas_versiones "
    "(sku text primary key, version bigint not null, "
    "actualizada_en timestamptz not null default now())",
    "alter table fichas_versiones alter column version type bigint",
    "alter table fichas_versiones add column if not exists "
    "actualizada_en timestamptz not null default now()",
    "create table if not exists fichas_resultados "
    "(event_id text primary key, sku text not null, version bigint not null, "
    "huella text not null, destino text not null, salida text not null, "
    "registrado_en timestamptz not null default now())",
    "create index if not exists fichas_resultados_sku on fichas_resultados (sku, version)",
    "create index if not exists fichas_resultados_edad on fichas_resultados (registrado_en)",
    "create index if not exists fichas_versiones_edad on fichas_versiones (actualizada_en)",
)
_SQLITE_0 = (
    "create table if not exists versiones "
    "(sku text primary key, version integer not null, actualizada_en real not null default 0)",
    "create table if not exists resultados "
    "(event_id text primary key, sku text not null, version integer not null, "
    "huella text not null, destino text not null, salida text not null, "
    "registrado_en real not null)",
    "create index if not exists resultados_sku on resultados (sku, version)",
    "create index if not exists resultados_edad on resultados (registrado_en)",
    "create index if not exists versiones_edad on versiones (actualizada_en)",
)
# SQLite's tables take the names they have on PostgreSQL (indexes too).
_SQLITE_1 = (
    "alter table versiones rename to fichas_versiones",
    "alter table resultados rename to fichas_resultados",
    "drop index resultados_sku",
    "drop index resultados_edad",
    "drop index versiones_edad",
    "create index fichas_resultados_sku on fichas_resultados (sku, version)",
    "create index fichas_resultados_edad on fichas_resultados (registrado_en)",
    "create index fichas_versiones_edad on fichas_versiones (actualizada_en)",
)

ESQUEMA = Esquema(
    nombre="versiones",
    tabla="fichas_migraciones",
    migraciones=(
        Migracion("the schema of the release before migrations", _SQLITE_0, _POSTGRES_0),
        Migracion("the same table names on SQLite as on PostgreSQL", _SQLITE_1, ()),
    ),
)
