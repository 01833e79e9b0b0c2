"""Write casos.jsonl from the hand-written sources: ``python ejemplos/evaluacion/construir.py``.

The JSONL is what ``fichas evaluar`` reads and what is reviewed in diffs; the sources are
where cases are written. ``tests/herramientas/test_evaluacion_datos.py`` checks that the two
agree, so the JSONL cannot drift from its sources.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

AQUI = Path(__file__).resolve().parent
SALIDA = AQUI / "casos.jsonl"


def casos(ampliacion: bool = True) -> list[dict[str, Any]]:
    """Every case, in family order, from the three source modules, with the issue-48
    candidates (``fuente_ampliacion``) after each case's own, numbered on from them.

    ``ampliacion=False``: the 188 candidates of before issue 48, the set the command's tests
    count on (tests/herramientas/evaluar/test_principal.py). The sources are copied, never
    changed, so both sets can be built in one process."""
    sys.path.insert(0, str(AQUI))
    try:
        import fuente_ampliacion
        import fuente_botellas_auriculares
        import fuente_sartenes
        import fuente_zapatillas_camisetas
    finally:
        sys.path.remove(str(AQUI))
    todos = copy.deepcopy(
        [
            *fuente_zapatillas_camisetas.CASOS,
            *fuente_botellas_auriculares.CASOS,
            *fuente_sartenes.CASOS,
        ]
    )
    extras = fuente_ampliacion.EXTRA if ampliacion else {}
    for caso in todos:
        propias = caso["candidatas"]
        for n, build in enumerate(extras.get(caso["id"], []), len(propias) + 1):
            propias.append({"id": f"{caso['id']}/{n}", **build(caso["referencia"])})
    return todos


def texto(ampliacion: bool = True) -> str:
    """The JSONL text: one case per line, keys in writing order."""
    return "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in casos(ampliacion))


if __name__ == "__main__":
    SALIDA.write_text(texto(), encoding="utf-8")
    print(f"{SALIDA}: {len(casos())} casos")
