"""The gate as the graph sees it: the running key, the snapshot, and what the nodes stamp."""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import pytest
from langchain_core.messages import HumanMessage

from esquemas import EventoCambio, FichaEnRevision, FichaPublicada
from esquemas.estado_puerta import ClavePuerta, PuertaAplicada
from esquemas.sombra import en_muestra_sombra
from grafo import (
    Agentes,
    LLMSettings,
    Nodos,
    PuertaCerrada,
    build_chat_model,
    clave_puerta,
    close_chat_model,
    modelo_servido,
    muestreo_de,
)
from grafo.chat_model import evaluator_chat_model
from grafo.fuente_puerta import configuracion_generador, texto_ajustes
from grafo.mensajes import prompt_evaluador, prompt_evaluador_rubrica, prompt_generador
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.procesador import abrir_procesador
from stream.flow.muestreo import sampled

FICHA = {"titulo": "Zapatilla Runner X2", "descripcion": "Zapatilla ligera.", "atributos": {}}


def test_clave_es_el_sha256_del_prompt_del_evaluador_en_uso() -> None:
    clave = clave_puerta("qwen", rubrica=False, criterios_version="v1")
    rubrica = clave_puerta("qwen", rubrica=True, criterios_version="v1")
    assert clave.prompt_evaluador_sha256 == hashlib.sha256(prompt_evaluador().encode()).hexdigest()
    assert rubrica.prompt_evaluador_sha256 == (
        hashlib.sha256(prompt_evaluador_rubrica().encode()).hexdigest()
    )
    assert (clave.modo_evaluador, rubrica.modo_evaluador) == ("veredicto", "rubrica")
    generador = configuracion_generador(ejemplos=False, limpiar_origen=False, max_intentos=3)
    assert clave == ClavePuerta(
        modelo="qwen",
        prompt_evaluador_sha256=clave.prompt_evaluador_sha256,
        criterios_version="v1",
        modo_evaluador="veredicto",
        prompt_generador_sha256=hashlib.sha256(generador.encode()).hexdigest(),
    )
    assert generador.startswith(prompt_generador(False))
    otras = {
        clave_puerta("otro", False, "v1").texto(),
        clave_puerta("qwen", False, "v2").texto(),
        rubrica.texto(),
    }
    assert clave.texto() not in otras and len(otras) == 3


def test_el_generador_es_parte_de_la_clave() -> None:
    """Contract v1.3: a threshold certifies the fichas the generator writes, so its prompt, the
    cleaned origin and the attempt cap are in the key; a v1.2 record (no generator field) is
    another key and keeps the id it was written under."""
    base = clave_puerta("qwen", False, "v1")
    variantes = [
        clave_puerta("qwen", False, "v1", ejemplos=True),
        clave_puerta("qwen", False, "v1", limpiar_origen=True),
        clave_puerta("qwen", False, "v1", max_intentos=2),
    ]
    assert {v.prompt_evaluador_sha256 for v in variantes} == {base.prompt_evaluador_sha256}
    assert len({base.texto(), *(v.texto() for v in variantes)}) == 4
    v12 = base.model_copy(update={"prompt_generador_sha256": None})
    campos_v12 = v12.model_dump(mode="json", exclude_none=True)
    assert "prompt_generador_sha256" not in campos_v12
    canonico = json.dumps(campos_v12, sort_keys=True, separators=(",", ":"))
    assert v12.texto() == hashlib.sha256(canonico.encode()).hexdigest()[:16]
    assert v12 != base and v12.texto() != base.texto()


def _aplicada(familia: str = "zapatillas", umbral: float = 0.8) -> PuertaAplicada:
    return PuertaAplicada(
        umbral=umbral,
        objetivo=0.9,
        clave=clave_puerta("fake", False, "test"),
        familia=familia,
        certificada_en=datetime(2026, 1, 2, tzinfo=UTC),
        n=40,
        k=1,
    )


class _Fuente:
    """A fixed gate per family, counting the questions."""

    def __init__(self, puertas: dict[str, PuertaAplicada]) -> None:
        self.puertas = puertas
        self.preguntas: list[str] = []

    def umbral(self, familia: str) -> PuertaAplicada | None:
        self.preguntas.append(familia)
        return self.puertas.get(familia)


