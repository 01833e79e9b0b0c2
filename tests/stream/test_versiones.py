"""The per-SKU version record, on both stores: never lowered, and kept across a reopen."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from stream.versiones import open_version_store

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
