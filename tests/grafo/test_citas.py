"""The quoting evaluator (FICHAS_EVALUADOR=citas): schema, judgement, score, problems, key,
and its whole path through the fake LLM process over real HTTP."""

from __future__ import annotations

import hashlib
import math
from typing import Any

import pytest
from langchain.agents.structured_output import ProviderStrategy

from criterios import comprobar, mapear_origen
from criterios.respaldo import afirmaciones, fragmentos
from grafo import Agentes, LLMSettings, build_chat_model, clave_puerta, close_chat_model
from grafo.citas import (
    TECHO,
    Cita,
    Citas,
    Juicio,
    formato_respuesta,
    juzgar,
    puntuacion_citas,
    veredicto_de_citas,
)
from grafo.logprobs_probe import probe_logprobs
from grafo.mensajes import prompt_evaluador_citas
from grafo.puntuacion import probabilidades_verdadero
from harness.fake_llm.client import FakeLLM
from puerta.secuencial import REJILLA

ORIGEN = mapear_origen(
    {
        "sku": "CIT-1",
        "familia": "zapatillas",
        "atributos_obligatorios": ["talla", "color", "material", "genero"],
        "ficha_proveedor": {
            "titulo": "RUNNER X2 black mesh sneaker men 42",
            "descripcion": "Lightweight running shoe, mesh upper, rubber sole. Weight 280 g.",
            "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
            "idioma": "en",
        },
        "cifras": {"peso_g": 280},
    }
).origen
# The fake LLM quotes by shared words, as a model would within one language.
ORIGEN_ES = mapear_origen(
    {
        "sku": "CIT-2",
        "familia": "zapatillas",
        "atributos_obligatorios": ["talla", "color", "material", "genero"],
        "ficha_proveedor": {
            "titulo": "Zapatilla running malla negra hombre 42",
            "descripcion": "Zapatilla ligera de running, con malla y suela de goma. Pesa 280 g.",
            "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
            "idioma": "es",
        },
        "cifras": {"peso_g": 280},
    }
).origen
BUENA = {
    "titulo": "Zapatilla Runner X2 de malla negra",
    "descripcion": "Con malla y suela de goma. Pesa 280 g.",
    "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
}
INVENTA = {**BUENA, "descripcion": BUENA["descripcion"] + " Protege las rodillas."}


def _juicio(respaldada: bool, p: float | None) -> Juicio:
    return Juicio("una afirmación", "", respaldada, 1.0 if respaldada else 0.0, p, respaldada)


# -- the schema the request carries ---------------------------------------------------------


def test_el_formato_pide_una_cita_por_afirmacion_de_entre_los_fragmentos() -> None:
    base = ProviderStrategy(Citas).to_model_kwargs()["response_format"]
    formato = formato_respuesta(base, ["mesh upper", "rubber sole"], 3)
    esquema = formato["json_schema"]["schema"]
    lista = esquema["properties"]["citas"]
    assert (lista["minItems"], lista["maxItems"]) == (3, 3)
    item = esquema["$defs"]["Cita"]
    assert item["properties"]["cita"]["enum"] == ["", "mesh upper", "rubber sole"]
    assert item["required"] == ["cita", "respaldada"]  # the quote first, then the judgement
    assert "enum" not in base["json_schema"]["schema"]["$defs"]["Cita"]["properties"]["cita"]


# -- code's judgement and the score ------------------------------------------------------------


def test_juzgar_acepta_lo_que_el_origen_dice_y_rechaza_lo_demas() -> None:
    claims = afirmaciones(INVENTA)
    respuesta = Citas(
        citas=[
            Cita(cita="RUNNER X2 black mesh sneaker men 42", respaldada=True),
            Cita(cita="mesh upper, rubber sole", respaldada=True),
            Cita(cita="Weight 280 g", respaldada=True),
            Cita(cita="Lightweight running shoe", respaldada=True),  # shares nothing
        ]
    )
    juicios = juzgar(claims, respuesta, [0.9, 0.9, 0.9, 0.8], ORIGEN)
    assert [j.respaldada for j in juicios] == [True, True, True, False]
    assert [j.aceptada for j in juicios] == [True, True, True, False]
    assert juicios[-1].afirmacion == "Protege las rodillas."


def test_una_cita_que_no_esta_en_el_origen_no_se_acepta() -> None:
    claims = afirmaciones(BUENA)
    respuesta = Citas(citas=[Cita(cita=c, respaldada=True) for c in claims])  # copies the ficha
    juicios = juzgar(claims, respuesta, [0.99] * 3, ORIGEN)
    assert not any(j.aceptada for j in juicios)


