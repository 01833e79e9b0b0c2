"""The version store on both backends: versions never lowered, outcome records compare-and-set."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from esquemas import EventoCambio
from esquemas.constantes import MAX_VERSION
from harness.eventos import evento_dict
from stream.versiones import Dictamen, ResultadoGuardado, huella, open_version_store

STORES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


@pytest.mark.parametrize("store", STORES)
async def test_record_keeps_the_maximum_and_survives_a_reopen(
    store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if store == "postgres" else None
    sku, otro = f"VER-{uuid.uuid4().hex[:8]}", f"VER-{uuid.uuid4().hex[:8]}"
    async with open_version_store(dsn, tmp_path) as versions:
        assert await versions.get(sku) is None
        await versions.record(sku, 3)
        await versions.record(sku, 2)  # an older version redelivered late
        await versions.record(otro, 1)
        assert await versions.get(sku) == 3
        await versions.record(sku, 5)
    async with open_version_store(dsn, tmp_path) as reopened:
        assert await reopened.get(sku) == 5
        assert await reopened.get(otro) == 1


def _guardado(sku: str, version: int, event_id: str, huella: str = "h") -> ResultadoGuardado:
    salida = {"event_id": event_id, "sku": sku, "version": version, "intentos": 1}
    return ResultadoGuardado(event_id, sku, version, huella, "fichas.publicadas", salida)


@pytest.mark.parametrize("store", STORES)
async def test_reclamar_is_a_compare_and_set_per_sku_and_event_id(
    store: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if store == "postgres" else None
    sku = f"REC-{uuid.uuid4().hex[:8]}"
    e5, e6 = f"{sku}-v5", f"{sku}-v6"
    async with open_version_store(dsn, tmp_path) as store_:
        primero = await store_.reclamar(_guardado(sku, 5, e5))
        assert primero.dictamen is Dictamen.NUEVO
        # a second run of the same event (another worker, a zombie) gets the stored outcome
        otra = ResultadoGuardado(e5, sku, 5, "h", "fichas.revision_manual", {"distinta": True})
        segundo = await store_.reclamar(otra)
        assert segundo.dictamen is Dictamen.REGISTRADO
        assert segundo.guardado == primero.guardado
        # the same event_id with other content or version is refused
        assert (await store_.reclamar(_guardado(sku, 5, e5, "otra"))).dictamen is (
            Dictamen.REUTILIZADO
        )
        assert (await store_.reclamar(_guardado(sku, 7, e5))).dictamen is Dictamen.REUTILIZADO
        # v6 wins; v5 is now superseded, and its record deleted (bounded by superseded version)
        assert (await store_.reclamar(_guardado(sku, 6, e6))).dictamen is Dictamen.NUEVO
        assert (await store_.reclamar(_guardado(sku, 5, f"{sku}-v5b"))).dictamen is (
            Dictamen.OBSOLETO
        )
        assert await store_.resultado(e5) is None
        stored = await store_.resultado(e6)
        assert stored is not None and stored.version == 6 and stored.salida["version"] == 6
        assert await store_.get(sku) == 6
        # a version above 2^31 fits the column (bigint)
        assert (await store_.reclamar(_guardado(sku, MAX_VERSION, f"{sku}-max"))).dictamen is (
            Dictamen.NUEVO
        )
        assert await store_.get(sku) == MAX_VERSION
        # retention: a year keeps everything just written; 0 s deletes it (the PostgreSQL
        # database is shared with other tests, so only the harmless case runs there)
        await store_.podar(365 * 24 * 3600)
        assert await store_.get(sku) == MAX_VERSION
        if store == "sqlite":
            assert await store_.podar(0) == 2
            assert await store_.resultado(f"{sku}-max") is None
            assert await store_.get(sku) is None


def test_huella_ignores_key_order() -> None:
    evento = EventoCambio.model_validate(evento_dict("HUE-1", 1))
    reordered = EventoCambio.model_validate(dict(reversed(evento.model_dump(mode="json").items())))
    assert huella(evento) == huella(reordered)
    changed = evento.model_copy(update={"proveedor": "Otro SL"})
    assert huella(changed) != huella(evento)