def _nodos(modo: Any = "certificada", fuente: Any = None) -> Nodos:
    # publicar, enviar_a_revision and the gate snapshot never call the agents.
    return Nodos(
        cast(Agentes, None),
        modelo="fake",
        criterios_version="test",
        modo_puerta=modo,
        puerta=fuente or PuertaCerrada(),
    )


def _estado(puntuacion: float | None, ok: bool, puerta: Any = None, **extra: Any) -> Any:
    comprobaciones = {"C01": {"ok": True}, "C02": {"ok": ok, "detalle": "larga"}}
    return {
        "evento": evento_dict("ZAP-1"),
        "ficha": FICHA,
        "intentos": 1,
        "comprobaciones": comprobaciones,
        "veredicto": {"aprobada": False, "problemas": [], "puntuacion": puntuacion},
        "historial": [],
        "puerta": puerta,
        **extra,
    }


def test_la_instantanea_de_la_puerta_es_la_de_la_familia_en_json() -> None:
    fuente = _Fuente({"zapatillas": _aplicada()})
    puerta = _nodos(fuente=fuente)._puerta_vigente(_estado(0.9, True))
    assert puerta == _aplicada().model_dump(mode="json")
    assert fuente.preguntas == ["zapatillas"]
    otra = _Fuente({"moviles": _aplicada("moviles")})
    assert _nodos(fuente=otra)._puerta_vigente(_estado(0.9, True)) is None
    assert _nodos()._puerta_vigente(_estado(0.9, True)) is None  # no source: closed


def test_en_modo_veredicto_no_se_consulta_la_puerta() -> None:
    fuente = _Fuente({"zapatillas": _aplicada()})
    assert _nodos("veredicto", fuente)._puerta_vigente(_estado(0.9, True)) is None
    assert fuente.preguntas == []


def test_publicar_sella_la_puerta_y_la_puntuacion() -> None:
    puerta = _aplicada().model_dump(mode="json")
    salida = _nodos().publicar(_estado(0.85, True, puerta))["salida"]
    publicada = FichaPublicada.model_validate(salida["evento"])
    assert publicada.puerta == _aplicada()
    assert publicada.puntuacion == 0.85


def test_publicar_en_modo_veredicto_sin_puerta() -> None:
    salida = _nodos("veredicto").publicar(_estado(None, True))["salida"]
    publicada = FichaPublicada.model_validate(salida["evento"])
    assert publicada.puerta is None
    assert publicada.puntuacion is None


@pytest.mark.parametrize(
    ("modo", "ok", "invalida", "motivo"),
    [
        ("certificada", True, False, "sin_garantia"),  # held back by the gate alone
        ("certificada", False, False, "rechazada"),  # code checks failed: not the gate
        ("veredicto", True, False, "rechazada"),  # today's rule: the judge said no
        ("certificada", True, True, "salida_invalida"),
    ],
)
def test_motivo_de_revision(modo: Any, ok: bool, invalida: bool, motivo: str) -> None:
    extra = {"invalida": {"agente": "evaluador", "detalle": "x"}} if invalida else {}
    salida = _nodos(modo).enviar_a_revision(_estado(0.4, ok, **extra))["salida"]
    assert FichaEnRevision.model_validate(salida["evento"]).motivo == motivo


# -- the loop end to end with the scored fake LLM ---------------------------------------------


def _evento_cambio(sku: str) -> EventoCambio:
    return EventoCambio.model_validate(evento_dict(sku))


class _Cambiante:
    """A gate source whose answer changes after a number of questions (a gate closed mid-run)."""

    def __init__(self, primero: PuertaAplicada | None, despues: PuertaAplicada | None, n: int):
        self.respuestas = [primero] * n
        self.despues = despues

    def umbral(self, familia: str) -> PuertaAplicada | None:
        return self.respuestas.pop(0) if self.respuestas else self.despues


