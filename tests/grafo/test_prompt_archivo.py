"""The prompt files' rule (``grafo.prompt_archivo``): what each of a loop's files is checked
against, read once per process, cheap to import for every command.

The lines each command prints for a bad file, the candidate's files included, are
tests/herramientas/test_arranque.py's; here the rule itself.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from grafo import prompt_archivo
from grafo.prompt_archivo import EVALUADOR, GENERADOR, problemas

REPO = Path(__file__).parents[2]


def _archivo(tmp_path: Path, nombre: str, texto: str) -> Path:
    ruta = tmp_path / nombre
    ruta.write_text(texto, encoding="utf-8")
    return ruta


def test_cada_archivo_con_la_plantilla_de_su_papel(tmp_path: Path) -> None:
    """The generator's file against ``generador.md``, the evaluator's against the template of
    the mode: the same text fits one mode and not another."""
    generador = _archivo(tmp_path, "g.md", "Reglas:\n{criterios}\n")
    evaluador = _archivo(tmp_path, "e.md", "Juzga con:\n{criterios}\n")
    assert problemas(generador, evaluador, "veredicto") == {}
    fallos = problemas(generador, evaluador, "rubrica")
    assert list(fallos) == [EVALUADOR]
    assert fallos[EVALUADOR].startswith("only the placeholders of evaluador_rubrica.md: none")
    assert problemas(None, None, "citas") == {}


def test_el_evaluador_no_lleva_el_del_generador_si_este_vale(tmp_path: Path) -> None:
    texto = "Redacta la ficha con estas reglas:\n{criterios}\n"
    generador = _archivo(tmp_path, "g.md", texto)
    evaluador = _archivo(tmp_path, "e.md", "Corrige esto.\n" + texto)
    assert "the evaluator never sees" in problemas(generador, evaluador, "veredicto")[EVALUADOR]
    # A generator's file that fails its own check has its own line, not the evaluator's.
    malo = _archivo(tmp_path, "malo.md", "Sin reglas.\n")
    evaluador = _archivo(tmp_path, "e2.md", "Juzga:\n{criterios}\nSin reglas.\n")
    assert list(problemas(malo, evaluador, "veredicto")) == [GENERADOR]


def test_se_lee_una_vez_por_proceso(tmp_path: Path) -> None:
    """The text checked at start-up is the text the agents and the key use, even if the file
    changes while the process runs."""
    ruta = _archivo(tmp_path, "g.md", "Reglas:\n{criterios}\n")
    assert prompt_archivo.leer_y_comprobar(ruta, "generador.md") == "Reglas:\n{criterios}\n"
    ruta.write_text("Otras reglas {precio}\n", encoding="utf-8")
    assert prompt_archivo.leer(ruta) == "Reglas:\n{criterios}\n"
    with pytest.raises(ValueError, match=r"only the placeholders of generador\.md"):
        prompt_archivo.comprobar(ruta.read_text(encoding="utf-8"), "generador.md")


def test_importarlo_no_trae_langchain() -> None:
    """Every command runs the check at start-up: it must not load the agents' libraries."""
    codigo = (
        "import sys, grafo.prompt_archivo; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('langchain_core', 'langchain_openai', 'langgraph', 'openai', 'stream', 'infra')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", codigo], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
