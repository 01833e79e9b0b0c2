"""The version store's conformance: the same cases on SQLite and PostgreSQL (versions never
lowered, version 0 as none, the claim's compare-and-set, retention, a reopen), and the one
conversion of each statement on the hot path."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from esquemas.constantes import MAX_VERSION
from harness.basedatos import base_nueva
from migraciones import sqlite_sql
from versiones.almacen import open_version_store
from versiones.regla import Dictamen, ResultadoGuardado

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@asynccontextmanager
async def _abrir(
    dialecto: str, tmp_path: Path, request: pytest.FixtureRequest
) -> AsyncIterator[Any]:
    """An empty store of the dialect: a fresh data folder, or a brand-new PostgreSQL database
    (so that retention can delete everything without touching other tests' rows)."""
    if dialecto == "sqlite":
        async with open_version_store(None, tmp_path) as store:
            yield store
        return
    with base_nueva(request.getfixturevalue("postgres_dsn")) as dsn:
        async with open_version_store(dsn, tmp_path) as store:
            yield store


def _guardado(sku: str, version: int, event_id: str, huella: str = "h") -> ResultadoGuardado:
    salida = {"event_id": event_id, "sku": sku, "version": version, "intentos": 1}
    return ResultadoGuardado(event_id, sku, version, huella, "fichas.publicadas", salida)


@pytest.mark.parametrize("dialecto", STORES)
async def test_both_dialects_pass_the_same_cases(
    dialecto: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The conformance test of the version store: every case runs on SQLite and PostgreSQL."""
    async with _abrir(dialecto, tmp_path, request) as store:
        # versions are never lowered, per SKU
        assert await store.get("A") is None
        await store.record("A", 3)
        await store.record("A", 2)  # an older version redelivered late
        await store.record("B", 1)
        assert (await store.get("A"), await store.get("B")) == (3, 1)

        # version 0 means "nothing handled" on both dialects
        await store.record("CERO", 0)
        assert await store.get("CERO") is None
        assert (await store.claim(_guardado("CERO", 1, "cero-v1"))).dictamen is Dictamen.NUEVO
        assert await store.get("CERO") == 1

        # the claim is a compare-and-set per SKU and event_id
        primero = await store.claim(_guardado("S", 5, "s-v5"))
        assert primero.dictamen is Dictamen.NUEVO
        otra = ResultadoGuardado("s-v5", "S", 5, "h", "fichas.revision_manual", {"distinta": True})
        segundo = await store.claim(otra)  # another worker, a zombie: the stored outcome
        assert segundo.dictamen is Dictamen.REGISTRADO and segundo.guardado == primero.guardado
        assert (await store.claim(_guardado("S", 5, "s-v5", "otra"))).dictamen is (
            Dictamen.REUTILIZADO
        )
        assert (await store.claim(_guardado("S", 7, "s-v5"))).dictamen is Dictamen.REUTILIZADO
        # v6 wins; v5 is superseded, and its record deleted
        assert (await store.claim(_guardado("S", 6, "s-v6"))).dictamen is Dictamen.NUEVO
        assert (await store.claim(_guardado("S", 5, "s-v5b"))).dictamen is Dictamen.OBSOLETO
        assert await store.result("s-v5") is None
        stored = await store.result("s-v6")
        assert stored is not None and stored.version == 6 and stored.salida["version"] == 6
        # a version above 2^31 fits the column
        maximo = await store.claim(_guardado("S", MAX_VERSION, "s-max"))
        assert maximo.dictamen is Dictamen.NUEVO and await store.get("S") == MAX_VERSION

        # a claim that records nothing leaves its SKU's row at 0 ("nothing handled")
        assert (await store.claim(_guardado("NADA", 1, "s-max"))).dictamen is (Dictamen.REUTILIZADO)
        assert await store.get("NADA") is None
        sizes = await store.sizes()
        assert sizes == {"fichas_versiones": 5, "fichas_resultados": 2}

        # retention: a year keeps everything; a limit past every record deletes every one,
        # the row at 0 included (it would otherwise stay forever)
        assert await store.prune(365 * 24 * 3600) == 0
        assert await store.prune(-60) == 7
        assert await store.sizes() == {"fichas_versiones": 0, "fichas_resultados": 0}


@pytest.mark.parametrize("dialecto", STORES)
async def test_records_survive_a_reopen(
    dialecto: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if dialecto == "postgres" else None
    sku = f"VER-{uuid.uuid4().hex[:8]}"
    async with open_version_store(dsn, tmp_path) as versions:
        await versions.record(sku, 5)
    async with open_version_store(dsn, tmp_path) as reopened:
        assert await reopened.get(sku) == 5


async def test_each_statement_is_converted_once(tmp_path: Path) -> None:
    """The worker's hot path on SQLite: after the first claims, a claim and the reads before
    it convert no statement again (``sqlite_sql``'s cache answers every one)."""
    async with open_version_store(None, tmp_path) as store:
        for n in range(3):  # every statement of get, result and claim seen once
            await store.get("CACHE")
            await store.result(f"cache-{n}")
            await store.claim(_guardado("CACHE", n + 1, f"cache-{n}"))
        antes = sqlite_sql.cache_info()
        for n in range(3, 53):
            await store.get("CACHE")
            await store.result(f"cache-{n}")
            await store.claim(_guardado("CACHE", n + 1, f"cache-{n}"))
        despues = sqlite_sql.cache_info()
    assert despues.misses == antes.misses
    assert despues.hits - antes.hits == 50 * 10  # 2 reads; begin, 6 claim statements, commit
    assert await _get_reabierto(tmp_path, "CACHE") == 53


async def _get_reabierto(data_dir: Path, sku: str) -> int | None:
    async with open_version_store(None, data_dir) as store:
        return await store.get(sku)
