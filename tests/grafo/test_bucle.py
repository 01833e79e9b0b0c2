"""The loop end to end through the real HTTP client against the scripted fake LLM."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from esquemas import EventoCambio, FichaEnRevision, FichaPublicada
from grafo.ejecucion import thread_id
from grafo.intentos import Rechazo
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.procesador import abrir_procesador


def _evento(sku: str) -> EventoCambio:
    return EventoCambio.model_validate(evento_dict(sku))


def _script(llm: FakeLLM, sku: str, **acciones: list[str]) -> None:
    llm.configure({"rules": [{"sku": sku, **acciones}]})


async def _historial(proc: Any, evento: EventoCambio) -> list[dict[str, Any]]:
    snapshot = await proc._graph.aget_state({"configurable": {"thread_id": thread_id(evento)}})
    return list(snapshot.values["historial"])


async def test_rechaza_dos_veces_y_aprueba_a_la_tercera(fake_llm: FakeLLM, data_dir: Path) -> None:
    _script(fake_llm, "ZAP-1", evaluador=["rechazar", "rechazar", "aprobar"])
    evento = _evento("ZAP-1")
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(evento)
        historial = await _historial(proc, evento)
    assert resultado.destino == "fichas.publicadas"
    publicada = FichaPublicada.model_validate(resultado.salida)
    assert publicada.intentos == 3
    assert publicada.event_id == evento.event_id
    assert [r["veredicto"]["aprobada"] for r in historial] == [False, False, True]
    assert [r["intento"] for r in historial] == [1, 2, 3]
    assert [i.aprobada for i in resultado.resumen] == [False, False, True]


async def test_siempre_rechaza_va_a_revision_a_la_tercera(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    _script(fake_llm, "ZAP-2", evaluador=["rechazar:C04"])
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-2"))
    assert resultado.destino == "fichas.revision_manual"
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert revision.intentos == 3
    assert revision.motivo == "rechazada"
    assert [p.criterio for p in revision.problemas] == ["C04"]
    assert [h.veredicto.aprobada for h in revision.historial] == [False, False, False]
    assert revision.ficha is not None
    assert len(fake_llm.requests(agent="generador")) == 3
    assert len(fake_llm.requests(agent="evaluador")) == 3


async def test_max_intentos_configurable(fake_llm: FakeLLM, data_dir: Path) -> None:
    _script(fake_llm, "ZAP-3", evaluador=["rechazar"])
    async with abrir_procesador(fake_llm.url, data_dir, max_intentos=2) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-3"))
    assert resultado.destino == "fichas.revision_manual"
    assert resultado.salida["intentos"] == 2


async def test_evaluador_aprueba_ficha_que_falla_codigo_no_se_publica(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    _script(fake_llm, "ZAP-4", generador=["sin_atributos"], evaluador=["aprobar"])
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-4"))
    assert resultado.destino == "fichas.revision_manual"
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert revision.motivo == "rechazada"
    assert "C03" in [p.criterio for p in revision.problemas]
    assert len(fake_llm.requests(agent="evaluador")) == 3  # the evaluator approved every time
    assert all(i.rechazos == (Rechazo("C03", "codigo"),) for i in resultado.resumen)


async def test_codigo_falla_una_vez_y_luego_se_publica(fake_llm: FakeLLM, data_dir: Path) -> None:
    _script(fake_llm, "ZAP-5", generador=["sin_atributos", "valida"], evaluador=["aprobar"])
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-5"))
    assert resultado.destino == "fichas.publicadas"
    assert resultado.salida["intentos"] == 2


async def test_titulo_largo_va_a_revision_sin_evaluador(fake_llm: FakeLLM, data_dir: Path) -> None:
    _script(fake_llm, "ZAP-6", generador=["titulo_largo"])
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-6"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert revision.motivo == "salida_invalida"
    assert revision.intentos == 1
    assert revision.ficha is None
    assert revision.problemas[0].criterio == "salida_invalida"
    assert fake_llm.requests(agent="evaluador") == []


async def test_json_roto_del_evaluador_va_a_revision(fake_llm: FakeLLM, data_dir: Path) -> None:
    _script(fake_llm, "ZAP-7", evaluador=["json_roto"])
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-7"))
    revision = FichaEnRevision.model_validate(resultado.salida)
    assert revision.motivo == "salida_invalida"
    assert revision.ficha is not None  # the generator's ficha was valid


async def test_fallos_transitorios_del_llm_no_cuentan_como_intento(
    fake_llm: FakeLLM, data_dir: Path
) -> None:
    _script(
        fake_llm,
        "ZAP-8",
        generador=["error:503", "error:429", "valida"],
        evaluador=["error:500", "cerrar", "aprobar"],
    )
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-8"))
        assert proc.health.is_up
    assert resultado.destino == "fichas.publicadas"
    assert resultado.salida["intentos"] == 1
    assert len(fake_llm.requests(agent="generador")) == 3
    assert len(fake_llm.requests(agent="evaluador")) == 3


async def test_peticion_rechazada_400_va_a_revision(fake_llm: FakeLLM, data_dir: Path) -> None:
    _script(fake_llm, "ZAP-9", generador=["error:400"])
    async with abrir_procesador(fake_llm.url, data_dir) as (proc, _):
        resultado = await proc.procesar(_evento("ZAP-9"))
    assert resultado.destino == "fichas.revision_manual"
    assert resultado.salida["motivo"] == "salida_invalida"
