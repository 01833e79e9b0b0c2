"""Texts that replace the package's prompt templates (``Plantillas``): the prompt, the key, the
requests.

The same text as the package's template is the same prompt and the same key (so baking a tried
prompt into a later image keeps the gates it certified); one changed line is another key on its
own side only; the agents send exactly the prompt the key hashes, each agent its own text.
"""

from __future__ import annotations

import hashlib
from importlib import resources
from pathlib import Path
from string import Formatter

import pytest

from esquemas import EventoCambio
from esquemas.constantes import (
    MARCADORES_PLANTILLA,
    MARCADORES_REQUERIDOS,
    MODOS_EVALUADOR,
    PLANTILLA_EVALUADOR,
    PLANTILLA_GENERADOR,
)
from esquemas.estado_puerta import ClavePuerta
from grafo import Plantillas, clave_puerta
from grafo.mensajes import prompt_del_evaluador, prompt_generador
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.procesador import CRITERIOS_VERSION_PRUEBA, abrir_procesador


def _paquete(nombre: str) -> str:
    """The package's template, as the image ships it."""
    return resources.files("grafo.prompts").joinpath(nombre).read_text(encoding="utf-8")


def _otra_linea(texto: str) -> str:
    """``texto`` with one line changed, as a prompt fix would."""
    lineas = texto.splitlines(keepends=True)
    lineas[1] = "Escribe con frases cortas.\n"
    return "".join(lineas)


@pytest.mark.parametrize("nombre", sorted(MARCADORES_PLANTILLA))
def test_la_tabla_de_marcadores_es_la_de_las_plantillas(nombre: str) -> None:
    """The table a file is checked against (infra.prompt_archivo) is what each template uses."""
    campos = {c for _, c, _, _ in Formatter().parse(_paquete(nombre)) if c is not None}
    assert campos == set(MARCADORES_PLANTILLA[nombre])


def test_cada_modo_tiene_su_plantilla_y_las_requeridas_se_ofrecen() -> None:
    assert set(PLANTILLA_EVALUADOR) == set(MODOS_EVALUADOR)
    assert PLANTILLA_GENERADOR in MARCADORES_PLANTILLA
    assert set(PLANTILLA_EVALUADOR.values()) <= set(MARCADORES_PLANTILLA)
    for requerido in MARCADORES_REQUERIDOS:
        assert requerido in MARCADORES_PLANTILLA[PLANTILLA_GENERADOR]
        assert requerido in MARCADORES_PLANTILLA["evaluador.md"]


@pytest.mark.parametrize("modo", MODOS_EVALUADOR)
def test_el_texto_de_la_plantilla_da_la_misma_clave(modo: str) -> None:
    plantillas = Plantillas(
        generador=_paquete(PLANTILLA_GENERADOR), evaluador=_paquete(PLANTILLA_EVALUADOR[modo])
    )
    for ejemplos in (False, True):
        assert prompt_generador(ejemplos, plantillas.generador) == prompt_generador(ejemplos)
        assert clave_puerta("m", modo, "v1", ejemplos=ejemplos, plantillas=plantillas) == (
            clave_puerta("m", modo, "v1", ejemplos=ejemplos)
        )
    assert prompt_del_evaluador(modo, False, plantillas.evaluador) == prompt_del_evaluador(modo)


@pytest.mark.parametrize("modo", MODOS_EVALUADOR)
def test_una_linea_cambiada_es_otra_clave_de_su_lado(modo: str) -> None:
    base = clave_puerta("m", modo, "v1")
    generador = clave_puerta(
        "m", modo, "v1", plantillas=Plantillas(generador=_otra_linea(_paquete("generador.md")))
    )
    evaluador = clave_puerta(
        "m",
        modo,
        "v1",
        plantillas=Plantillas(evaluador=_otra_linea(_paquete(PLANTILLA_EVALUADOR[modo]))),
    )
    assert len({base.texto(), generador.texto(), evaluador.texto()}) == 3
    assert generador.prompt_evaluador_sha256 == base.prompt_evaluador_sha256
    assert generador.prompt_generador_sha256 != base.prompt_generador_sha256
    assert evaluador.prompt_generador_sha256 == base.prompt_generador_sha256
    assert evaluador.prompt_evaluador_sha256 != base.prompt_evaluador_sha256


def test_la_senal_se_anade_tras_el_texto_del_evaluador() -> None:
    texto = _otra_linea(_paquete("evaluador.md"))
    con_senal = prompt_del_evaluador("veredicto", True, texto)
    assert con_senal.startswith(prompt_del_evaluador("veredicto", False, texto))
    assert "Escribe con frases cortas." in con_senal and len(con_senal) > len(texto)


async def test_cada_agente_envia_su_texto_y_la_clave_lo_lleva(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    """Through the fake LLM's record: the generator's system prompt is its text formatted, the
    evaluator's its own, nothing of the generator's text reaches the evaluator, and the outcome
    carries the key of exactly these texts."""
    generador = "Redacta fichas. MARCA-GENERADOR-7 Reglas:\n{criterios}\nMáximo {max_titulo}.\n"
    evaluador = "Corrige fichas. MARCA-EVALUADOR-3 Criterios:\n{criterios}\n"
    plantillas = Plantillas(generador=generador, evaluador=evaluador)
    async with abrir_procesador(fake_llm.url, data_dir, plantillas=plantillas) as (proc, _):
        resultado = await proc.procesar(EventoCambio.model_validate(evento_dict("PLA-1")))
    gen = fake_llm.requests(agent="generador", sku="PLA-1")
    ev = fake_llm.requests(agent="evaluador", sku="PLA-1")
    assert len(gen) == 1 and len(ev) == 1
    sistema_gen = gen[0]["body"]["messages"][0]
    sistema_ev = ev[0]["body"]["messages"][0]
    assert sistema_gen["role"] == sistema_ev["role"] == "system"
    assert sistema_gen["content"] == prompt_generador(False, generador)
    assert sistema_gen["content"].startswith("Redacta fichas. MARCA-GENERADOR-7 Reglas:\n- C01")
    assert sistema_ev["content"] == prompt_del_evaluador("veredicto", False, evaluador)
    todo_ev = "\n".join(str(m["content"]) for m in ev[0]["body"]["messages"])
    assert "MARCA-GENERADOR-7" not in todo_ev and "Redacta fichas" not in todo_ev
    clave = clave_puerta("fake", False, CRITERIOS_VERSION_PRUEBA, plantillas=plantillas)
    assert ClavePuerta.model_validate(resultado.salida["clave"]) == clave
    assert (
        clave.prompt_generador_sha256
        != clave_puerta("fake", False, CRITERIOS_VERSION_PRUEBA).prompt_generador_sha256
    )
    sha = hashlib.sha256(sistema_ev["content"].encode()).hexdigest()
    assert clave.prompt_evaluador_sha256 == sha
