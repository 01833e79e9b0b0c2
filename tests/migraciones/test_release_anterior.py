"""A database as the release before migrations left it: migrated, rows intact, and in use.

The fixture is built from that release's own DDL (copied below from ``stream/versiones.py`` and
``revision/almacen/cola.py`` at commit 03668cc, the last without migrations), with rows in every
table the project owns; LangGraph's checkpoint tables are made by the library's ``setup()``, as
that release did. Then ``fichas migrar`` runs; the rows must be there, unchanged, and a worker
and the review app must come up on the result and use them: the app counts the old open item
on ``/metrics``, and the worker finds the SKU's stored version newer than an event it receives
and reports that event obsolete. PostgreSQL and SQLite.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest

from harness import forkserver
from harness.basedatos import base_nueva
from harness.eventos import evento_json
from harness.procesos import REPO
from harness.revisor import RevisorProcess, ficha_en_revision, revisor_env
from harness.topicos import Topics, create_input_topic, produce
from harness.worker import WorkerProcess, worker_env
from infra.network import free_port
from revision.almacen.migrations import ESQUEMA as ESQUEMA_REVISION

REVISION = ESQUEMA_REVISION.ultima  # the review store's version after migrating

pytestmark = [pytest.mark.kafka]

SKU = "OLD-000001"
VERSION_GUARDADA = 7

# ------------------------------------------------------------------ DDL of the release before

VIEJO_POSTGRES_VERSIONES = (
    "create table if not exists fichas_versiones "
    "(sku text primary key, version bigint not null, "
    "actualizada_en timestamptz not null default now())",
    "create table if not exists fichas_resultados "
    "(event_id text primary key, sku text not null, version bigint not null, "
    "huella text not null, destino text not null, salida text not null, "
    "registrado_en timestamptz not null default now())",
    "create index if not exists fichas_resultados_sku on fichas_resultados (sku, version)",
    "create index if not exists fichas_resultados_edad on fichas_resultados (registrado_en)",
    "create index if not exists fichas_versiones_edad on fichas_versiones (actualizada_en)",
)
VIEJO_SQLITE_VERSIONES = (
    "create table if not exists versiones "
    "(sku text primary key, version integer not null, actualizada_en real not null default 0)",
    "create table if not exists resultados "
    "(event_id text primary key, sku text not null, version integer not null, "
    "huella text not null, destino text not null, salida text not null, "
    "registrado_en real not null)",
    "create index if not exists resultados_sku on resultados (sku, version)",
    "create index if not exists resultados_edad on resultados (registrado_en)",
    "create index if not exists versiones_edad on versiones (actualizada_en)",
)
VIEJO_REVISION = (
    """create table if not exists revision_items (
        event_id text primary key, tipo text not null, motivo text not null, sku text not null,
        version bigint not null, familia text not null, criterios text not null,
        datos text not null, recibido_en double precision not null, estado text not null,
        cerrado_en double precision
    )""",
    "create index if not exists revision_items_abiertos on revision_items (estado, recibido_en)",
    "create index if not exists revision_items_sku on revision_items (sku, estado)",
    """create table if not exists revision_decisiones (
        event_id text primary key, tipo text not null, decision text not null,
        familia text not null, criterios text not null, revisor text not null,
        decidida_en double precision not null, segundos double precision not null,
        registro text not null, publicacion text, enviada integer not null default 0
    )""",
    "create index if not exists revision_decisiones_pendientes on revision_decisiones (enviada)",
    "create table if not exists revision_skus (sku text primary key, version bigint not null)",
    "create table if not exists revision_usuarios (nombre text primary key, hash text not null)",
    """create table if not exists revision_sesiones (
        token text primary key, usuario text not null, csrf text not null,
        expira double precision not null
    )""",
)

# ------------------------------------------------------------------ rows

ITEM = ficha_en_revision("OLD-REV-1", 2)
SALIDA = json.dumps({"sku": SKU, "version": VERSION_GUARDADA}, separators=(",", ":"))


def _filas_revision() -> list[tuple[str, tuple[Any, ...]]]:
    """One open item, its SKU's version and a reviewer: rows every table of the app holds."""
    ahora = time.time()
    return [
        (
            "insert into revision_items values ({})".format(", ".join(["{}"] * 11)),
            (
                ITEM["event_id"],
                "revision",
                ITEM["motivo"],
                ITEM["sku"],
                ITEM["version"],
                ITEM["familia"],
                json.dumps(["C06"]),
                json.dumps(ITEM),
                ahora,
                "abierta",
                None,
            ),
        ),
        ("insert into revision_skus values ({}, {})", (ITEM["sku"], ITEM["version"])),
        ("insert into revision_usuarios values ({}, {})", ("ana", "$argon2id$viejo")),
    ]


def _sql(plantilla: str, marca: str) -> str:
    return plantilla.format(*([marca] * plantilla.count("{}")))


def _viejo_postgres(dsn: str) -> None:
    """The database the release before left, with rows (its checkpointer set up, as it did)."""
    from langgraph.checkpoint.postgres import PostgresSaver

    with psycopg.connect(dsn, autocommit=True) as conn:
        for sentencia in (*VIEJO_POSTGRES_VERSIONES, *VIEJO_REVISION):
            conn.execute(sentencia)
        conn.execute(
            "insert into fichas_versiones (sku, version) values (%s, %s)", (SKU, VERSION_GUARDADA)
        )
        conn.execute(
            "insert into fichas_resultados (event_id, sku, version, huella, destino, salida) "
            "values ('ev-viejo', %s, %s, 'h', 'fichas.publicadas', %s)",
            (SKU, VERSION_GUARDADA, SALIDA),
        )
        for plantilla, params in _filas_revision():
            conn.execute(_sql(plantilla, "%s"), params)
    with PostgresSaver.from_conn_string(dsn) as saver:
        saver.setup()


def _viejo_sqlite(data_dir: Path) -> None:
    """The data folder the release before left, with rows."""
    from langgraph.checkpoint.sqlite import SqliteSaver

    data_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(data_dir / "versiones.sqlite") as conn:
        for sentencia in VIEJO_SQLITE_VERSIONES:
            conn.execute(sentencia)
        conn.execute("insert into versiones values (?, ?, ?)", (SKU, VERSION_GUARDADA, time.time()))
        conn.execute(
            "insert into resultados values ('ev-viejo', ?, ?, 'h', 'fichas.publicadas', ?, ?)",
            (SKU, VERSION_GUARDADA, SALIDA, time.time()),
        )
    with sqlite3.connect(data_dir / "revision.sqlite") as conn:
        for sentencia in VIEJO_REVISION:
            conn.execute(sentencia)
        for plantilla, params in _filas_revision():
            conn.execute(_sql(plantilla, "?"), params)
    conn.close()
    with sqlite3.connect(data_dir / "checkpoints.sqlite", check_same_thread=False) as conn:
        SqliteSaver(conn).setup()
    conn.close()


# ------------------------------------------------------------------ reading it back


def _filas_postgres(dsn: str) -> dict[str, list[Any]]:
    with psycopg.connect(dsn) as conn:
        return {
            "versiones": conn.execute("select sku, version from fichas_versiones").fetchall(),
            "resultados": conn.execute(
                "select event_id, sku, version, salida from fichas_resultados"
            ).fetchall(),
            "items": conn.execute("select event_id, estado from revision_items").fetchall(),
            "usuarios": conn.execute("select nombre, hash from revision_usuarios").fetchall(),
        }


def _filas_sqlite(data_dir: Path) -> dict[str, list[Any]]:
    with (
        sqlite3.connect(data_dir / "versiones.sqlite") as v,
        sqlite3.connect(data_dir / "revision.sqlite") as r,
    ):
        filas = {
            "versiones": v.execute("select sku, version from fichas_versiones").fetchall(),
            "resultados": v.execute(
                "select event_id, sku, version, salida from fichas_resultados"
            ).fetchall(),
            "items": r.execute("select event_id, estado from revision_items").fetchall(),
            "usuarios": r.execute("select nombre, hash from revision_usuarios").fetchall(),
        }
    v.close()
    r.close()
    return filas


