"""A candidate loop's review items in the app's store and consumer, without Kafka (issue 41):
kept beside the live item of their event, deduplicated on redelivery, a queue view of their
own, decisions that are labels only (never pending for the outbox, never a publication), left
out of every live figure, and always shadow evidence for their key. SQLite and PostgreSQL (the
``dsn`` fixture of tests/revision/conftest.py)."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_OBSOLETA,
    DECISION_RECHAZADA,
    MOTIVO_SIN_GARANTIA,
)
from esquemas.estado_puerta import ClavePuerta
from harness.estados_puerta import clave_fake, estado
from harness.revisor import ficha_en_revision
from harness.secuencia import aprobaciones_para_abrir
from harness.topicos import Topics, settings_for
from revision.almacen import decisiones as dec
from revision.almacen.cola import ABIERTA, DECIDIDA, OBSOLETA, Almacen, Cierre
from revision.almacen.flujo import Flujo, llegada_de
from revision.almacen.item import id_item

VIVA = clave_fake()
CANDIDATA = clave_fake(modelo="fake-candidata")


@pytest.fixture
async def almacen(dsn: str | None, tmp_path: Path):
    a = await Almacen.abrir(dsn, tmp_path)
    yield a
    await a.cerrar()


def _flujo(almacen: Almacen, topics: Topics) -> Flujo:
    """The app's consumer side, fed records by hand (``guardar``, as a batch would)."""
    settings = settings_for("127.0.0.1:1").model_copy(
        update={"topic_revision": topics.revision, "topic_muestra": topics.muestra}
    )
    return Flujo(settings, almacen)


