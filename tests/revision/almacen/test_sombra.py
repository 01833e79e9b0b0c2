"""The app's side of issue 47, item 6, in its store, without Kafka (SQLite and PostgreSQL, the
``dsn`` fixture): the blind shadow share stored as shadow-mode evidence while its gate is open,
what the queue shows of an item decided blind, and the obsolete rate per family and key."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from esquemas.constantes import (
    DECISION_APROBADA,
    DECISION_RECHAZADA,
    FAMILIA_TODAS,
    MOTIVO_RECHAZADA,
    MOTIVO_SIN_GARANTIA,
)
from harness.estados_puerta import clave_fake, estado
from harness.revisor import ficha_en_revision
from harness.topicos import Topics, settings_for
from puerta.secuencial import REJILLA
from revision.almacen import decisiones as dec
from revision.almacen import obsoletas
from revision.almacen.cola import DECIDIDA, OBSOLETA, Almacen, Cierre
from revision.almacen.flujo import Flujo, llegada_de

CLAVE = clave_fake(modelo=f"sombra-{uuid.uuid4().hex[:6]}")
ABIERTA = estado(CLAVE, umbral=0.8, familia="zapatillas")


@pytest.fixture
async def almacen(dsn: str | None, tmp_path: Path):
    a = await Almacen.abrir(dsn, tmp_path)
    yield a
    await a.cerrar()


def _flujo(almacen: Almacen, estados: dict[str, Any]) -> Flujo:
    """The app's consumer side, fed records by hand, with its view of ``fichas.puerta``."""
    topics = Topics()
    settings = settings_for("127.0.0.1:1").model_copy(
        update={"topic_revision": topics.revision, "topic_muestra": topics.muestra}
    )
    return Flujo(settings, almacen, lambda: estados)


def _registro(
    sku: str, puntuacion: float = 0.95, motivo: str = MOTIVO_SIN_GARANTIA, **extra: Any
) -> dict[str, Any]:
    r = ficha_en_revision(sku, motivo=motivo, puntuaciones=(0.3, puntuacion))
    return r | {"clave": CLAVE.model_dump(mode="json")} | extra


async def _guardar(flujo: Flujo, registro: dict[str, Any]) -> None:
    await flujo.guardar(flujo.settings.topic_revision, json.dumps(registro).encode())


def _sku() -> str:
    return f"S-{uuid.uuid4().hex[:10]}"


def test_llegada_de_la_parte_ciega_es_sombra_con_la_puerta_abierta() -> None:
    """The family's gate open: a held-back item is not shadow evidence, the share's is; with the
    gate closed both are; ``muestra_sombra`` counts only when true."""
    abierta = {ABIERTA.id: ABIERTA}
    normal = _registro("S-1")
    assert not llegada_de(normal, "revision", abierta).sombra
    assert llegada_de(normal | {"muestra_sombra": True}, "revision", abierta).sombra
    assert not llegada_de(normal | {"muestra_sombra": "true"}, "revision", abierta).sombra
    assert llegada_de(normal, "revision", {}).sombra


async def test_la_parte_ciega_se_guarda_como_evidencia_con_la_puerta_abierta(almacen):
    flujo = _flujo(almacen, {ABIERTA.id: ABIERTA})
    retenida, ciega = _registro(_sku(), 0.6), _registro(_sku(), muestra_sombra=True)
    for registro in (retenida, ciega):
        await _guardar(flujo, registro)
    guardada_ciega = await almacen.item(ciega["event_id"])
    guardada_retenida = await almacen.item(retenida["event_id"])
    assert guardada_ciega.sombra and not guardada_retenida.sombra
    assert guardada_ciega.datos["muestra_sombra"] is True
    # The certifier's sequences: exactly the share's item, in its family's and the pooled one.
    filas = [f for f in await almacen.secuencias() if f.clave == CLAVE]
    assert [f.event_id for f in filas] == [ciega["event_id"]]
    assert (filas[0].puntuacion, filas[0].codigo_ok) == (0.95, True)
    # A decision on it is evidence, as any shadow-mode item's.
    assert guardada_ciega.evidencia is not None and guardada_ciega.evidencia["puntuacion"] == 0.95


