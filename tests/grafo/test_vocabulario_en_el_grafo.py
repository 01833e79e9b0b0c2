"""The house vocabulary in the loop: the generator reads the mapped origin (with
``FICHAS_LIMPIAR_ORIGEN``), the evaluator always does, unknown keys are kept and logged."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from esquemas import EventoCambio, FichaPublicada
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.procesador import abrir_procesador

PORTUGUES = {
    "titulo": "Tênis de corrida preto",
    "descripcion": "Tênis leve para corrida, cabedal em malha.",
    "atributos": {
        "cor": "preto",
        "tamanho": "42",
        "material": "malha",
        "gênero": "masculino",
        "tecnologia": "amortecimento",
    },
    "idioma": "pt",
}


def _origen_de(peticion: dict[str, Any]) -> dict[str, Any]:
    """The origin JSON block of a recorded request's last user message."""
    texto = str(peticion["body"]["messages"][-1]["content"])
    inicio = texto.index("{")
    datos, _ = json.JSONDecoder().raw_decode(texto[inicio:])
    origen: dict[str, Any] = datos.get("origen", datos)
    return origen


async def test_el_generador_y_el_evaluador_leen_el_origen_mapeado(
    fake_llm: FakeLLM, data_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    fake_llm.configure({"rules": [{"sku": "ZAP-PT", "evaluador": ["aprobar"]}]})
    evento = EventoCambio.model_validate(evento_dict("ZAP-PT", ficha_proveedor=PORTUGUES))
    with caplog.at_level(logging.WARNING, logger="grafo.nodos"):
        async with abrir_procesador(fake_llm.url, data_dir, limpiar_origen=True) as (proc, _):
            resultado = await proc.procesar(evento)
    atributos_casa = {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"}
    for agente in ("generador", "evaluador"):
        (peticion,) = fake_llm.requests(agent=agente, sku="ZAP-PT")
        atributos = _origen_de(peticion)["ficha_proveedor"]["atributos"]
        # house keys and values; the unknown key kept as written, never dropped
        assert atributos == {**atributos_casa, "tecnologia": "amortecimento"}, agente
    # the fake generator copies the required attributes it reads: with house keys, C03 holds
    publicada = FichaPublicada.model_validate(resultado.salida)
    assert publicada.intentos == 1
    assert publicada.ficha.atributos == atributos_casa
    assert "sku=ZAP-PT tecnologia" in caplog.text


async def test_sin_limpieza_el_generador_lee_el_origen_del_proveedor(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    fake_llm.configure({"rules": [{"sku": "ZAP-PT2", "evaluador": ["aprobar"]}]})
    evento = EventoCambio.model_validate(evento_dict("ZAP-PT2", ficha_proveedor=PORTUGUES))
    async with abrir_procesador(fake_llm.url, data_dir, max_intentos=1) as (proc, _):
        resultado = await proc.procesar(evento)
    (peticion,) = fake_llm.requests(agent="generador", sku="ZAP-PT2")
    assert "cor" in _origen_de(peticion)["ficha_proveedor"]["atributos"]
    (peticion,) = fake_llm.requests(agent="evaluador", sku="ZAP-PT2")
    assert "color" in _origen_de(peticion)["ficha_proveedor"]["atributos"]
    # the supplier's keys reach the ficha, and C03 sends it to review
    assert resultado.salida["motivo"] == "rechazada"
    assert {p["criterio"] for p in resultado.salida["problemas"]} >= {"C03"}
