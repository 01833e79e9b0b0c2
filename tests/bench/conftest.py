"""Running a benchmark of ``bench/`` the way people run it: ``python -m bench.<name>``.

The tests of ``bench/`` keep each tool working at its smallest size and check what it checks
and reports; its figures are never asserted (they are measured idle, docs/rendimiento.md).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def ejecutar(modulo: str, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m <modulo> <args>`` from the repository's root, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", modulo, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def salida(proc: subprocess.CompletedProcess[str]) -> str:
    """The run's stdout once it exited 0; its output's end in the message otherwise."""
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    return proc.stdout