async def test_la_cola_de_un_elemento_a_ciegas_solo_muestra_el_codigo(almacen):
    """The record's problems carry the judge's (C06 here): an item decided blind keeps, for the
    queue and its filters, only the criteria the app's code checks fail on its ficha; an item
    that is not evidence keeps the record's."""
    flujo = _flujo(almacen, {ABIERTA.id: ABIERTA})
    ciega = _registro(_sku(), muestra_sombra=True)
    rota = _registro(_sku(), motivo=MOTIVO_RECHAZADA, muestra_sombra=True)
    atributos = {k: v for k, v in rota["ficha"]["atributos"].items() if k != "genero"}
    rota["ficha"] = dict(rota["ficha"], atributos=atributos)  # C03 fails: a required one missing
    visible = _registro(_sku(), 0.6)
    for registro in (ciega, rota, visible):
        await _guardar(flujo, registro)
    assert (await almacen.item(ciega["event_id"])).criterios == []
    assert (await almacen.item(rota["event_id"])).criterios == ["C03"]
    assert (await almacen.item(visible["event_id"])).criterios == ["C06"]


def _cierre(item: Any, decision: str) -> Cierre:
    ahora = time.time()
    criterios = ["C06"] if decision == DECISION_RECHAZADA else []
    registro = dec.decision_de(item, decision, "ana", ahora, criterios)
    return Cierre(decision, criterios, "ana", ahora, registro, None)


async def test_proporcion_de_obsoletas_por_familia_y_clave(almacen):
    """Countable shadow items closed: 2 decided and 1 superseded in zapatillas, 1 superseded in
    botellas; open ones, uncountable ones (a code failure, a score under the grid) and items
    that are not shadow evidence are left out; ``*`` adds the key's families."""
    flujo = _flujo(almacen, {})
    skus = [_sku() for _ in range(8)]
    registros = [
        _registro(skus[0]),  # decided: approved
        _registro(skus[1]),  # decided: rejected
        _registro(skus[2]),  # superseded before a decision
        _registro(skus[3], familia="botellas"),  # superseded, another family
        _registro(skus[4]),  # still open
        _registro(skus[5], puntuacion=min(REJILLA) / 2),  # superseded but never countable
        _registro(skus[6], motivo=MOTIVO_RECHAZADA),  # superseded, code failed: not countable
    ]
    for registro in registros:
        await _guardar(flujo, registro)
    for r, decision in ((registros[0], DECISION_APROBADA), (registros[1], DECISION_RECHAZADA)):
        item = await almacen.item(r["event_id"])
        assert await almacen.decidir(item, _cierre(item, decision)) is not None
    for r in (registros[2], registros[3], registros[5], registros[6]):
        await almacen.observar_version(r["sku"], 2, time.time())
    assert (await almacen.item(registros[2]["event_id"])).estado == OBSOLETA
    assert (await almacen.item(registros[0]["event_id"])).estado == DECIDIDA

    cuentas = await obsoletas.cerradas(almacen.database, min(REJILLA))
    clave = CLAVE.texto()
    zapatillas = cuentas[("zapatillas", clave)]
    assert (zapatillas.obsoletas, zapatillas.decididas) == (1, 2)
    assert zapatillas.proporcion == pytest.approx(1 / 3)
    assert (cuentas[("botellas", clave)].obsoletas, cuentas[("botellas", clave)].decididas) == (
        1,
        0,
    )
    conjunta = cuentas[(FAMILIA_TODAS, clave)]
    assert (conjunta.obsoletas, conjunta.decididas, conjunta.proporcion) == (2, 2, 0.5)
    assert obsoletas.por_puerta(cuentas)[f"*|{clave}"] == conjunta
