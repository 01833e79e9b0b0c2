"""A prompt file that replaces one of the package's templates (``FICHAS_PROMPT_*_ARCHIVO``).

``leer`` reads a file once per process (cached by path): the text the settings were checked on
is the text the agents are built with and the gate key hashes, even if the file changes while
the process runs (a changed file takes effect at the next start). ``comprobar`` says what is
wrong with a text for a template, as the expectation of the settings' error line: a
``str.format`` template whose placeholders are among the template's and keep the required
ones (``esquemas.constantes.MARCADORES_PLANTILLA``, ``MARCADORES_REQUERIDOS``), formatted here
once with values of the kinds the prompt gets, so nothing that passes fails later. Which
placeholders, and how a prompt change is tried in shadow: docs/operacion.md.
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
)

# A value of the kind each placeholder is formatted with (grafo.mensajes): the criteria's
# lines are text, the lengths integers.
MUESTRAS: dict[str, object] = {
    "criterios": "- C01: ...",
    "max_titulo": MAX_TITULO,
    "max_descripcion": MAX_DESCRIPCION,
}
LLAVES = "write a literal brace as {{ or }}"


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
