"""revision.almacen.filas: every named row has the columns of its statement, in its order, so a
column added to a select without its name (or the other way round) fails here, not as a
shifted field in production."""

from __future__ import annotations

import re

import pytest

from harness.revisor import ficha_en_revision
from revision.almacen import evidencia, filas
from revision.almacen.item import id_item
from revision.certificador import publicacion


def _columnas(select: str) -> list[str]:
    """The column names of a select's list (``i.event_id`` -> ``event_id``)."""
    lista = re.match(r"select (.*?) from ", select, re.DOTALL)
    assert lista is not None, select
    return [c.strip().split(".")[-1] for c in lista.group(1).split(",")]


@pytest.mark.parametrize(
    ("fila", "select"),
    [
        (filas.FilaItem, filas.ITEM_SELECT),
        (filas.FilaDecision, f"select {filas.DECISION_COLUMNS} from x"),
        (evidencia._ColumnasSecuencia, evidencia.SQL_SECUENCIAS),
        (publicacion.ColumnasMuestra, publicacion.SQL_TRAS),
    ],
)
def test_cada_fila_nombra_las_columnas_de_su_sentencia(fila: type, select: str) -> None:
    assert list(fila._fields) == _columnas(select)


def test_item_nuevo_de_un_registro_y_de_una_candidata() -> None:
    registro = ficha_en_revision("T-1", version=3, familia="camisetas")
    vivo = filas.ItemNuevo.de_registro(registro, "revision", "rechazada", ["C06"])
    assert (vivo.event_id, vivo.sku, vivo.version, vivo.familia) == (
        registro["event_id"],
        "T-1",
        3,
        "camisetas",
    )
    assert vivo.datos is registro and not vivo.candidata
    propio = id_item(registro["event_id"], True, "k1")
    candidata = filas.ItemNuevo.de_registro(
        registro, "revision", "rechazada", [], event_id=propio, candidata=True
    )
    assert candidata.event_id == propio != registro["event_id"] and candidata.candidata
