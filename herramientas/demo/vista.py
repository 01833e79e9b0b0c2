"""The live table of the terminal: one row per feed line, coloured by fate."""

from __future__ import annotations

import shutil
import time
from typing import TextIO

from herramientas.demo.avance import DLQ, OBSOLETO, PENDING, PUBLICADA, REVISION, Progress
from herramientas.demo.resumen import seconds

ANSI_COLORS = {PUBLICADA: "32", REVISION: "33", DLQ: "31", OBSOLETO: "2"}


def render_rows(progress: Progress, now_ms: int) -> list[str]:
    """The table: one row per feed line with SKU, version, attempts, fate and elapsed time."""
    rows = [f"{'#':>3}  {'SKU':<12} {'versión':>7} {'intentos':>8}  {'destino':<10} {'tiempo':>9}"]
    for line in progress.lines:
        state = progress.state(line)
        if state == PENDING and line.produced_ms is not None:
            elapsed = f"{(now_ms - line.produced_ms) / 1000:.0f} s"
        elif state == OBSOLETO:
            elapsed = "-"
        else:
            elapsed = seconds(line.latency_ms)
        version = "-" if line.version is None else str(line.version)
        intentos = "-" if line.intentos is None else str(line.intentos)
        rows.append(
            f"{line.number:>3}  {line.sku[:12]:<12} {version:>7} {intentos:>8}  "
            f"{state:<10} {elapsed:>9}"
        )
    return rows


class LiveView:
    """The table redrawn in place on a terminal; one line per finished event otherwise."""

    def __init__(self, out: TextIO, run_id: str, tty: bool | None = None) -> None:
        self._out = out
        self._run_id = run_id
        self._tty = out.isatty() if tty is None else tty
        self._drawn = 0
        self._started = time.monotonic()

    def _header(self, progress: Progress) -> str:
        done = len(progress.lines) - progress.pending()
        elapsed = int(time.monotonic() - self._started)
        return (
            f"demo {self._run_id}: {done}/{len(progress.lines)} líneas terminadas, "
            f"{elapsed // 60}:{elapsed % 60:02d} transcurrido"
        )

    def update(self, progress: Progress, now_ms: int) -> None:
        """Redraw (terminal) or print what changed (pipe, log file)."""
        if self._tty:
            self._redraw(progress, now_ms)
            return
        for line in progress.changed():
            state = progress.state(line)
            intentos = f" intentos {line.intentos}" if line.intentos is not None else ""
            version = f" v{line.version}" if line.version is not None else ""
            tiempo = f" en {seconds(line.latency_ms)}" if line.latency_ms is not None else ""
            self._out.write(
                f"línea {line.number:>2} {line.sku}{version}: {state}{intentos}{tiempo}\n"
            )
        self._out.flush()

    def _redraw(self, progress: Progress, now_ms: int) -> None:
        width = shutil.get_terminal_size((100, 40)).columns
        rows = [self._header(progress), *render_rows(progress, now_ms)]
        text = []
        if self._drawn:
            text.append(f"\x1b[{self._drawn}F")  # to the first column of the table's first row
        text.append("\x1b[J")  # clear from there to the end of the screen
        for row in rows:
            text.append(_colour(row[: width - 1]) + "\n")
        self._out.write("".join(text))
        self._out.flush()
        self._drawn = len(rows)


def _colour(row: str) -> str:
    """Colour the fate word of a table row (terminal only)."""
    for label, code in ANSI_COLORS.items():
        marker = f"  {label}"
        if marker in row:
            return row.replace(marker, f"  \x1b[{code}m{label}\x1b[0m", 1)
    return row