def test_una_respuesta_corta_deja_las_afirmaciones_sin_cita() -> None:
    claims = afirmaciones(BUENA)
    juicios = juzgar(claims, Citas(citas=[]), [], ORIGEN)
    assert [j.cita for j in juicios] == ["", "", ""]
    assert not any(j.respaldada for j in juicios)


def test_todo_respaldado_puntua_uno_en_el_extremo_estricto_de_la_rejilla() -> None:
    assert puntuacion_citas([_juicio(True, 0.2), _juicio(True, None)]) == 1.0
    assert 1.0 >= max(REJILLA)  # the opener's strictest threshold is reachable by construction


def test_cada_afirmacion_sin_respaldo_baja_la_puntuacion_bajo_el_techo() -> None:
    una = puntuacion_citas([_juicio(True, 0.9), _juicio(False, 0.8)])
    dos = puntuacion_citas([_juicio(False, 0.8), _juicio(False, 0.8)])
    assert una == pytest.approx(TECHO * 0.8)
    assert dos == pytest.approx((TECHO * 0.8) ** 2)
    assert TECHO < max(REJILLA)  # even a certain model keeps it off the top threshold
    assert puntuacion_citas([_juicio(False, 1.0)]) == pytest.approx(TECHO)


def test_sin_logprobs_no_hay_puntuacion() -> None:
    assert puntuacion_citas([_juicio(True, None), _juicio(True, None)]) is None
    assert puntuacion_citas([_juicio(True, 0.9), _juicio(False, None)]) is None
    assert puntuacion_citas([]) is None


def test_los_problemas_citan_cada_afirmacion_sin_respaldo_para_el_reintento() -> None:
    larga = "Protege las rodillas " + "en tiradas muy largas " * 10
    juicios = [_juicio(True, 0.9), Juicio(larga, "", False, 0.0, 0.3, False)]
    veredicto = veredicto_de_citas(juicios)
    assert not veredicto.aprobada
    (problema,) = veredicto.problemas
    assert problema.criterio == "C04"
    assert problema.detalle.startswith("«Protege las rodillas en tiradas")
    assert problema.detalle.endswith("Quítalo o di solo lo que dice el origen")
    assert len(problema.detalle) <= 200
    assert veredicto_de_citas([_juicio(True, 0.9)]).aprobada


# -- the log-probabilities at every claim -----------------------------------------------------


def _token(texto: str, top: dict[str, float] | None = None) -> dict[str, Any]:
    entrada: dict[str, Any] = {"token": texto, "logprob": 0.0}
    if top is not None:
        entrada["top_logprobs"] = [{"token": t, "logprob": math.log(p)} for t, p in top.items()]
    return entrada


def test_se_lee_la_probabilidad_de_cada_afirmacion_en_su_orden() -> None:
    tokens = [_token('{"citas": [{"cita": "a", "respaldada":')]
    tokens += [_token(" true", {" true": 0.6, " false": 0.4})]
    tokens += [_token('}, {"cita": "", "respaldada":')]
    tokens += [_token(" false", {" false": 0.7, " true": 0.1, '"': 0.2})]
    tokens += [_token('}, {"cita": "respaldada: true", "respaldada":'), _token(" true")]
    tokens += [_token("}]}")]
    probabilidades = probabilidades_verdadero({"content": tokens}, ("citas", "respaldada"))
    assert probabilidades[0] == pytest.approx(0.6)
    assert probabilidades[1] == pytest.approx(0.1 / 0.8)
    assert probabilidades[2] == pytest.approx(1.0)  # the sampled token alone, certain
    assert len(probabilidades) == 3  # the word inside the third quote is not a member
    assert probabilidades_verdadero(None, ("citas", "respaldada")) == []


# -- the gate key ---------------------------------------------------------------------------


def test_la_clave_lleva_el_modo_y_el_prompt_del_evaluador_citas() -> None:
    citas = clave_puerta("qwen", "citas", "v1")
    assert citas.modo_evaluador == "citas"
    assert citas.prompt_evaluador_sha256 == (
        hashlib.sha256(prompt_evaluador_citas().encode()).hexdigest()
    )
    otras = {clave_puerta("qwen", modo, "v1").texto() for modo in ("veredicto", "rubrica")}
    assert citas.texto() not in otras and len(otras) == 2
    assert clave_puerta("qwen", True, "v1") == clave_puerta("qwen", "rubrica", "v1")
    with pytest.raises(ValueError, match="evaluator mode"):
        clave_puerta("qwen", "juez", "v1")
    with pytest.raises(ValueError, match="single-verdict"):
        clave_puerta("qwen", "citas", "v1", senal=True)


# -- the whole path, through the fake LLM process ----------------------------------------------


async def _evaluar(fake_llm: FakeLLM, ficha: dict[str, Any]) -> Any:
    model = build_chat_model(LLMSettings(url=fake_llm.url, model="fake", timeout_s=10))
    try:
        return await Agentes(model, rubrica="citas").evaluar(
            ficha, comprobar(ficha, ORIGEN_ES), ORIGEN_ES
        )
    finally:
        await close_chat_model(model)


