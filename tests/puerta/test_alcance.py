"""The automatic opener's scope: which families, and whether the pooled gate."""

from __future__ import annotations

import pytest

from esquemas.constantes import FAMILIA_TODAS
from puerta.alcance import Alcance


def test_por_defecto_todo() -> None:
    alcance = Alcance.de_texto(None)
    assert alcance == Alcance() == Alcance.de_texto("  ")
    assert alcance.incluye("zapatillas") and alcance.incluye(FAMILIA_TODAS)
    assert alcance.describir() == "familias: todas; puerta conjunta: sí"


def test_una_lista_y_sin_conjunta() -> None:
    alcance = Alcance.de_texto(" zapatillas, camisetas ,", conjunta=False)
    assert alcance.familias == frozenset({"zapatillas", "camisetas"})
    assert alcance.incluye("camisetas") and not alcance.incluye("relojes")
    assert not alcance.incluye(FAMILIA_TODAS)
    assert alcance.describir() == (
        "familias: camisetas, zapatillas; puerta conjunta: no (--sin-puerta-conjunta)"
    )


@pytest.mark.parametrize("texto", [",", " , ,", "zapatillas,*"])
def test_listas_sin_sentido_se_rechazan(texto: str) -> None:
    with pytest.raises(ValueError):
        Alcance.de_texto(texto)
