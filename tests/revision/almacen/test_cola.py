"""revision.almacen.cola, the review queue's store, without Kafka: idempotence, one decision per
item, supersession, the outbox's pending rows, what the gate's monitors read. SQLite and
PostgreSQL (the ``dsn`` fixture of tests/revision/conftest.py)."""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path

import pytest

from harness.revisor import ficha_en_revision
from revision.almacen import decisiones as dec
from revision.almacen.cola import ABIERTA, DECIDIDA, OBSOLETA, Almacen, Cierre, ItemNuevo


@pytest.fixture
async def almacen(dsn: str | None, tmp_path: Path):
    a = await Almacen.abrir(dsn, tmp_path)
    yield a
    await a.cerrar()


async def _guardar(almacen: Almacen, registro: dict) -> list:
    nuevo = ItemNuevo.de_registro(registro, "revision", registro["motivo"], ["C06"])
    return await almacen.guardar_item(nuevo, time.time())


def _sku() -> str:
    return f"T-{uuid.uuid4().hex[:10]}"


async def test_un_item_por_event_id(almacen):
    registro = ficha_en_revision(_sku())
    await _guardar(almacen, registro)
    await _guardar(almacen, registro)  # redelivery
    assert [i.event_id for i in await almacen.abiertos()].count(registro["event_id"]) == 1


async def test_una_decision_por_item_aunque_compitan(almacen, dsn, tmp_path):
    registro = ficha_en_revision(_sku())
    await _guardar(almacen, registro)
    item = await almacen.item(registro["event_id"])
    ganadores = []
    otro = await Almacen.abrir(dsn, tmp_path)  # a second replica: its own connections

    async def decidir(revisor: str, donde: Almacen) -> None:
        ahora = time.time()
        cierre = Cierre(
            "aprobada",
            [],
            revisor,
            ahora,
            dec.decision_de(item, "aprobada", revisor, ahora),
            dec.publicacion(item, registro["ficha"], revisor, False, ahora, "m"),
        )
        if await donde.decidir(item, cierre) is not None:
            ganadores.append(revisor)

    try:
        await asyncio.gather(*(decidir(f"r{i}", almacen if i % 2 else otro) for i in range(8)))
    finally:
        await otro.cerrar()
    assert len(ganadores) == 1
    assert (await almacen.item(item.event_id)).estado == DECIDIDA
    (pendiente,) = [d for d in await almacen.pendientes() if d.event_id == item.event_id]
    assert pendiente.publicacion["revision"]["revisor"] == ganadores[0]
    await almacen.marcar_enviada(item.event_id)
    assert not [d for d in await almacen.pendientes() if d.event_id == item.event_id]


async def test_version_nueva_cierra_la_vieja_y_una_vieja_llega_cerrada(almacen):
    sku = _sku()
    v2, v1, v3 = (ficha_en_revision(sku, v) for v in (2, 1, 3))
    await _guardar(almacen, v2)
    cerradas = await _guardar(almacen, v1)  # arrives late: closed at once
    assert [d.event_id for d in cerradas] == [v1["event_id"]]
    assert (await almacen.item(v1["event_id"])).estado == OBSOLETA
    assert (await almacen.item(v2["event_id"])).estado == ABIERTA
    cerradas = await almacen.observar_version(sku, 3, time.time())  # published by the loop
    assert [d.event_id for d in cerradas] == [v2["event_id"]]
    assert cerradas[0].registro["decision"] == "obsoleta"
    assert cerradas[0].registro["revisor"] == "sistema"
    assert await almacen.version_vista(sku) == 3
    await _guardar(almacen, v3)
    assert (await almacen.item(v3["event_id"])).estado == ABIERTA


def test_campos_nuevos_del_contrato_se_ignoran_al_consumir():
    import json

    from infra.config import Settings
    from revision.almacen.flujo import item_de_registro

    settings = Settings()
    registro = ficha_en_revision(_sku())
    registro["campo_de_una_version_futura"] = {"x": 1}
    datos, tipo, motivo, criterios = item_de_registro(
        settings.topic_revision, json.dumps(registro).encode(), settings
    )
    assert (tipo, motivo, criterios) == ("revision", "rechazada", ["C06"])
    assert "campo_de_una_version_futura" not in datos
    assert datos["origen"]["cifras"] == {"peso_g": 280}


@pytest.mark.postgres
async def test_postgres_reconecta_tras_perder_la_conexion(postgres_dsn, tmp_path):
    import psycopg

    from revision.almacen.database import APPLICATION_NAME

    almacen = await Almacen.abrir(postgres_dsn, tmp_path)
    try:
        registro = ficha_en_revision(_sku())
        await _guardar(almacen, registro)
        with psycopg.connect(postgres_dsn, autocommit=True) as otra:
            terminados = otra.execute(  # every server process of the store's pool
                "select pg_terminate_backend(pid) from pg_stat_activity "
                "where application_name = %s and pid <> pg_backend_pid() "
                "and datname = current_database()",  # not another pytest-xdist worker's
                (APPLICATION_NAME,),
            ).fetchall()
        assert terminados and all(t for (t,) in terminados)
        for _ in range(3):  # the pool checks a connection before lending it: it reconnects
            try:
                assert await almacen.item(registro["event_id"]) is not None
                break
            except psycopg.OperationalError:
                continue
        else:
            pytest.fail("the store never reconnected")
    finally:
        await almacen.cerrar()


async def test_veredictos_de_muestra_y_retenidas_para_la_puerta(almacen):
    """What the online bound is rebuilt from (in decision order) and what recall is read from."""
    from harness.revisor import muestra_publicada, puerta_aplicada

    muestras = [muestra_publicada(_sku(), puerta=puerta_aplicada()) for _ in range(3)]
    for m in muestras:
        await almacen.guardar_item(ItemNuevo.de_registro(m, "muestra", "muestra", []), time.time())
    retenida = ficha_en_revision(_sku(), motivo="sin_garantia")
    abierta = ficha_en_revision(_sku(), motivo="sin_garantia")
    await _guardar(almacen, retenida)
    await _guardar(almacen, abierta)
    for m, veredicto in zip(muestras[::-1], ["incorrecta", "correcta", "obsoleta"], strict=True):
        item = await almacen.item(m["event_id"])
        ahora = time.time()
        await almacen.decidir(
            item,
            Cierre(
                veredicto, [], "ana", ahora, dec.decision_de(item, veredicto, "ana", ahora), None
            ),
        )
    item = await almacen.item(retenida["event_id"])
    ahora = time.time()
    await almacen.decidir(
        item,
        Cierre("aprobada", [], "ana", ahora, dec.decision_de(item, "aprobada", "ana", ahora), None),
    )
    ids = {m["event_id"] for m in muestras}
    veredictos = [v for v in await almacen.veredictos_muestra() if v[0] in ids]
    assert [(e, d) for e, d, _ in veredictos] == [
        (muestras[2]["event_id"], "incorrecta"),
        (muestras[1]["event_id"], "correcta"),
    ]
    assert veredictos[0][2]["puerta"]["umbral"] == 0.8  # the stored record, gate included
    retenidas = {e: (f, d) for e, f, d in await almacen.retenidas()}
    assert retenidas[retenida["event_id"]] == ("zapatillas", "aprobada")
    assert retenidas[abierta["event_id"]] == ("zapatillas", None)
    assert muestras[0]["event_id"] not in retenidas
