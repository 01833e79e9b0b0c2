"""How every store of the project connects: the checkpointer, the version store, the review app.

One place for the connection settings of all three: PostgreSQL's timeouts and its one pool
factory (``open_pool``), SQLite's WAL file (``connect_sqlite``). What differs between the
stores is an explicit argument, never a second opener: the pool's size, whether it checks a
connection before lending it, the connection options a caller's library needs (the
checkpointer's ``dict_row``); SQLite's ``synchronous``. Each store's values, and why, are
listed once in ``migraciones.database`` (docs/arquitectura.md, "The store layer"). Which
errors of the two drivers mean "the database is not answering now" is here too
(``database_unavailable``), so a caller that retries names no driver's classes;
``rechazo_postgres`` says in one line why a server that answered refused
``FICHAS_POSTGRES_DSN`` (a login, a missing database, a privilege): what the commands people
run print (exit 2).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from psycopg_pool import AsyncConnectionPool

# Every PostgreSQL connection gives up instead of hanging: a connection that cannot be made in
# 10 s, a statement that runs 30 s, or a transaction left idle 60 s (its client stopped) becomes
# an error, which the caller's retry sees and the server's locks are released.
PG_CONNECT_TIMEOUT_S = 10
PG_STATEMENT_TIMEOUT_MS = 30_000
PG_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000
SQLITE_BUSY_TIMEOUT_S = 5.0  # a writer of another process holds the file: wait, then an error

# SQLite's ``synchronous`` with WAL: "normal" writes a commit to the WAL without fsync (a crash
# of the process loses nothing committed, a power cut can lose the last commits); "full"
# fsyncs every commit (a commit survives a power cut).
Synchronous = Literal["normal", "full"]


def postgres_connection_kwargs() -> dict[str, object]:
    """Connection parameters with the timeouts above, for every psycopg pool of the project."""
    return {
        "connect_timeout": PG_CONNECT_TIMEOUT_S,
        "options": (
            f"-c statement_timeout={PG_STATEMENT_TIMEOUT_MS} "
            f"-c idle_in_transaction_session_timeout={PG_IDLE_IN_TRANSACTION_TIMEOUT_MS}"
        ),
    }


async def open_pool(
    dsn: str, *, max_size: int, check: bool = False, **connection: Any
) -> AsyncConnectionPool[Any]:
    """An opened psycopg pool of autocommit connections with the project's timeouts.

    ``check``: test a connection before lending it (one round trip), so a pool heals after a
    server restart without the caller seeing an error; ``connection``: further connection
    parameters (``cursor_factory``, ``row_factory``, ``prepare_threshold``,
    ``application_name``). The caller closes it.
    """
    from psycopg_pool import AsyncConnectionPool

    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        dsn,
        min_size=1,
        max_size=max_size,
        open=False,
        check=AsyncConnectionPool.check_connection if check else None,
        kwargs={"autocommit": True, **postgres_connection_kwargs(), **connection},
    )
    await pool.open(wait=True)
    return pool


# What a PostgreSQL server that answered says when it refuses the DSN's connection (libpq's
# "FATAL:" lines); a refused TCP connection or a timeout is a server away, not a refusal.
_REFUSED_LOGIN = (
    "password authentication failed",
    "does not exist",  # the role or the database
    "no pg_hba.conf entry",
    "permission denied for database",
    "is not permitted to log in",
)
_INSUFFICIENT_PRIVILEGE = "42501"


def rechazo_postgres(exc: BaseException, dsn: str | None) -> str | None:
    """One line saying that PostgreSQL refused ``FICHAS_POSTGRES_DSN`` and why, naming the
    server, user and database (never the password); None when ``exc`` is not a refusal (a
    server that does not answer is waited for or reported by the caller)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    if not isinstance(exc, psycopg.Error) or not dsn:
        return None
    text = str(exc)
    privilege = getattr(exc, "sqlstate", None) == _INSUFFICIENT_PRIVILEGE
    if not privilege and not any(marker in text for marker in _REFUSED_LOGIN):
        return None
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.Error:
        parts = {}
    where = f"{parts.get('host', 'localhost')}:{parts.get('port', 5432)}"
    who = f"user {parts.get('user', '?')}, database {parts.get('dbname', '?')}"
    said = text.partition("FATAL:")[2].strip() or text.splitlines()[0].strip()
    fix = (
        'the role must own the database (docs/despliegue.md, "PostgreSQL")'
        if privilege
        else "fix the user, password, database or the server's pg_hba.conf"
    )
    return f"PostgreSQL at {where} refused FICHAS_POSTGRES_DSN ({who}): {said}; {fix}"


def connect_sqlite(path: Path, *, synchronous: Synchronous) -> sqlite3.Connection:
    """A WAL connection to ``path`` (its folder created), usable from any one thread at a time.

    The connection keeps Python's default transaction handling (LangGraph's ``SqliteSaver``
    relies on it); ``migraciones.database.SqliteDatabase`` switches it to explicit
    transactions.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), timeout=SQLITE_BUSY_TIMEOUT_S, check_same_thread=False)
    conn.execute("pragma journal_mode=wal")
    conn.execute(f"pragma synchronous={synchronous}")
    return conn


def database_unavailable(exc: BaseException) -> bool:
    """Whether ``exc`` is a store's database not answering right now, which retrying cures:
    SQLite locked, busy or failing its disk I/O (``sqlite3.OperationalError``); PostgreSQL's
    connection lost or refused, a pool or statement timeout (``psycopg.OperationalError``),
    the server shutting down (``AdminShutdown``)."""
    if isinstance(exc, sqlite3.OperationalError):
        return True
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg is a dependency
        return False
    return isinstance(exc, psycopg.OperationalError | psycopg.errors.AdminShutdown)
