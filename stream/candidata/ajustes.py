"""The candidate loop's settings, from the live ones: its overrides applied, its budget.

The candidate runs the live settings with every ``FICHAS_CANDIDATA_<NAME>`` override set in
place of ``FICHAS_<NAME>`` (``infra.config.CANDIDATE_OVERRIDES``), and has no candidate of its
own; its runs in flight per worker are ``FICHAS_CANDIDATA_CONCURRENCIA`` or a tenth of the live
concurrency. ``infra.config`` reads and checks the variables; what they mean for the candidate
loop is here. docs/stream.md, "The candidate loop".
"""

from __future__ import annotations

from esquemas.constantes import MODO_RUBRICA
from infra.config import CANDIDATE_OVERRIDES, PREFIJO_CANDIDATA, Settings


def candidata(settings: Settings) -> Settings | None:
    """The candidate loop's settings: the live ones with every ``FICHAS_CANDIDATA_*``
    override applied, or None when there is no candidate (share 0)."""
    if settings.candidata_proporcion <= 0:
        return None
    cambios: dict[str, object] = {
        name.removeprefix(PREFIJO_CANDIDATA): getattr(settings, name)
        for name in CANDIDATE_OVERRIDES
        if getattr(settings, name) is not None
    }
    modo = cambios.get("evaluador", settings.evaluador)
    cambios["evaluador_rubrica"] = modo == MODO_RUBRICA
    cambios["candidata_proporcion"] = 0.0  # the candidate has no candidate of its own
    return settings.model_copy(update=cambios)


def candidata_concurrencia(settings: Settings) -> int:
    """The candidate's budget of runs in flight per worker (``FICHAS_CANDIDATA_CONCURRENCIA``,
    unset: a tenth of ``FICHAS_CONCURRENCIA``, at least 1)."""
    if settings.candidata_concurrencia is not None:
        return settings.candidata_concurrencia
    return max(1, settings.concurrencia // 10)
