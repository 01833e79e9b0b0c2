"""The loop's first attempt replayed with the model-free evaluator (``FICHAS_EVALUADOR=lector``).

A loop run records each event's last ficha. Where the quoting evaluator published at the first
attempt, that ficha is the generator's first one, which no evaluator influenced: judged again
with ``lector`` it says what the new default would have done with the same generator answer.
Where the code vetoed it, no evaluator changes that. The evaluator's tokens are taken out of
the run's: each of its calls cost what ``fichas evaluar --evaluador citas`` measured on the
labelled set (``TOKENS_POR_CITA``), an estimate, said so in docs/calidad.md.

    python docs/calidad/medir_lector_bucle.py docs/calidad/conjunto-bucle05-citas.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from criterios import comprobar, fallos, mapear_origen  # noqa: E402
from criterios.respaldo import (  # noqa: E402
    afirmaciones,
    atributos_sin_respaldo,
    descripcion_sin_nada_propio,
)
from estadistica import wilson  # noqa: E402
from grafo.citas import leer, puntuacion_lectura  # noqa: E402
from herramientas.evaluar.casos import CASOS_POR_DEFECTO, cargar_casos, origen_de_caso  # noqa: E402

TOKENS_POR_CITA = 647.5  # docs/calidad/conjunto-ev05-citas.json: tokens per evaluator call


def main(path: Path) -> int:
    """Print the replay's counts as JSON."""
    casos = {c["id"]: c for c in cargar_casos(CASOS_POR_DEFECTO)}
    datos = json.loads(path.read_text(encoding="utf-8"))
    publicadas, distintas, vetadas, rechazadas = [], [], 0, []
    llamadas_evaluador = 0
    for registro in datos["registros"]:
        llamadas_evaluador += len(registro["intentos"])
        ficha = registro.get("ficha")
        caso = casos[registro["id"]]
        origen = origen_de_caso(caso)
        if not ficha or fallos(comprobar(ficha, origen)):
            vetadas += 1
            continue
        mapeado = mapear_origen(origen).origen
        juicios = leer(afirmaciones(ficha), mapeado)
        s = puntuacion_lectura(
            juicios, atributos_sin_respaldo(ficha, mapeado), descripcion_sin_nada_propio(ficha)
        )
        if s == 1.0:
            publicadas.append(registro["id"])
            if registro.get("distinta_referencia"):
                distintas.append(registro["id"])
        else:
            rechazadas.append(registro["id"])
    n = len(datos["registros"])
    llm = datos["metricas"]["llm"]["total"]
    tokens = llm["tokens_entrada"] + llm["tokens_salida"]
    sin_evaluador = tokens - llamadas_evaluador * TOKENS_POR_CITA
    salida = {
        "eventos": n,
        "publicadas_intento_1": len(publicadas),
        "publicadas_ic95": [round(x, 2) for x in wilson(len(publicadas), n)],
        "pasan_el_codigo_y_van_a_revision": rechazadas,
        "vetadas_por_el_codigo": vetadas,
        "publicadas_distintas_de_referencia": distintas,
        "tokens_por_ficha_citas": round(tokens / n),
        "tokens_por_ficha_lector_estimados": round(sin_evaluador / n),
    }
    print(json.dumps(salida, ensure_ascii=False, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1])))
