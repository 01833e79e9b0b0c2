"""Named fault-injection points: the only places where product code fails on purpose.

Some guarantees can only be shown by dying at one exact line (the review app killed between
committing a decision and sending it). Such a place calls ``fault_point(NAME)``; the point does
nothing unless the testing switch ``FICHAS_FAULT_POINTS`` names it (comma-separated names).
Production never sets the switch, so every point is inert there; and a process started with the
switch but without the test suite's allowance ``FICHAS_FAULT_POINTS_ALLOWED=1`` refuses to start
(``refusal``, one line from ``infra.config.load_settings``, exit 2), so a copied test variable
cannot arm a kill in a deployment.

Every point is declared in ``FAULT_POINTS`` with what it does, and listed in docs/operacion.md
("Fault-injection points"); ``tests/infra/test_fault_points.py`` keeps the declarations, the
document and the call sites in agreement, so a point cannot be added silently.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

SWITCH = "FICHAS_FAULT_POINTS"
ALLOWANCE = "FICHAS_FAULT_POINTS_ALLOWED"  # set by the tests that arm a point, never elsewhere

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


def refusal(environ: Mapping[str, str] = os.environ) -> str | None:
    """Why this process must not start with the switch set (None when it may): the switch
    names points and the test suite's allowance is not there."""
    value = environ.get(SWITCH, "").strip()
    if not value or environ.get(ALLOWANCE) == "1":
        return None
    return (
        f"{SWITCH}={value!r} is not valid: expected unset: a fault point kills the process on "
        f"purpose, for the test suite only (which also sets {ALLOWANCE}=1)"
    )


def fault_point(name: str) -> None:
    """Die like ``kill -9`` here if the switch arms ``name``; otherwise do nothing."""
    if name not in FAULT_POINTS:
        raise KeyError(f"undeclared fault point {name!r} (declare it in infra.fault_points)")
    if name in armed():
        os.kill(os.getpid(), signal.SIGKILL)
