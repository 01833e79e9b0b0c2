"""The start every command of ``herramientas.cli``'s table that reads ``FICHAS_*`` here shares.

The exit codes (docs/operacion.md, "Exit codes"), the settings read once with one line per bad
variable and no traceback, the logs configured and the configuration logged, and the notes on
what was skipped in an input file, so ``procesar``, ``producir`` and ``worker`` say them alike.
"""

from __future__ import annotations

import logging
import sys

from infra.config import Settings, effective, load_settings_or_report

EXIT_USAGE = 2
EXIT_LLM_UNAVAILABLE = 3
EXIT_BROKER_UNREACHABLE = 4

log = logging.getLogger("fichas")


def leer_ajustes(comando: str) -> Settings | None:
    """The settings; None after one line per bad variable on standard error
    (``fichas COMANDO: ...``): the caller exits 2."""
    return load_settings_or_report(f"fichas {comando}")


def ajustes(comando: str) -> Settings | None:
    """``leer_ajustes``, then the logs configured and the configuration logged."""
    settings = leer_ajustes(comando)
    if settings is None:
        return None
    from grafo.contexto import campos  # the event a line is about, inside the worker's lanes
    from infra import logs

    logs.configure(settings.log_nivel, campos=campos)
    log.info("configuration", extra={"configuracion": effective(settings)})
    return settings


def contar(cuantos: int, nombre: str) -> str:
    """``1 blank line``, ``2 blank lines``."""
    return f"{cuantos} {nombre}" + ("" if cuantos == 1 else "s")


def avisos_entrada(comando: str, bom: bool, blancas: int) -> None:
    """Say what was skipped in the input, so nothing vanishes without a word."""
    if bom:
        print(f"fichas {comando}: UTF-8 BOM at the start of the input stripped", file=sys.stderr)
    if blancas:
        print(f"fichas {comando}: {contar(blancas, 'blank line')} skipped", file=sys.stderr)