ESPERADAS = {
    "versiones": [(SKU, VERSION_GUARDADA)],
    "resultados": [("ev-viejo", SKU, VERSION_GUARDADA, SALIDA)],
    "items": [(ITEM["event_id"], "abierta")],
    "usuarios": [("ana", "$argon2id$viejo")],
}


def _migrar(env: dict[str, str]) -> str:
    """``fichas migrar`` as an operator runs it; its output."""
    hecho = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "migrar"],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert hecho.returncode == 0, hecho.stdout + hecho.stderr
    return hecho.stdout


async def _en_uso(kafka, fake_llm, tmp: Path, dsn: str | None, data_dir: Path) -> None:
    """A worker and the app on the migrated store: both ready, both reading the old rows."""
    topics = Topics()
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=1)
    extra = {"FICHAS_POSTGRES_DSN": dsn} if dsn else {}
    worker = WorkerProcess(
        worker_env(kafka, fake_llm, topics, data_dir, **extra), tmp / "worker.log"
    )
    app = RevisorProcess(
        revisor_env(
            kafka.bootstrap,
            {**topics.env(), "FICHAS_TOPIC_DECISIONES": f"{topics.prefix}.fichas.decisiones"},
            data_dir,
            **extra,
        ),
        free_port(),
        tmp / "revisor.log",
    )
    worker.start()
    app.start()
    try:
        await asyncio.to_thread(worker.wait_ready, 180)
        await asyncio.to_thread(app.wait_ready, 180)
        assert 'fichas_revision_queue_depth{kind="rechazada"} 1.0' in app.metrics()
        antigua = evento_json(SKU, VERSION_GUARDADA - 4).encode()
        await produce(kafka.bootstrap, topics.entrada, [(SKU.encode(), antigua)])
        limite = time.monotonic() + 120
        while worker.metric("fichas_events_total", result="obsoleto") < 1:
            assert time.monotonic() < limite, worker.log_tail()
            await asyncio.sleep(0.5)
    finally:
        app.stop()
        worker.terminate()


@pytest.mark.postgres
@pytest.mark.timeout(900)
async def test_postgres_de_la_version_anterior(kafka, fake_llm, postgres_dsn, tmp_path):
    with base_nueva(postgres_dsn, prefijo="fichas_anterior") as dsn:
        await asyncio.to_thread(_viejo_postgres, dsn)
        env = revisor_env(kafka.bootstrap, {}, tmp_path / "d", FICHAS_POSTGRES_DSN=dsn)
        salida = await asyncio.to_thread(_migrar, env)
        assert "versiones (postgres): schema version none -> 1 (migrated)" in salida
        assert f"revision (postgres): schema version none -> {REVISION} (migrated)" in salida
        assert "(up to date)" in salida.splitlines()[1]  # the checkpoints were current
        assert _filas_postgres(dsn) == ESPERADAS
        assert "-> 1 (up to date)" in await asyncio.to_thread(_migrar, env)  # idempotent
        await _en_uso(kafka, fake_llm, tmp_path, dsn, tmp_path / "d")
        assert _filas_postgres(dsn)["items"] == ESPERADAS["items"]


@pytest.mark.timeout(900)
async def test_sqlite_de_la_version_anterior(kafka, fake_llm, tmp_path):
    data_dir = tmp_path / "datos"
    await asyncio.to_thread(_viejo_sqlite, data_dir)
    env = revisor_env(kafka.bootstrap, {}, data_dir)
    salida = await asyncio.to_thread(_migrar, env)
    assert "versiones (sqlite): schema version none -> 1 (migrated)" in salida
    assert f"revision (sqlite): schema version none -> {REVISION} (migrated)" in salida
    assert _filas_sqlite(data_dir) == ESPERADAS
    await _en_uso(kafka, fake_llm, tmp_path, None, data_dir)
    assert _filas_sqlite(data_dir)["items"] == ESPERADAS["items"]
