"""Named fault-injection points: the only places where product code fails on purpose.

Some guarantees can only be shown by dying at one exact line (the review app killed between
committing a decision and sending it). Such a place calls ``fault_point(NAME)``; the point does
nothing unless the testing switch ``FICHAS_FAULT_POINTS`` names it (comma-separated names).
Production never sets the switch, so every point is inert there.

Every point is declared in ``FAULT_POINTS`` with what it does, and listed in docs/operacion.md
("Fault-injection points"); ``tests/infra/test_fault_points.py`` keeps the declarations, the
document and the call sites in agreement, so a point cannot be added silently.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

SWITCH = "FICHAS_FAULT_POINTS"

REVISOR_CAIDA_TRAS_DECISION = "revisor.caida_tras_decision"
WORKER_CAIDA_EN_TRANSACCION = "worker.caida_en_transaccion"

FAULT_POINTS: Mapping[str, str] = {
    REVISOR_CAIDA_TRAS_DECISION: (
        "the review app kills itself with SIGKILL right after a decision that publishes is "
        "committed and before its records are sent (tests/revision/test_caida.py)"
    ),
    WORKER_CAIDA_EN_TRANSACCION: (
        "the worker kills itself with SIGKILL inside an emit's transaction: its records and "
        "its offset are sent, the commit is not (tests/stream/test_worker_postgres.py)"
    ),
}


def armed(environ: Mapping[str, str] = os.environ) -> frozenset[str]:
    """The points the switch arms; an unknown name is an error, not a silently inert test."""
    names = {name.strip() for name in environ.get(SWITCH, "").split(",") if name.strip()}
    unknown = sorted(names - FAULT_POINTS.keys())
    if unknown:
        known = sorted(FAULT_POINTS)
        raise ValueError(f"{SWITCH} names unknown fault points {unknown}; known: {known}")
    return frozenset(names)


def fault_point(name: str) -> None:
    """Die like ``kill -9`` here if the switch arms ``name``; otherwise do nothing."""
    if name not in FAULT_POINTS:
        raise KeyError(f"undeclared fault point {name!r} (declare it in infra.fault_points)")
    if name in armed():
        os.kill(os.getpid(), signal.SIGKILL)
