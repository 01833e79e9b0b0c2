"""The start every command of ``herramientas.cli``'s table that reads ``FICHAS_*`` here shares.

The exit codes (docs/operacion.md, "Exit codes"), the settings read once with one line per bad
variable and no traceback, the logs configured and the configuration logged, and the notes on
what was skipped in an input file, so ``procesar``, ``producir`` and ``worker`` say them alike.
Every command loads its settings here (``cargar_ajustes``, ``leer_ajustes``), so none starts
with a prompt file whose text cannot replace its template: ``comprobar_prompts`` applies the
graph's rule (``grafo.prompt_archivo``) to the live loop's files and the candidate's
(docs/arquitectura.md, "Rules where they belong"). The review app uses no prompt and loads its
settings itself (``revision`` may not import ``grafo``).
"""

from __future__ import annotations

import logging
import sys

from infra.config import Settings, effective, load_settings, load_settings_or_report

EXIT_USAGE = 2
EXIT_LLM_UNAVAILABLE = 3
EXIT_BROKER_UNREACHABLE = 4

log = logging.getLogger("fichas")


def comprobar_prompts(settings: Settings) -> dict[str, str]:
    """Per ``*prompt_*_archivo`` field whose file cannot replace its template, what was
    expected: the live files under the live evaluator's mode, the candidate's under its own.
    An unset candidate evaluator file inherits the live one, written for the live mode and
    generator: checked again when the candidate changes either (on the candidate's line)."""
    from grafo.prompt_archivo import EVALUADOR, GENERADOR, problemas

    vivos = problemas(
        settings.prompt_generador_archivo, settings.prompt_evaluador_archivo, settings.evaluador
    )
    fallos = {f"prompt_{archivo}_archivo": motivo for archivo, motivo in vivos.items()}
    vivo = None if GENERADOR in vivos else settings.prompt_generador_archivo
    modo = settings.candidata_evaluador or settings.evaluador
    propio = settings.candidata_prompt_generador_archivo
    candidata = problemas(propio, None, modo)
    generador = vivo if propio is None or GENERADOR in candidata else propio
    evaluador, herencia = settings.candidata_prompt_evaluador_archivo, ""
    if (
        evaluador is None
        and EVALUADOR not in vivos
        and (modo, generador) != (settings.evaluador, vivo)
    ):
        evaluador = settings.prompt_evaluador_archivo
        herencia = "; it inherits FICHAS_PROMPT_EVALUADOR_ARCHIVO"
    if evaluador is not None and EVALUADOR in (otros := problemas(generador, evaluador, modo)):
        candidata[EVALUADOR] = otros[EVALUADOR] + herencia
    return fallos | {f"candidata_prompt_{archivo}_archivo": m for archivo, m in candidata.items()}


# What every command checks at start-up beyond ``infra.config``'s own validation.
COMPROBACIONES = (comprobar_prompts,)


def cargar_ajustes() -> Settings:
    """The settings with every start-up check, the prompt files' texts included;
    ``infra.config.ConfigError`` (one line per problem) for a command that reports them its
    own way (``fichas puerta``, ``fichas calibrar``)."""
    return load_settings(COMPROBACIONES)


def leer_ajustes(comando: str) -> Settings | None:
    """``cargar_ajustes``; None after one line per bad variable on standard error
    (``fichas COMANDO: ...``): the caller exits 2."""
    return load_settings_or_report(f"fichas {comando}", COMPROBACIONES)


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
