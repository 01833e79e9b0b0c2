"""One certifier among the app's replicas: a lease in the store, renewed every few seconds.

A row of ``revision_leases`` names its holder and until when it holds. Taking and renewing are
one conditional upsert (the row is written only when it is free, expired, or already ours), so
two replicas never both succeed; on SQLite and PostgreSQL alike, through ``migraciones``.
The holder runs the rounds that write to ``fichas.puerta`` (the certifier's openings and
coverage, the online bound's closures); the others compute what their pages show. A stopping
holder releases it, so a rolling update hands over within one renewal period.
Invariants: a holder stops writing ``MARGIN_S`` before its lease could be taken by another
(clocks of the replicas must agree to well within that margin: NTP); every opening is also
written once per mark (``revision.certificador.escritura``), so a holder paused past its lease
cannot write a record another already wrote. Why: docs/revision.md, "Un solo certificador".
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable

from migraciones import Database

log = logging.getLogger(__name__)

NAME = "certificador"
DURATION_S = 20.0  # how long a renewal holds
RENEW_S = 5.0  # how often the holder renews, and the others try to take it
MARGIN_S = 5.0  # a holder stops writing this long before its lease ends

SQL_TAKE = (
    "insert into revision_leases (name, holder, expires_at) values ($1, $2, $3) "
    "on conflict (name) do update set holder = excluded.holder, "
    "expires_at = excluded.expires_at "
    "where revision_leases.holder = excluded.holder or revision_leases.expires_at < $4"
)
SQL_RELEASE = "update revision_leases set expires_at = 0 where name = $1 and holder = $2"
SQL_READ = "select holder, expires_at from revision_leases where name = $1"


def holder_id() -> str:
    """This process: the host (the pod's name in Kubernetes), the pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class Lease:
    """The certifier's lease as one replica sees it."""

    def __init__(
        self,
        database: Database,
        holder: str | None = None,
        name: str = NAME,
        duration_s: float = DURATION_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._database = database
        self.holder = holder or holder_id()
        self.name = name
        self.duration_s = duration_s
        self._clock = clock
        self._until = 0.0  # our own lease's end, when we hold it
        self.renewals = 0

    @property
    def held(self) -> bool:
        """Whether this replica may write now: it holds the lease, with the margin to spare."""
        return self._clock() < self._until - min(MARGIN_S, self.duration_s / 4)

    async def renew(self) -> bool:
        """Take the lease if it is free or expired, or extend ours; whether we hold it now."""
        now = self._clock()
        until = now + self.duration_s
        rows = await self._database.run(SQL_TAKE, (self.name, self.holder, until, now))
        if rows.count:
            if self._until <= now:
                log.warning(
                    "this replica (%s) now runs the certifier (lease %s)", self.holder, self.name
                )
            self._until = until
            self.renewals += 1
        else:
            if self._until > now:
                log.warning("this replica (%s) lost the certifier's lease", self.holder)
            self._until = 0.0
        return self.held

    async def release(self) -> None:
        """Give the lease up now (a stopping replica), so another takes it at its next try."""
        self._until = 0.0
        await self._database.run(SQL_RELEASE, (self.name, self.holder))

    async def current(self) -> tuple[str, float] | None:
        """(holder, until) as the store has it; None when nobody ever took it."""
        row = (await self._database.run(SQL_READ, (self.name,))).first()
        return None if row is None else (str(row[0]), float(row[1]))

    async def keep(self, every_s: float = RENEW_S) -> None:
        """Renew (or try to take) the lease every ``every_s`` seconds until cancelled; a failed
        renewal (the database down) is logged, and the lease lapses on its own."""
        while True:
            try:
                await self.renew()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("renewing the certifier's lease failed; will retry")
            await asyncio.sleep(every_s)

    async def stop(self) -> None:
        """Release the lease if held, never raising (the app is stopping)."""
        with contextlib.suppress(Exception):
            await self.release()
