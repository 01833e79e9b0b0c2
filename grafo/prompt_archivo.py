"""A prompt file that replaces one of the package's templates (``FICHAS_PROMPT_*_ARCHIVO``).

``leer`` reads a file once per process (cached by path): the text checked at start-up is the
text the agents are built with and the gate key hashes (``stream.gobierno.clave``), even if the
file changes while the process runs (a changed file takes effect at the next start).
``comprobar`` says what is wrong with a text for a template, as the expectation of the
settings' error line: a ``str.format`` template whose placeholders are among the template's
and keep the required ones (``esquemas.constantes.MARCADORES_PLANTILLA``,
``MARCADORES_REQUERIDOS``), formatted here once with values of the kinds the prompt gets, so
nothing that passes fails later; ``problemas`` applies it to one loop's two files, the
evaluator's never holding the generator's. Every command runs it at start-up
(``herramientas.arranque``); which placeholders, and how a prompt change is tried in shadow:
docs/operacion.md. Imports ``esquemas`` alone: cheap for every command.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from string import Formatter

from esquemas.constantes import (
    MARCADORES_PLANTILLA,
    MARCADORES_REQUERIDOS,
    MAX_DESCRIPCION,
    MAX_TITULO,
    PLANTILLA_EVALUADOR,
    PLANTILLA_GENERADOR,
)

# A value of the kind each placeholder is formatted with (grafo.mensajes): the criteria's
# lines are text, the lengths integers.
MUESTRAS: dict[str, object] = {
    "criterios": "- C01: ...",
    "max_titulo": MAX_TITULO,
    "max_descripcion": MAX_DESCRIPCION,
}
LLAVES = "write a literal brace as {{ or }}"
# The keys of ``problemas``: which of a loop's two files.
GENERADOR = "generador"
EVALUADOR = "evaluador"


@cache
def leer(ruta: Path) -> str:
    """The file's text; ``ValueError`` (what was expected) if it cannot be read, is not UTF-8
    or has nothing but blanks in it."""
    try:
        datos = ruta.read_bytes()
    except OSError as exc:
        raise ValueError(f"a readable file ({exc.strerror or exc})") from None
    try:
        texto = datos.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"a UTF-8 text file (byte {datos[exc.start]:#04x} at offset {exc.start} is not UTF-8)"
        ) from None
    if not texto.strip():
        raise ValueError("a file with a prompt in it (it is empty)")
    return texto


def _lista(nombres: tuple[str, ...] | list[str]) -> str:
    """``{a}, {b}`` for the error lines, or ``none``."""
    return ", ".join("{" + n + "}" for n in nombres) or "none"


def comprobar(texto: str, plantilla: str) -> None:
    """``ValueError`` (what was expected) if ``texto`` cannot replace ``plantilla``."""
    ofrecidos = MARCADORES_PLANTILLA[plantilla]
    try:
        campos = [campo for _, campo, _, _ in Formatter().parse(texto) if campo is not None]
    except ValueError as exc:
        raise ValueError(f"a template like {plantilla} ({exc}; {LLAVES})") from None
    ajenos = sorted({c for c in campos if c not in ofrecidos})
    if ajenos:
        raise ValueError(
            f"only the placeholders of {plantilla}: {_lista(ofrecidos)} "
            f"(it has {_lista(ajenos)}; {LLAVES})"
        )
    faltan = [m for m in MARCADORES_REQUERIDOS if m in ofrecidos and m not in campos]
    if faltan:
        raise ValueError(f"the placeholder {_lista(faltan)} of {plantilla} (it is missing)")
    try:
        texto.format(**{m: MUESTRAS[m] for m in ofrecidos})
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:
        raise ValueError(f"a template like {plantilla} ({exc!r}; {LLAVES})") from None


def leer_y_comprobar(ruta: Path, plantilla: str) -> str:
    """The file's text if it can replace ``plantilla``; ``ValueError`` otherwise."""
    texto = leer(ruta)
    comprobar(texto, plantilla)
    return texto


def comprobar_evaluador(archivo: Path, modo: str, generador: Path | None) -> None:
    """``ValueError`` unless ``archivo`` can replace the evaluator template of ``modo`` and
    holds nothing of ``generador`` (the generator's file of the same loop): the evaluator never
    sees the generator's prompt (tests/grafo/test_ceguera.py)."""
    texto = leer_y_comprobar(archivo, PLANTILLA_EVALUADOR[modo])
    if generador is not None and leer(generador).strip() in texto:
        raise ValueError(
            "a file without the generator's prompt in it (it holds the generator's file: "
            "the evaluator never sees the generator's prompt)"
        )


def problemas(generador: Path | None, evaluador: Path | None, modo: str) -> dict[str, str]:
    """What each file of one loop (``GENERADOR``, ``EVALUADOR`` under the evaluator's mode
    ``modo``; None: the package's template) was expected to be, for those that cannot replace
    their template. A generator's file that fails its own check is not read again for the
    evaluator's: its own line says what is wrong with it."""
    fallos: dict[str, str] = {}
    if generador is not None:
        try:
            leer_y_comprobar(generador, PLANTILLA_GENERADOR)
        except ValueError as exc:
            fallos[GENERADOR] = str(exc)
            generador = None
    if evaluador is not None:
        try:
            comprobar_evaluador(evaluador, modo, generador)
        except ValueError as exc:
            fallos[EVALUADOR] = str(exc)
    return fallos