def _par(sku: str, version: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """The live loop's record of an event and the candidate's record of the same event."""
    viva = ficha_en_revision(sku, version, motivo=MOTIVO_SIN_GARANTIA, puntuaciones=(0.5, 0.95)) | {
        "clave": VIVA.model_dump(mode="json")
    }
    candidata = viva | {"clave": CANDIDATA.model_dump(mode="json"), "candidata": True}
    return viva, candidata


async def _guardar(flujo: Flujo, registro: dict[str, Any]) -> None:
    await flujo.guardar(flujo.settings.topic_revision, json.dumps(registro).encode())


def _sku() -> str:
    return f"T-{uuid.uuid4().hex[:10]}"


def _cierre(item: Any, decision: str, publicar: bool) -> Cierre:
    ahora = time.time()
    return Cierre(
        decision,
        [] if decision != DECISION_RECHAZADA else ["C06"],
        "ana",
        ahora,
        dec.decision_de(item, decision, "ana", ahora),
        dec.publicacion(item, item.datos["ficha"], "ana", False, ahora, "m") if publicar else None,
    )


async def test_la_candidata_y_la_viva_del_mismo_evento_son_dos_items(almacen):
    flujo = _flujo(almacen, Topics())
    viva, candidata = _par(_sku())
    for registro in (viva, candidata, viva, candidata):  # each redelivered once
        await _guardar(flujo, registro)

    principal = [i for i in await almacen.abiertos() if i.sku == viva["sku"]]
    sombra = [i for i in await almacen.abiertos(candidata=True) if i.sku == viva["sku"]]
    assert [i.event_id for i in principal] == [viva["event_id"]]
    assert [i.event_id for i in sombra] == [id_item(viva["event_id"], True, CANDIDATA.texto())]
    (item,) = sombra
    assert item.candidata and not principal[0].candidata
    assert item.id_evento == viva["event_id"]  # the record's own event_id is kept
    assert item.evidencia is not None and item.evidencia["clave"] == CANDIDATA.model_dump(
        mode="json"
    )
    assert await almacen.cuenta_abiertos(True) >= 1
    assert (await almacen.claves_candidatas())[CANDIDATA.texto()] == CANDIDATA
    assert await almacen.clave_viva() == VIVA


async def test_un_registro_sin_candidata_o_con_false_es_vivo(almacen):
    flujo = _flujo(almacen, Topics())
    viva, _ = _par(_sku())
    await _guardar(flujo, viva | {"candidata": False})
    assert not (await almacen.item(viva["event_id"])).candidata
    assert viva["sku"] not in {i.sku for i in await almacen.abiertos(candidata=True)}


async def test_siguiente_no_sale_de_su_vista(almacen):
    flujo = _flujo(almacen, Topics())
    viva, candidata = _par(_sku())
    await _guardar(flujo, viva)
    await _guardar(flujo, candidata)
    id_candidata = id_item(viva["event_id"], True, CANDIDATA.texto())
    vivos = {i.event_id for i in await almacen.abiertos()}
    candidatos = {i.event_id for i in await almacen.abiertos(candidata=True)}
    siguiente_viva = await almacen.siguiente(viva["event_id"])
    siguiente_candidata = await almacen.siguiente(id_candidata, True)
    assert siguiente_viva is None or siguiente_viva in vivos
    assert siguiente_candidata is None or siguiente_candidata in candidatos
    assert id_candidata not in vivos


async def test_una_decision_candidata_es_solo_una_etiqueta(almacen):
    flujo = _flujo(almacen, Topics())
    viva, candidata = _par(_sku())
    await _guardar(flujo, viva)
    await _guardar(flujo, candidata)
    item = await almacen.item(id_item(viva["event_id"], True, CANDIDATA.texto()))
    # Even a caller that built a publication gets none stored, and nothing is pending.
    decision = await almacen.decidir(item, _cierre(item, DECISION_APROBADA, publicar=True))
    assert decision is not None and decision.enviada and decision.publicacion is None
    guardada = await almacen.decision(item.event_id)
    assert guardada.enviada and guardada.publicacion is None
    assert guardada.registro["event_id"] == viva["event_id"]
    assert item.event_id not in {d.event_id for d in await almacen.pendientes()}
    assert (await almacen.item(item.event_id)).estado == DECIDIDA
    # The live item of the same event is still open and decides as ever (pending to send).
    vivo = await almacen.item(viva["event_id"])
    assert vivo.estado == ABIERTA
    decision_viva = await almacen.decidir(vivo, _cierre(vivo, DECISION_APROBADA, publicar=True))
    assert decision_viva is not None and not decision_viva.enviada
    assert decision_viva.publicacion is not None
    assert viva["event_id"] in {d.event_id for d in await almacen.pendientes()}


async def test_una_version_nueva_cierra_la_candidata_sin_nada_que_enviar(almacen):
    flujo = _flujo(almacen, Topics())
    sku = _sku()
    viva, candidata = _par(sku, 1)
    await _guardar(flujo, viva)
    await _guardar(flujo, candidata)
    cerradas = await almacen.observar_version(sku, 2, time.time())
    assert {d.decision for d in cerradas} == {DECISION_OBSOLETA}
    id_candidata = id_item(viva["event_id"], True, CANDIDATA.texto())
    por_id = {d.event_id: d for d in cerradas}
    assert set(por_id) == {viva["event_id"], id_candidata}
    assert por_id[id_candidata].enviada and not por_id[viva["event_id"]].enviada
    assert (await almacen.item(id_candidata)).estado == OBSOLETA
    pendientes = {d.event_id for d in await almacen.pendientes()}
    assert viva["event_id"] in pendientes and id_candidata not in pendientes


async def test_las_cifras_vivas_no_leen_la_candidata(almacen, dsn):
    """Every live figure leaves the candidate's item and its label out; its own figures count
    them. On SQLite (a store of this test's own) the totals are exact; on the shared
    PostgreSQL this test's rows are found by their ids, reviewer and key."""
    flujo = _flujo(almacen, Topics())
    candidata_clave = clave_fake(modelo=f"fake-{uuid.uuid4().hex[:6]}")
    viva, candidata = _par(_sku())
    candidata["clave"] = candidata_clave.model_dump(mode="json")
    await _guardar(flujo, viva)
    await _guardar(flujo, candidata)
    id_candidata = id_item(viva["event_id"], True, candidata_clave.texto())
    retenidas = {e for e, _, _ in await almacen.retenidas()}
    assert viva["event_id"] in retenidas and id_candidata not in retenidas
    assert (await almacen.candidatas_abiertas())[("zapatillas", candidata_clave.texto())] == 1
    if dsn is None:
        assert (await almacen.resumen_abiertos())[0] == {MOTIVO_SIN_GARANTIA: 1}

    item = await almacen.item(id_candidata)
    revisor = f"r-{uuid.uuid4().hex[:6]}"
    ahora = time.time()
    cierre = Cierre(
        DECISION_RECHAZADA,
        ["C06"],
        revisor,
        ahora,
        dec.decision_de(item, DECISION_RECHAZADA, revisor, ahora, ["C06"]),
        None,
    )
    await almacen.decidir(item, cierre)
    assert id_candidata not in {d.event_id for d in await almacen.decisiones()}
    assert revisor not in {d.revisor for d in await almacen.decisiones_resumidas()}
    assert id_candidata not in {i.event_id for i, _, _ in await almacen.cerrados()}
    etiquetas = await almacen.candidatas_decisiones()
    assert etiquetas[("zapatillas", candidata_clave.texto(), DECISION_RECHAZADA)] == 1
    assert ("zapatillas", candidata_clave.texto()) not in await almacen.candidatas_abiertas()
    if dsn is None:
        assert await almacen.cuentas_decisiones() == {}
        assert (await almacen.resumen_abiertos())[0] == {MOTIVO_SIN_GARANTIA: 1}

    vivo = await almacen.item(viva["event_id"])
    await almacen.decidir(vivo, _cierre(vivo, DECISION_APROBADA, publicar=True))
    assert viva["event_id"] in {d.event_id for d in await almacen.decisiones()}
    if dsn is None:
        assert await almacen.cuentas_decisiones() == {("revision", DECISION_APROBADA): 1}


def test_la_candidata_es_sombra_aunque_su_puerta_este_abierta():
    viva, candidata = _par(_sku())
    estados = {
        e.id: e
        for e in (
            estado(VIVA, 0.5, "zapatillas"),
            estado(CANDIDATA, 0.5, "zapatillas"),
        )
    }
    llegada_viva = llegada_de(viva, "revision", estados)
    llegada_candidata = llegada_de(candidata, "revision", estados)
    assert llegada_viva is not None and not llegada_viva.sombra  # held back by an open gate
    assert llegada_candidata is not None and llegada_candidata.sombra
    assert llegada_candidata.clave == ClavePuerta.model_validate(candidata["clave"])
    # With every gate closed both are shadow, each under its own key.
    assert llegada_de(viva, "revision", {}).sombra


async def test_la_candidata_llega_a_la_secuencia_de_su_clave(almacen):
    flujo = _flujo(almacen, Topics())
    flujo.estados = lambda: {
        e.id: e for e in (estado(CANDIDATA, 0.5, "zapatillas"), estado(VIVA, 0.5, "zapatillas"))
    }
    viva, candidata = _par(_sku())
    await _guardar(flujo, viva)
    await _guardar(flujo, candidata)
    filas = {f.event_id: f for f in await almacen.secuencias()}
    id_candidata = id_item(viva["event_id"], True, CANDIDATA.texto())
    assert id_candidata in filas and filas[id_candidata].clave == CANDIDATA
    assert viva["event_id"] not in filas  # the live key's gate is open: not shadow


class _Topico:
    """Stands in for ``fichas.puerta`` as the app sees it: what was written is read back
    when ``leer`` says so."""

    def __init__(self) -> None:
        self.estados: dict[str, Any] = {}
        self.escritos: list[Any] = []

    async def escribir(self, nuevo: Any) -> None:
        self.escritos.append(nuevo)

    def leer(self) -> None:
        for escrito in self.escritos:
            self.estados[escrito.id] = escrito


async def test_el_abridor_abre_la_clave_candidata_y_nunca_reabre_una_sustituida(almacen):
    """Automatic mode opens the candidate key's gates from its items like any key's (the live
    key's gate open beside it); once a promotion closed a key's gates (``sustituida``), no
    round reopens them, although their evidence still certifies."""
    from datetime import UTC, datetime

    from herramientas.promocion import planear
    from revision.certificador.apertura import Apertura

    topico = _Topico()
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir, "automatica")
    candidata_clave = clave_fake(modelo=f"fake-{uuid.uuid4().hex[:6]}")
    viva_abierta = estado(VIVA, 0.5, "zapatillas")
    topico.estados[viva_abierta.id] = viva_abierta
    flujo = _flujo(almacen, Topics())
    flujo.estados = lambda: dict(topico.estados)
    ids = []
    fichas = aprobaciones_para_abrir() + 1
    for _ in range(fichas):
        viva, candidata = _par(_sku())
        candidata["clave"] = candidata_clave.model_dump(mode="json")
        await _guardar(flujo, viva)
        await _guardar(flujo, candidata)
        ids.append(id_item(viva["event_id"], True, candidata_clave.texto()))
    for id_ in ids:
        item = await almacen.item(id_)
        await almacen.decidir(item, _cierre(item, DECISION_APROBADA, publicar=False))
    escritos = [e for e in await apertura.revisar() if e.clave == candidata_clave]
    assert {e.familia for e in escritos} == {"zapatillas", "*"}
    assert all(e.abierta and e.n == fichas and e.k == 0 for e in escritos)
    topico.leer()

    plan = planear(
        candidata_clave.texto(), VIVA.texto(), topico.estados, datetime.now(UTC), forzar=True
    )
    assert {r.familia for r in plan.registros} == {"zapatillas", "*"}
    topico.escritos = list(plan.registros)
    topico.leer()
    assert [e for e in await apertura.revisar() if e.clave == candidata_clave] == []
    assert not [s for s in apertura.listas() if s.clave == candidata_clave]
