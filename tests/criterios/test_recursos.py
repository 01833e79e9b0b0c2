"""``criterios.recursos.precargar``: the checks' language resources load once, at start-up.

Run in a fresh interpreter, since the resources are process-wide caches this test process may
already hold.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

PROGRAMA = textwrap.dedent(
    """
    import json
    from types import SimpleNamespace
    from simplemma.lemmatizer import _legacy_dictionary_factory as factory
    from criterios import fidelidad
    from grafo import construir_grafo
    from langgraph.checkpoint.memory import InMemorySaver

    antes = fidelidad._identificador.cache_info().currsize
    nodo = lambda state: {}
    nodos = SimpleNamespace(
        generar=nodo, evaluar=nodo, publicar=nodo, enviar_a_revision=nodo, modo_puerta="veredicto"
    )
    construir_grafo(nodos, 3, InMemorySaver())
    print(json.dumps({
        "identificador_antes": antes,
        "identificador": fidelidad._identificador.cache_info().currsize,
        "diccionarios": factory._load_dictionary_from_disk.cache_info().currsize,
    }))
    """
)


def test_construir_el_grafo_carga_el_identificador_y_solo_el_diccionario_espanol() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", PROGRAMA], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    cargado = json.loads(proc.stdout.strip().splitlines()[-1])
    assert cargado["identificador_antes"] == 0
    assert cargado["identificador"] == 1
    # Spanish only: the English, French and Portuguese dictionaries wait for a foreign text
    assert cargado["diccionarios"] == 1
