"""The model-free evaluator (FICHAS_EVALUADOR=lector, issue 48): code quotes and judges every
claim with the reader of translations; the model server is never asked, and the key is its own."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from criterios import clausulas, comprobar, lector, mapear_origen
from grafo import Agentes, LLMSettings, build_chat_model, clave_puerta, close_chat_model
from grafo.citas import TECHO, leer, puntuacion_lectura
from grafo.mensajes import prompt_del_evaluador
from harness.fake_llm.client import FakeLLM
from herramientas.evaluar.casos import origen_de_caso

CASOS = Path(__file__).parents[2] / "ejemplos" / "evaluacion" / "casos.jsonl"


def _caso(ident: str) -> dict[str, Any]:
    for linea in CASOS.read_text(encoding="utf-8").splitlines():
        caso = json.loads(linea)
        if caso["id"] == ident:
            return caso
    raise KeyError(ident)


BOT01 = _caso("EV-BOT-01")  # an English origin; its reference is a translation
ORIGEN = mapear_origen(origen_de_caso(BOT01)).origen
TRADUCCION = BOT01["referencia"]
INVENTA = dict(TRADUCCION, descripcion=TRADUCCION["descripcion"] + " Cabe en los portavasos.")


async def _evaluar(
    fake_llm: FakeLLM, ficha: dict[str, Any], origen: dict[str, Any] = ORIGEN
) -> Any:
    model = build_chat_model(LLMSettings(url=fake_llm.url, model="fake", timeout_s=10))
    try:
        return await Agentes(model, rubrica="lector").evaluar(
            ficha, comprobar(ficha, origen), origen
        )
    finally:
        await close_chat_model(model)


async def test_una_traduccion_se_aprueba_sin_preguntar_al_modelo(fake_llm: FakeLLM) -> None:
    fake_llm.configure({"default": {"evaluador": ["rechazar:C04"]}})
    evaluacion = await _evaluar(fake_llm, TRADUCCION)
    assert evaluacion.veredicto.aprobada and evaluacion.veredicto.problemas == []
    assert evaluacion.puntuacion == 1.0
    assert fake_llm.requests(agent="evaluador") == []
    assert all(c["respaldada"] and c["cita"] for c in evaluacion.citas)


async def test_un_invento_se_rechaza_citando_la_afirmacion(fake_llm: FakeLLM) -> None:
    evaluacion = await _evaluar(fake_llm, INVENTA)
    assert not evaluacion.veredicto.aprobada
    (problema,) = evaluacion.veredicto.problemas
    assert problema.criterio == "C04" and "portavasos" in problema.detalle
    assert evaluacion.puntuacion is not None and evaluacion.puntuacion < TECHO
    assert fake_llm.requests(agent="evaluador") == []


async def test_una_clausula_anadida_dentro_de_una_frase_se_rechaza_nombrandola(
    fake_llm: FakeLLM,
) -> None:
    # EV-ZAP-05/4 of the labelled set: the origin says «Zapatilla urbana de piel con suela de
    # goma»; the claim reads above the reader's threshold, its last clause is invented
    caso = _caso("EV-ZAP-05")
    origen = mapear_origen(origen_de_caso(caso)).origen
    ficha = next(c for c in caso["candidatas"] if c["id"] == "EV-ZAP-05/4")["ficha"]
    evaluacion = await _evaluar(fake_llm, ficha, origen)
    assert not evaluacion.veredicto.aprobada
    (problema,) = evaluacion.veredicto.problemas
    assert problema.criterio == "C04" and problema.detalle.startswith("«y forro transpirable»")
    assert evaluacion.puntuacion is not None and evaluacion.puntuacion < TECHO
    (registro,) = [c for c in evaluacion.citas if "anadido" in c]
    assert registro["parecido"] >= lector.UMBRAL and not registro["respaldada"]
    assert registro["anadido"]["parecido"] < registro["anadido"]["umbral"]
    assert fake_llm.requests(agent="evaluador") == []


def test_la_puntuacion_baja_con_el_parecido_del_lector() -> None:
    juicios = leer(["Botella con aislamiento al vacío.", "Cabe en los portavasos."], ORIGEN)
    assert [j.respaldada for j in juicios] == [True, False]
    (sin_respaldo,) = [j for j in juicios if not j.respaldada]
    assert sin_respaldo.parecido is not None
    esperada = TECHO * lector.grado(sin_respaldo.parecido)
    assert puntuacion_lectura(juicios) == pytest.approx(esperada)
    assert puntuacion_lectura([]) is None


def test_la_clave_lleva_el_modo_y_el_lector() -> None:
    clave = clave_puerta("qwen", "lector", "v1")
    assert clave.modo_evaluador == "lector"
    prompt = prompt_del_evaluador("lector")
    assert lector.MODELO in prompt and str(lector.UMBRAL) in prompt
    assert clausulas.IDENTIDAD in prompt  # other clause thresholds: another judge, another key
    assert clave.prompt_evaluador_sha256 == hashlib.sha256(prompt.encode()).hexdigest()
    otras = {clave_puerta("qwen", m, "v1").texto() for m in ("veredicto", "rubrica", "citas")}
    assert clave.texto() not in otras
