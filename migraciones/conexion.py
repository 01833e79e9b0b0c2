"""How every store of the project connects: the checkpointer, the version store, the review app.

Here rather than in one of them because all three open connections the same way, and each may
import this package (README, Layout): ``grafo`` for the checkpoints, ``stream`` for the version
store, ``revision`` for the review queue.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

# Every PostgreSQL connection gives up instead of hanging: a connection that cannot be made in
# 10 s, a statement that runs 30 s, or a transaction left idle 60 s (its client stopped) becomes
# an error, which the caller's retry sees and the server's locks are released.
PG_CONNECT_TIMEOUT_S = 10
PG_STATEMENT_TIMEOUT_MS = 30_000
PG_IDLE_IN_TRANSACTION_TIMEOUT_MS = 60_000


def postgres_connection_kwargs() -> dict[str, object]:
    """Connection parameters with the timeouts above, for every psycopg pool of the project."""
    return {
        "connect_timeout": PG_CONNECT_TIMEOUT_S,
        "options": (
            f"-c statement_timeout={PG_STATEMENT_TIMEOUT_MS} "
            f"-c idle_in_transaction_session_timeout={PG_IDLE_IN_TRANSACTION_TIMEOUT_MS}"
        ),
    }


def connect_sqlite(path: Path) -> sqlite3.Connection:
    """A WAL connection with ``synchronous=NORMAL``, usable from the loop's thread only.

    A commit writes to the WAL without fsync: a crash of the process loses nothing committed,
    a power cut can lose the last commits (docs/rendimiento.md).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(str(path), check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn
