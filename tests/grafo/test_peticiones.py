"""What each agent is shown, read from the requests the fake LLM server recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from esquemas import EventoCambio
from grafo.mensajes import prompt_generador
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.procesador import abrir_procesador

FICHA_1 = {
    "titulo": "Zapatilla Runner X2 primera",
    "descripcion": "Zapatilla ligera para correr con parte superior de malla.",
    "atributos": {"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"},
}
FICHA_2 = dict(FICHA_1, titulo="Zapatilla Runner X2 segunda")
FICHA_3 = dict(FICHA_1, titulo="Zapatilla Runner X2 tercera")
PROBLEMA = "La descripción no dice para qué sirve la suela de goma."


def _texto(request: dict[str, Any]) -> str:
    """Every message of a recorded request, as one string."""
    return "\n".join(str(m.get("content")) for m in request["body"]["messages"])


def _user(request: dict[str, Any]) -> str:
    return "\n".join(
        str(m.get("content")) for m in request["body"]["messages"] if m.get("role") == "user"
    )


async def _run_three_attempts(llm: FakeLLM, data_dir: Path, sku: str) -> None:
    llm.configure(
        {
            "rules": [
                {
                    "sku": sku,
                    "generador": [f"texto:{json.dumps(f)}" for f in (FICHA_1, FICHA_2, FICHA_3)],
                    "evaluador": [
                        "texto:"
                        + json.dumps(
                            {
                                "aprobada": False,
                                "problemas": [{"criterio": "C06", "detalle": PROBLEMA}],
                            }
                        ),
                        "rechazar:C04",
                        "aprobar",
                    ],
                }
            ]
        }
    )
    async with abrir_procesador(llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(EventoCambio.model_validate(evento_dict(sku)))
    assert resultado.salida["intentos"] == 3


async def test_todas_las_peticiones_llevan_json_schema_y_ninguna_herramienta(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    await _run_three_attempts(fake_llm, data_dir, "PET-1")
    requests = fake_llm.requests()
    assert len(requests) == 6
    for request in requests:
        body = request["body"]
        assert body["response_format"]["type"] == "json_schema"
        assert "schema" in body["response_format"]["json_schema"]
        assert not body.get("tools")
        assert not body.get("tool_choice")
    names = {r["agent"]: r["body"]["response_format"]["json_schema"]["name"] for r in requests}
    assert names == {"generador": "Ficha", "evaluador": "Veredicto"}


async def test_evaluador_no_ve_prompt_generador_ni_intento_ni_fichas_anteriores(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    await _run_three_attempts(fake_llm, data_dir, "PET-2")
    evaluador = fake_llm.requests(agent="evaluador")
    assert len(evaluador) == 3
    generator_prompt = prompt_generador()
    for n, request in enumerate(evaluador, start=1):
        texto = _texto(request)
        assert generator_prompt not in texto
        assert generator_prompt.splitlines()[0] not in texto
        assert "intento" not in texto.lower()
        assert "attempt" not in texto.lower()
        earlier = [FICHA_1, FICHA_2, FICHA_3][: n - 1]
        for ficha in earlier:
            assert ficha["titulo"] not in texto
        assert [FICHA_1, FICHA_2, FICHA_3][n - 1]["titulo"] in texto
    # Apart from the ficha itself, the three evaluator requests are identical: nothing in them
    # can tell the evaluator which attempt it is judging.
    normalised = [
        _texto(r).replace(f["titulo"], "<TITULO>")
        for r, f in zip(evaluador, (FICHA_1, FICHA_2, FICHA_3), strict=True)
    ]
    assert normalised[0] == normalised[1] == normalised[2]


async def test_generador_recibe_problemas_y_no_su_ficha_anterior(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    await _run_three_attempts(fake_llm, data_dir, "PET-3")
    generador = fake_llm.requests(agent="generador")
    assert len(generador) == 3
    primera, segunda, tercera = (_user(r) for r in generador)
    assert PROBLEMA not in primera
    assert PROBLEMA in segunda
    assert FICHA_1["titulo"] not in segunda
    assert FICHA_1["descripcion"] not in segunda
    # The third attempt carries every problem so far, and neither earlier ficha.
    assert PROBLEMA in tercera
    assert "C04" in tercera
    assert FICHA_2["titulo"] not in tercera and FICHA_1["titulo"] not in tercera
    assert "RUNNER X2 black mesh sneaker men 42" in segunda  # the origin is there every time
