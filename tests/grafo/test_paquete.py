"""grafo/__init__: every public name resolves, and its light submodules load without LangChain."""

from __future__ import annotations

import subprocess
import sys

import grafo


def test_cada_nombre_publico_se_resuelve() -> None:
    for nombre in grafo.__all__:
        valor = getattr(grafo, nombre)
        assert valor.__module__.startswith("grafo."), nombre


def test_retry_e_intentos_no_cargan_langchain() -> None:
    """What fichas calibrar, informe and producir import: no LangChain, LangGraph or openai."""
    codigo = (
        "import sys\n"
        "from grafo import Backoff, LLMUnavailable\n"
        "from grafo.intentos import contar_rechazos\n"
        "pesados = [m for m in ('langchain_core', 'langgraph', 'openai') if m in sys.modules]\n"
        "print(','.join(pesados))\n"
    )
    salida = subprocess.run(
        [sys.executable, "-c", codigo], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert salida == ""
