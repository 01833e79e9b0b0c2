"""The app's queue reader (``revision.almacen.flujo``) reads the next contract version's records:
each one becomes an item, as ``Flujo.guardar`` stores it for the consumer; SQLite and PostgreSQL
(the ``dsn`` fixture of tests/revision/conftest.py). v1.6, docs/contrato.md, "Readers never fail
open"."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from esquemas import FichaEnRevision, FichaPublicada
from harness.estados_puerta import clave_fake
from harness.version_siguiente import completos, siguiente
from infra.config import Settings
from revision.almacen.cola import ABIERTA, Almacen
from revision.almacen.decisiones import criterios_a_ciegas
from revision.almacen.flujo import Flujo

CLAVE = clave_fake()


@pytest.fixture
async def flujo(dsn: str | None, tmp_path: Path):
    almacen = await Almacen.abrir(dsn, tmp_path)
    yield Flujo(Settings(), almacen)
    await almacen.cerrar()


def _valor(datos: dict[str, Any]) -> bytes:
    return json.dumps(datos).encode()


async def test_un_item_de_la_version_siguiente_entra_en_la_cola(flujo: Flujo) -> None:
    settings, sku = flujo.settings, f"T-{uuid.uuid4().hex[:10]}"
    registros = completos(CLAVE, sku=sku)
    revision = siguiente(FichaEnRevision, registros["FichaEnRevision"], {"motivo": "deriva"})
    assert await flujo.guardar(settings.topic_revision, _valor(revision)) == []
    item = await flujo.almacen.item(f"{sku}-v1")
    assert item is not None and item.estado == ABIERTA
    # v1.6: an item that is evidence is queued with the app's own code checks, never the
    # record's problems (they carry the judge's)
    assert (item.tipo, item.motivo) == ("revision", "deriva")
    assert item.criterios == criterios_a_ciegas(item.datos) != ["C04"]
    assert "campo_v1_7" not in json.dumps(item.datos)
    assert item.datos["clave"] == CLAVE.model_dump(mode="json")
    # Its key was read (the new field in it is null): evidence of that key's gate. A motivo
    # this version does not know is no proof the code checks passed: a failure at every λ.
    assert item.evidencia is not None and item.evidencia["clave"] == CLAVE.model_dump()
    assert item.evidencia["codigo_ok"] is False

    # A sampled publication of the next version, and a newer version on fichas.publicadas.
    muestra = siguiente(
        FichaPublicada, registros["FichaPublicada"], {"revision.decision": "aprobada_ciega"}
    ) | {"event_id": f"{sku}-m"}
    await flujo.guardar(settings.topic_muestra, _valor(muestra))
    sample = await flujo.almacen.item(f"{sku}-m")
    assert sample is not None and sample.tipo == "muestra"
    assert sample.datos["revision"]["decision"] == "aprobada_ciega"
    publicada = siguiente(FichaPublicada, registros["FichaPublicada"]) | {"version": 2}
    cerradas = await flujo.guardar(settings.topic_publicadas, _valor(publicada))
    # v1.6: v2 supersedes the review item; the sampled publication is never closed as
    # obsolete (its verdict is about what was published, docs/revision.md)
    assert {d.event_id for d in cerradas} == {f"{sku}-v1"}
    sample = await flujo.almacen.item(f"{sku}-m")
    assert sample is not None and sample.estado == ABIERTA


async def test_una_clave_que_no_conoce_no_es_evidencia_de_ninguna_puerta(flujo: Flujo) -> None:
    """A key with a non-null field this version does not know is another key: the item is
    queued for people, but counts for no gate (its key dropped to a smaller one would count
    for the gate of a loop that never wrote it)."""
    settings, sku = flujo.settings, f"T-{uuid.uuid4().hex[:10]}"
    revision = siguiente(
        FichaEnRevision, completos(CLAVE, sku=sku)["FichaEnRevision"], en_clave="adaptador-2"
    )
    await flujo.guardar(settings.topic_revision, _valor(revision))
    item = await flujo.almacen.item(f"{sku}-v1")
    assert item is not None and item.estado == ABIERTA and item.motivo == "sin_garantia"
    assert item.datos["clave"] is None and item.evidencia is None
