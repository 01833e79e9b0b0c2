"""``fichas``'s one table of subcommands (``herramientas.cli.SUBCOMANDOS``): the help lists what
the table lists, the dispatch runs what the table names, and each subcommand parses its own
arguments. ``fichas --help`` and a wrong subcommand run as a person runs them: the real entry
point in a process."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

from herramientas import cli

REPO = Path(__file__).parents[2]


def _fichas(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "herramientas.cli", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_cada_fila_nombra_un_modulo_con_su_funcion_y_su_parser() -> None:
    for subcomando in cli.SUBCOMANDOS:
        modulo = importlib.import_module(subcomando.modulo)
        assert callable(getattr(modulo, subcomando.funcion)), subcomando
        parser = getattr(modulo, "_parser", None)
        if parser is not None:  # llm-local's parser is built inside its main
            assert parser().prog == " ".join(("fichas", *subcomando.palabras)), subcomando


def test_la_palabra_mas_larga_gana() -> None:
    promover = cli.subcomando_de(["puerta", "promover", "--de", "a"])
    retener = cli.subcomando_de(["puerta", "retener", "zapatillas"])
    assert promover is not None and promover.modulo == "herramientas.promocion"
    assert retener is not None and retener.modulo == "herramientas.retencion"
    assert cli.subcomando_de(["nada"]) is None and cli.subcomando_de([]) is None


def test_la_ayuda_lista_la_tabla_una_vez() -> None:
    proc = _fichas("--help")
    assert proc.returncode == 0, proc.stderr
    for subcomando in cli.SUBCOMANDOS:
        if subcomando.ayuda is not None:
            nombre = subcomando.palabras[0]
            lineas = [ln for ln in proc.stdout.splitlines() if ln.split()[:1] == [nombre]]
            assert len(lineas) == 1, (nombre, proc.stdout)


def test_un_subcomando_desconocido_una_linea_y_exit_2() -> None:
    proc = _fichas("publicar")
    assert proc.returncode == 2
    assert "invalid choice: 'publicar'" in proc.stderr and "Traceback" not in proc.stderr


def test_cada_subcomando_lee_sus_argumentos() -> None:
    """``fichas worker --x``: the worker's own parser refuses it, naming the command."""
    proc = _fichas("worker", "--x")
    assert proc.returncode == 2
    assert "fichas worker: error: unrecognized arguments: --x" in proc.stderr
