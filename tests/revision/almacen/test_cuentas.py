"""revision.almacen.cuentas, the reviewers' accounts, without the app: sessions by their token's
hash, their endings, disabled reviewers, the shared secret, the migration that hashed the tokens;
and both stores on the one database the app opens. SQLite and PostgreSQL (the ``dsn`` fixture
of tests/revision/conftest.py)."""

from __future__ import annotations

import sqlite3
import time
import uuid
from pathlib import Path

import migraciones
from harness.revisor import ficha_en_revision
from revision.almacen.cola import ABIERTA, Almacen, ItemNuevo
from revision.almacen.cuentas import Cuentas
from revision.almacen.database import open_database
from revision.almacen.migrations import ESQUEMA


async def test_sesiones_por_hash_inactividad_un_login_y_baja(dsn: str | None, tmp_path: Path):
    """Sessions as the store keeps them: found by the token's hash, ended by 60 s idle (kept
    alive by use), by the reviewer's next login, and by ``dar_de_baja``."""
    cuentas = await Cuentas.abrir(dsn, tmp_path)
    try:
        usuario = f"u-{uuid.uuid4().hex[:8]}"
        h1, h2, h3 = (f"{usuario}-h{n}" for n in (1, 2, 3))  # token hashes, unique per run
        await cuentas.guardar_usuario(usuario, "$argon2id$x")
        t0 = time.time()
        await cuentas.abrir_sesion(h1, usuario, "c1", t0, t0 + 1000)
        assert await cuentas.sesion(h1, t0 + 50, 60) == (usuario, "c1")
        assert await cuentas.sesion(h1, t0 + 100, 60) == (usuario, "c1")  # 50 s since use
        assert await cuentas.sesion(h1, t0 + 161, 60) is None  # 61 s idle
        assert await cuentas.sesion("otro-hash", t0, 60) is None
        await cuentas.abrir_sesion(h2, usuario, "c2", t0, t0 + 1000)
        await cuentas.abrir_sesion(h3, usuario, "c3", t0, t0 + 1000)
        assert await cuentas.sesion(h2, t0, 60) is None  # the new login ended it
        assert await cuentas.sesion(h3, t0 + 1001, 10_000) is None  # past its expiry
        assert await cuentas.dar_de_baja(usuario)
        assert await cuentas.sesion(h3, t0, 60) is None
        assert await cuentas.hash_de(usuario) is None
        assert not await cuentas.dar_de_baja(f"nadie-{usuario}")
        await cuentas.guardar_usuario(usuario, "$argon2id$y")  # added again: enabled
        assert await cuentas.hash_de(usuario) == "$argon2id$y"
    finally:
        await cuentas.cerrar()


async def test_una_clave_nueva_cierra_las_sesiones_y_logout_la_suya(
    dsn: str | None, tmp_path: Path
):
    cuentas = await Cuentas.abrir(dsn, tmp_path)
    try:
        usuario = f"u-{uuid.uuid4().hex[:8]}"
        h1, h2 = f"{usuario}-h1", f"{usuario}-h2"  # token hashes, unique per run
        await cuentas.guardar_usuario(usuario, "$argon2id$x")
        t0 = time.time()
        await cuentas.abrir_sesion(h1, usuario, "c1", t0, t0 + 1000)
        await cuentas.guardar_usuario(usuario, "$argon2id$nueva")  # a password change
        assert await cuentas.sesion(h1, t0, 60) is None
        await cuentas.abrir_sesion(h2, usuario, "c2", t0, t0 + 1000)
        await cuentas.cerrar_sesion(h2)
        assert await cuentas.sesion(h2, t0, 60) is None
    finally:
        await cuentas.cerrar()


async def test_el_secreto_es_el_mismo_para_todos_los_procesos(dsn: str | None, tmp_path: Path):
    """Made once, at random, and read back by a second process on the same database."""
    nombre = f"prueba-{uuid.uuid4().hex[:8]}"
    una = await Cuentas.abrir(dsn, tmp_path)
    otra = await Cuentas.abrir(dsn, tmp_path)
    try:
        secreto = await una.secreto(nombre)
        assert len(secreto) == 32
        assert await otra.secreto(nombre) == secreto == await una.secreto(nombre)
        assert await una.secreto(nombre + "-otro") != secreto
    finally:
        await una.cerrar()
        await otra.cerrar()


async def test_las_dos_tiendas_en_la_base_que_abre_la_app(dsn: str | None, tmp_path: Path):
    """The app opens one database and gives it to both stores (``revision.web.app.servir``): each
    writes its own tables in it and reads back what it wrote."""
    database = await open_database(dsn, tmp_path)
    try:
        almacen, cuentas = Almacen(database), Cuentas(database)
        usuario = f"u-{uuid.uuid4().hex[:8]}"
        h1 = f"{usuario}-h1"  # a token hash, unique per run
        await cuentas.guardar_usuario(usuario, "$argon2id$x")
        registro = ficha_en_revision(f"T-{uuid.uuid4().hex[:10]}")
        await almacen.guardar_item(
            ItemNuevo.de_registro(registro, "revision", registro["motivo"], ["C06"]), time.time()
        )
        t0 = time.time()
        await cuentas.abrir_sesion(h1, usuario, "c1", t0, t0 + 1000)
        assert await cuentas.sesion(h1, t0, 60) == (usuario, "c1")
        item = await almacen.item(registro["event_id"])
        assert item is not None and item.estado == ABIERTA
    finally:
        await database.close()


async def test_la_migracion_2_no_deja_tokens_en_claro(tmp_path: Path):
    """A database at migration 1 with a live session (its token in plain text) and a
    reviewer: after migrating, the session is gone and the reviewer is there, enabled."""
    conn = sqlite3.connect(tmp_path / "revision.sqlite", isolation_level=None)
    anterior = migraciones.Esquema(ESQUEMA.nombre, ESQUEMA.tabla, ESQUEMA.migraciones[:2])
    migraciones.migrar_sqlite(conn, anterior)
    conn.execute("insert into revision_usuarios (nombre, hash) values ('ana', '$argon2id$x')")
    conn.execute("insert into revision_sesiones values ('token-en-claro', 'ana', 'c', 9e12)")
    conn.close()
    cuentas = await Cuentas.abrir(None, tmp_path)
    try:
        assert await cuentas.hash_de("ana") == "$argon2id$x"
    finally:
        await cuentas.cerrar()
    with sqlite3.connect(tmp_path / "revision.sqlite") as conn:
        filas = conn.execute("select * from revision_sesiones").fetchall()
    conn.close()
    assert filas == []