async def test_puerta_cerrada_el_si_del_juez_acaba_el_bucle_en_revision(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    fake_llm.configure(
        {"rules": [{"sku": "ZAP-C", "evaluador": [{"accion": "aprobar", "puntuacion": 0.97}]}]}
    )
    async with abrir_procesador(fake_llm.url, data_dir, modo_puerta="certificada") as (proc, _):
        resultado = await proc.procesar(_evento_cambio("ZAP-C"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert (revision.motivo, revision.intentos) == ("sin_garantia", 1)
    assert [h.puntuacion for h in revision.historial] == [pytest.approx(0.97)]
    assert len(fake_llm.requests(agent="generador")) == 1  # approved: nothing left to improve


async def test_puerta_cerrada_reintenta_como_una_abierta(fake_llm: FakeLLM, data_dir: Path) -> None:
    """Shadow mode runs the whole loop: a rejected first draft is tried again before people see
    it, as it would be with the gate open."""
    pasos = [{"accion": "rechazar", "puntuacion": 0.1}, {"accion": "aprobar", "puntuacion": 0.93}]
    fake_llm.configure({"rules": [{"sku": "ZAP-S", "evaluador": pasos}]})
    async with abrir_procesador(fake_llm.url, data_dir, modo_puerta="certificada") as (proc, _):
        resultado = await proc.procesar(_evento_cambio("ZAP-S"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert (revision.motivo, revision.intentos) == ("sin_garantia", 2)
    assert [h.puntuacion for h in revision.historial] == [pytest.approx(0.1), pytest.approx(0.93)]
    assert len(fake_llm.requests(agent="generador")) == 2


async def test_puerta_abierta_reintenta_el_rechazo_y_publica_con_la_puerta(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    pasos = [{"accion": "rechazar", "puntuacion": 0.3}, {"accion": "aprobar", "puntuacion": 0.9}]
    fake_llm.configure({"rules": [{"sku": "ZAP-A", "evaluador": pasos}]})
    fuente = _Fuente({"zapatillas": _aplicada(umbral=0.8)})
    async with abrir_procesador(
        fake_llm.url, data_dir, modo_puerta="certificada", puerta=fuente
    ) as (proc, _):
        resultado = await proc.procesar(_evento_cambio("ZAP-A"))
    publicada = FichaPublicada.model_validate(resultado.salida)
    assert publicada.intentos == 2
    assert publicada.puntuacion == pytest.approx(0.9)
    assert publicada.puerta == _aplicada(umbral=0.8)
    assert publicada.clave is not None and publicada.clave.modelo == "fake"
    assert fuente.preguntas == ["zapatillas", "zapatillas"]  # asked at every evaluation


async def test_puerta_abierta_un_si_bajo_el_umbral_va_a_revision_sin_reintentar(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    """The judge approved: the loop is done; the gate only holds the ficha back (v1.2 tried
    again, so an open gate published fichas a closed gate's shadow mode never showed people)."""
    pasos = [{"accion": "aprobar", "puntuacion": 0.6}, {"accion": "aprobar", "puntuacion": 0.9}]
    fake_llm.configure({"rules": [{"sku": "ZAP-B", "evaluador": pasos}]})
    fuente = _Fuente({"zapatillas": _aplicada(umbral=0.8)})
    async with abrir_procesador(
        fake_llm.url, data_dir, modo_puerta="certificada", puerta=fuente
    ) as (proc, _):
        resultado = await proc.procesar(_evento_cambio("ZAP-B"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert (revision.motivo, revision.intentos) == ("sin_garantia", 1)
    assert revision.clave is not None and revision.clave.modelo == "fake"


async def test_la_puerta_se_lee_en_cada_evaluacion(fake_llm: FakeLLM, data_dir: Path) -> None:
    # Open at the first evaluation (rejected: retry), closed at the second: the second
    # attempt's score would pass, but the gate closed meanwhile decides.
    pasos = [{"accion": "rechazar", "puntuacion": 0.6}, {"accion": "aprobar", "puntuacion": 0.99}]
    fake_llm.configure({"rules": [{"sku": "ZAP-X", "evaluador": pasos}]})
    fuente = _Cambiante(_aplicada(umbral=0.8), None, n=1)
    async with abrir_procesador(
        fake_llm.url, data_dir, modo_puerta="certificada", puerta=fuente
    ) as (proc, _):
        resultado = await proc.procesar(_evento_cambio("ZAP-X"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert (revision.motivo, revision.intentos) == ("sin_garantia", 2)
    assert [h.puntuacion for h in revision.historial] == [
        pytest.approx(0.6),
        pytest.approx(0.99),
    ]


# -- v1.6: the blind shadow share of an open gate ---------------------------------------------


def test_la_parte_ciega_es_un_hash_propio_independiente_de_la_muestra() -> None:
    """The share is its own draw: about the proportion asked, pinned (a change would move
    which events every deployed worker holds back), and independent of the publication
    sample's bare-id hash (both at 50 %: the joint share is about a quarter)."""
    ids = [f"ev-{i}" for i in range(4000)]
    en_sombra = {i for i in ids if en_muestra_sombra(i, 0.05)}
    assert 150 <= len(en_sombra) <= 250  # 200 expected; outside is a 5-sigma miss
    assert [i for i in ids[:200] if en_muestra_sombra(i, 0.05)] == SOMBRA_PRIMEROS_200
    assert all(en_muestra_sombra(i, 1.0) for i in ids) and not any(
        en_muestra_sombra(i, 0.0) for i in ids
    )
    ambas = sum(1 for i in ids if en_muestra_sombra(i, 0.5) and sampled(i, 0.5))
    assert 880 <= ambas <= 1120  # 1000 expected if independent; 0 or 2000 if the same hash


SOMBRA_PRIMEROS_200 = ["ev-60", "ev-105", "ev-115", "ev-158", "ev-195", "ev-196"]


def test_enviar_a_revision_marca_la_parte_ciega_solo_cuando_toca() -> None:
    """``muestra_sombra`` is written, true, only on a ficha held for the share; every other
    record stays as v1.5 subscribers know it (no key at all)."""
    puerta = _aplicada().model_dump(mode="json")
    marcada = _nodos().enviar_a_revision(_estado(0.99, True, puerta, sombra=True))["salida"][
        "evento"
    ]
    assert marcada["muestra_sombra"] is True and marcada["motivo"] == "sin_garantia"
    assert FichaEnRevision.model_validate(marcada).muestra_sombra is True
    for extra in ({"sombra": False}, {}):
        normal = _nodos().enviar_a_revision(_estado(0.4, True, puerta, **extra))["salida"]["evento"]
        assert "muestra_sombra" not in normal and "candidata" not in normal


async def test_puerta_abierta_la_parte_ciega_va_a_revision_sin_publicar(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    """Share 1: every final ficha of an open gate goes to people, above λ or not, marked; with
    the gate closed nothing is marked (the app stores it as shadow evidence anyway); the
    share never shortens the loop (a rejected draft is tried again first)."""
    reglas = [
        {"sku": "ZAP-P", "evaluador": [{"accion": "aprobar", "puntuacion": 0.97}]},
        {
            "sku": "ZAP-R",
            "evaluador": [
                {"accion": "rechazar", "puntuacion": 0.2},
                {"accion": "aprobar", "puntuacion": 0.95},
            ],
        },
        {"sku": "ZAP-L", "evaluador": [{"accion": "aprobar", "puntuacion": 0.5}]},
    ]
    fake_llm.configure({"rules": reglas})
    fuente = _Fuente({"zapatillas": _aplicada(umbral=0.8)})
    async with abrir_procesador(
        fake_llm.url, data_dir, modo_puerta="certificada", puerta=fuente, sombra_proporcion=1.0
    ) as (proc, _):
        resultados = {
            s: await proc.procesar(_evento_cambio(s)) for s in ("ZAP-P", "ZAP-R", "ZAP-L")
        }
    for sku, intentos in (("ZAP-P", 1), ("ZAP-R", 2), ("ZAP-L", 1)):
        revision = FichaEnRevision.model_validate(resultados[sku].salida)
        assert (revision.motivo, revision.intentos, revision.muestra_sombra) == (
            "sin_garantia",
            intentos,
            True,
        ), sku
    async with abrir_procesador(
        fake_llm.url, data_dir / "cerrada", modo_puerta="certificada", sombra_proporcion=1.0
    ) as (proc, _):
        cerrada = await proc.procesar(_evento_cambio("ZAP-P"))
    assert cerrada.salida["motivo"] == "sin_garantia" and "muestra_sombra" not in cerrada.salida


async def test_fuera_de_la_parte_ciega_la_puerta_abierta_publica(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    """Share 0 (and an id outside a share): the open gate publishes as before; kills a share
    that holds back every ficha."""
    fake_llm.configure(
        {"rules": [{"sku": "ZAP-P", "evaluador": [{"accion": "aprobar", "puntuacion": 0.97}]}]}
    )
    fuente = _Fuente({"zapatillas": _aplicada(umbral=0.8)})
    async with abrir_procesador(
        fake_llm.url, data_dir, modo_puerta="certificada", puerta=fuente, sombra_proporcion=0.0
    ) as (proc, _):
        resultado = await proc.procesar(_evento_cambio("ZAP-P"))
    assert FichaPublicada.model_validate(resultado.salida).puntuacion == pytest.approx(0.97)


def test_la_senal_del_evaluador_es_otra_clave() -> None:
    """Showing the evaluator the unsupported words changes its prompt: a gate certified
    without it does not apply to a loop that runs with it (and back)."""
    sin = clave_puerta("qwen", rubrica=False, criterios_version="v1")
    con = clave_puerta("qwen", rubrica=False, criterios_version="v1", senal=True)
    assert con.prompt_evaluador_sha256 == (
        hashlib.sha256(prompt_evaluador(True).encode()).hexdigest()
    )
    assert con.texto() != sin.texto()
    assert con.modo_evaluador == sin.modo_evaluador == "veredicto"


async def test_la_senal_no_va_con_la_rubrica() -> None:
    """The rubric asks its own question on invented facts; a signal for it was not measured."""
    model = build_chat_model(LLMSettings(url="http://127.0.0.1:9/v1", model="x", timeout_s=1))
    try:
        with pytest.raises(ValueError, match="single-verdict"):
            Agentes(model, rubrica=True, senal=True)
        assert Agentes(model, senal=True).senal
    finally:
        await close_chat_model(model)


# --- v1.5: the key names the model that answers and the settings each side sends.

VLLM = {
    "object": "list",
    "data": [
        {
            "id": "qwen3-30b-a3b",
            "object": "model",
            "created": 1764600000,
            "owned_by": "vllm",
            "root": "Qwen/Qwen3-30B-A3B",
            "parent": None,
            "max_model_len": 32768,
            "permission": [{"id": "modelperm-1", "allow_sampling": True}],
        },
        {
            "id": "fichas-lora",
            "object": "model",
            "created": 1764600000,
            "owned_by": "vllm",
            "root": "/loras/fichas v2",
            "parent": "qwen3-30b-a3b",
            "max_model_len": None,
            "permission": [],
        },
    ],
}
LLAMACPP = {
    "models": [{"name": "qwen", "model": "qwen", "modified_at": "", "size": "", "digest": ""}],
    "object": "list",
    "data": [
        {
            "id": "/modelos/Qwen3-30B-A3B-Q4_K_M.gguf",
            "aliases": ["qwen"],
            "object": "model",
            "created": 1764600123,
            "owned_by": "llamacpp",
            "meta": {
                "vocab_type": 2,
                "n_vocab": 151936,
                "n_ctx_train": 40960,
                "n_embd": 2048,
                "n_params": 30532122624,
                "size": 18556686336,
                "campo_futuro": 7,
            },
        }
    ],
}


def test_modelo_servido_de_vllm() -> None:
    base = modelo_servido(VLLM, "qwen3-30b-a3b")
    assert base == "max_model_len=32768 owned_by=vllm root=Qwen/Qwen3-30B-A3B"
    lora = modelo_servido(VLLM, "fichas-lora")
    assert lora == (
        "owned_by=vllm parent=qwen3-30b-a3b parent_max_model_len=32768 "
        'parent_root=Qwen/Qwen3-30B-A3B root="/loras/fichas v2"'
    )
    # new weights under the same served name, or another context length: another identity
    otro = json.loads(json.dumps(VLLM))
    otro["data"][0]["root"] = "Qwen/Qwen3-30B-A3B-Instruct-2507"
    assert modelo_servido(otro, "qwen3-30b-a3b") != base
    otro["data"][0] |= {"root": "Qwen/Qwen3-30B-A3B", "max_model_len": 16384, "created": 1}
    assert modelo_servido(otro, "qwen3-30b-a3b") != base
    # what changes between two starts of the same server does not
    otro["data"][0] |= {"max_model_len": 32768, "permission": []}
    assert modelo_servido(otro, "qwen3-30b-a3b") == base


def test_modelo_servido_de_llamacpp() -> None:
    esperado = (
        "id=/modelos/Qwen3-30B-A3B-Q4_K_M.gguf n_ctx_train=40960 n_embd=2048 "
        "n_params=30532122624 n_vocab=151936 owned_by=llamacpp size=18556686336 vocab_type=2"
    )
    assert modelo_servido(LLAMACPP, "qwen") == esperado  # by alias
    # llama.cpp answers every name with its one model: the identity is that model's
    assert modelo_servido(LLAMACPP, "cualquiera") == esperado
    # another quantisation of the same model, served under the same alias
    otro = json.loads(json.dumps(LLAMACPP))
    otro["data"][0]["meta"]["size"] = 32483932160
    otro["data"][0]["created"] = 1
    assert modelo_servido(otro, "qwen") != esperado
    enrutador = {
        "object": "list",
        "data": [
            {
                "id": "a",
                "owned_by": "llamacpp",
                "status": {"value": "loaded", "args": {"-m": "a.gguf"}},
            },
            {"id": "b", "owned_by": "llamacpp", "status": {"value": "unloaded"}},
        ],
    }
    assert modelo_servido(enrutador, "a") == "archivo=a.gguf id=a owned_by=llamacpp"


def test_modelo_servido_del_llm_de_pruebas_y_respuestas_invalidas() -> None:
    fake = {
        "object": "list",
        "data": [{"id": "fake", "object": "model", "owned_by": "fichas-tests"}],
    }
    assert modelo_servido(fake, "fake") == "id=fake owned_by=fichas-tests"
    dos = {"data": [{"id": "a"}, {"id": "b"}]}
    with pytest.raises(ValueError, match="lists no model named 'c'"):
        modelo_servido(dos, "c")
    for malo in ([], {"data": []}, {"data": "x"}, {"data": [1]}, "texto"):
        with pytest.raises(ValueError, match="not a /v1/models answer"):
            modelo_servido(malo, "fake")


def test_texto_ajustes_es_canonico() -> None:
    assert texto_ajustes({"temperature": 0.2, "max_tokens": 1024, "seed": None}) == (
        "max_tokens=1024 temperature=0.2"
    )
    assert (
        texto_ajustes({"b": 1.0, "a": True}) == texto_ajustes({"a": True, "b": 1}) == "a=true b=1"
    )
    assert texto_ajustes({"stop": ["\n\n"], "x": "dos palabras", "y": ""}) == (
        'stop=["\\n\\n"] x="dos palabras" y=""'
    )
    with pytest.raises(ValueError, match="finite"):
        texto_ajustes({"temperature": math.nan})


async def test_el_muestreo_de_cada_lado_es_lo_que_envia() -> None:
    """The generator's and the evaluator's copies send different settings; the text holds
    every field of the payload langchain builds (extra_body merged in, as the server gets it)
    except the model's name and streaming, and a changed setting changes the key."""
    settings = LLMSettings(url="http://127.0.0.1:9/v1", model="x", timeout_s=1, max_tokens=2048)
    model = build_chat_model(settings)
    penalizado = build_chat_model(replace(settings, repeat_penalty=1.1))
    try:
        evaluador = evaluator_chat_model(model, top_logprobs=5)
        generador_txt, evaluador_txt = muestreo_de(model), muestreo_de(evaluador)
        assert generador_txt == "max_completion_tokens=2048 temperature=0.2"
        assert evaluador_txt == (
            "logprobs=true max_completion_tokens=2048 repeat_penalty=1 repetition_penalty=1 "
            "temperature=0 top_logprobs=5"
        )
        carga = evaluador._get_request_payload([HumanMessage("hola")])
        carga |= carga.pop("extra_body", None) or {}
        esperado = {k: v for k, v in carga.items() if k not in ("messages", "model", "stream")}
        assert evaluador_txt == texto_ajustes(esperado)
        assert "repeat_penalty=1.1" in muestreo_de(penalizado)
        claves = {
            clave_puerta("x", False, "v1", muestreo_generador=t).texto()
            for t in (generador_txt, muestreo_de(penalizado))
        }
        assert len(claves) == 2
    finally:
        await close_chat_model(model)
        await close_chat_model(penalizado)
