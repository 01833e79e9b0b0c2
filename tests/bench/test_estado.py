"""``python -m bench.estado`` on the session's broker, on SQLite and on PostgreSQL.

The smallest run that goes through every step: 2 SKUs, 2 versions each, so the worker handles
4 events and the tool prints its points at 0, 2 and 4 fichas. What it reports must be the
state it measures: every table it lists, and one version and one outcome per SKU once the
SKU has been handled (superseded outcomes go in the claim's transaction, ``versiones``). The
private database it creates on PostgreSQL is dropped afterwards. Sizes are never asserted.
"""

from __future__ import annotations

import json

import psycopg
import pytest

from bench.estado import PG_TABLES
from harness.kafka_broker import KafkaBroker
from tests.bench.conftest import ejecutar, salida

SKUS = 2
FICHAS = 4


def _estado_dbs(dsn: str) -> set[str]:
    """The databases ``bench.estado`` creates, on the server of ``dsn``."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        filas = conn.execute("select datname from pg_database where datname like 'estado_%'")
        return {f[0] for f in filas}


def _filas(tablas: dict[str, dict[str, int]], almacen: str, tabla: str) -> int:
    """Rows of one state table, as the tool names it for that store."""
    return tablas[tabla if almacen == "postgres" else f"versiones.sqlite:{tabla}"]["rows"]


@pytest.mark.kafka
@pytest.mark.parametrize(
    "almacen", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_estado_mide_cada_tabla_de_estado(
    almacen: str, kafka: KafkaBroker, request: pytest.FixtureRequest
) -> None:
    dsn = request.getfixturevalue("postgres_dsn") if almacen == "postgres" else None
    antes = _estado_dbs(dsn) if dsn else set()
    opciones = ["--postgres", dsn] if dsn else ["--sqlite"]
    proc = ejecutar(
        "bench.estado",
        *("--fichas", str(FICHAS), "--skus", str(SKUS), "--bootstrap", kafka.bootstrap),
        *opciones,
    )
    lineas = [json.loads(x) for x in salida(proc).splitlines()]
    puntos, (final,) = lineas[:-1], lineas[-1:]
    assert final["segundos"] > 0
    assert [p["fichas"] for p in puntos] == [0, 2, 4]
    for punto in puntos:
        tablas = punto["tablas"]
        if almacen == "postgres":
            assert set(tablas) == set(PG_TABLES)
            assert all(t["bytes"] > 0 and t["rows"] >= 0 for t in tablas.values()), tablas
        else:
            assert tablas["checkpoints.sqlite:bytes"] > 0 and tablas["versiones.sqlite:bytes"] > 0
        por_sku = 0 if punto["fichas"] == 0 else SKUS
        assert _filas(tablas, almacen, "fichas_versiones") == por_sku, tablas
        assert _filas(tablas, almacen, "fichas_resultados") == por_sku, tablas
    if dsn:
        assert _estado_dbs(dsn) <= antes
