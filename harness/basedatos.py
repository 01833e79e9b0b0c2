"""A brand-new PostgreSQL database on the test server, dropped afterwards (schema tests)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

from psycopg.conninfo import conninfo_to_dict, make_conninfo


@contextmanager
def base_nueva(dsn: str, prefijo: str = "fichas_t") -> Iterator[str]:
    """Create an empty database next to ``dsn``'s; yield its DSN; drop it (forcing) on exit."""
    import psycopg

    nombre = f"{prefijo}_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'create database "{nombre}"')
    try:
        yield make_conninfo(dsn, dbname=nombre)
    finally:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'drop database if exists "{nombre}" with (force)')


def nombre_base(dsn: str) -> str:
    """The database a DSN names."""
    return str(conninfo_to_dict(dsn).get("dbname", ""))