async def test_por_el_servidor_todo_respaldado_aprueba_y_puntua_uno(fake_llm: FakeLLM) -> None:
    evaluacion = await _evaluar(fake_llm, BUENA)
    assert evaluacion.veredicto.aprobada and evaluacion.puntuacion == 1.0
    assert [c["respaldada"] for c in evaluacion.citas] == [True, True, True]
    (peticion,) = fake_llm.requests(agent="evaluador")
    cuerpo = peticion["body"]
    esquema = cuerpo["response_format"]["json_schema"]["schema"]
    assert esquema["properties"]["citas"]["maxItems"] == 3
    assert esquema["$defs"]["Cita"]["properties"]["cita"]["enum"][1:] == fragmentos(ORIGEN_ES)
    assert cuerpo["logprobs"] is True and cuerpo["temperature"] == 0
    usuario = cuerpo["messages"][-1]["content"]
    assert "Protege" not in usuario and "Con malla y suela de goma." in usuario


async def test_por_el_servidor_lo_inventado_es_un_problema_y_baja_la_puntuacion(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.configure({"default": {"evaluador": [{"accion": "rechazar", "puntuacion": 0.5}]}})
    evaluacion = await _evaluar(fake_llm, INVENTA)
    assert not evaluacion.veredicto.aprobada
    assert [p.criterio for p in evaluacion.veredicto.problemas] == ["C04"]
    assert "«Protege las rodillas.»" in evaluacion.veredicto.problemas[0].detalle
    # three supported claims (factor 1) and one unsupported: TECHO x P(respaldada) = 0.5
    assert evaluacion.puntuacion == pytest.approx(TECHO * 0.5)
    assert evaluacion.citas[-1] == {
        "afirmacion": "Protege las rodillas.",
        "cita": "",
        "aceptada": False,
        "cobertura": 0.0,
        "p_respaldada": pytest.approx(0.5),
        "respaldada": False,
    }


async def test_por_el_servidor_sin_logprobs_no_hay_puntuacion(fake_llm: FakeLLM) -> None:
    fake_llm.configure({"default": {"evaluador": [{"accion": "aprobar", "puntuacion": None}]}})
    evaluacion = await _evaluar(fake_llm, BUENA)
    assert evaluacion.veredicto.aprobada and evaluacion.puntuacion is None


@pytest.mark.parametrize(("puntuacion", "estado"), [(0.7, "present"), (None, "missing")])
async def test_el_sondeo_de_arranque_pregunta_como_el_evaluador_citas(
    fake_llm: FakeLLM, puntuacion: float | None, estado: str
) -> None:
    paso = {"accion": "aprobar", "puntuacion": puntuacion}
    fake_llm.configure({"default": {"evaluador": [paso]}})
    model = build_chat_model(LLMSettings(url=fake_llm.url, model="fake", timeout_s=10))
    try:
        resultado = await probe_logprobs(Agentes(model, rubrica="citas"), fake_llm.url, "fake")
    finally:
        await close_chat_model(model)
    assert resultado.status == estado
    (peticion,) = fake_llm.requests(agent="evaluador")
    assert "citas" in peticion["body"]["response_format"]["json_schema"]["schema"]["properties"]


async def test_una_ficha_sin_afirmaciones_se_rechaza_sin_preguntar(fake_llm: FakeLLM) -> None:
    evaluacion = await _evaluar(fake_llm, {"titulo": "X2", "descripcion": "42.", "atributos": {}})
    assert [p.criterio for p in evaluacion.veredicto.problemas] == ["C06"]
    assert evaluacion.puntuacion is None
    assert fake_llm.requests(agent="evaluador") == []


def test_un_atributo_sin_respaldo_baja_la_puntuacion_y_es_un_problema() -> None:
    juicios = [_juicio(True, 0.9)]
    assert puntuacion_citas(juicios, ["color: transparente"]) == pytest.approx(TECHO)
    veredicto = veredicto_de_citas(juicios, ["color: transparente"])
    (problema,) = veredicto.problemas
    assert problema.criterio == "C04" and "«color: transparente»" in problema.detalle


def test_una_descripcion_sin_nada_propio_baja_la_puntuacion_y_es_c06() -> None:
    juicios = [_juicio(True, 0.9), _juicio(True, 0.9)]
    assert puntuacion_citas(juicios, vacia=True) == pytest.approx(TECHO)
    veredicto = veredicto_de_citas(juicios, vacia=True)
    assert [p.criterio for p in veredicto.problemas] == ["C06"]
    assert "no dice nada que no diga el título" in veredicto.problemas[0].detalle
