"""revision.web.diferencias: the word diff the item page shows."""

from __future__ import annotations

from revision.web.diferencias import diferencias


def test_diff_marca_lo_que_el_proveedor_no_dice():
    segmentos = diferencias("RUNNER X2 black mesh sneaker", "Zapatilla RUNNER X2 <b>negra</b>")
    marcados = "".join(t for t, nuevo in segmentos if nuevo)
    assert "Zapatilla" in marcados and "negra" in marcados and "RUNNER" not in marcados
    assert "".join(t for t, _ in segmentos) == "Zapatilla RUNNER X2 <b>negra</b>"


def test_diff_sin_origen_marca_cada_palabra_y_con_el_mismo_texto_ninguna():
    # Only words are marked: the space between two new words is not.
    nuevas = [("Zapatilla", True), (" ", False), ("negra", True)]
    assert diferencias("", "Zapatilla negra") == nuevas
    assert diferencias("zapatilla NEGRA", "Zapatilla negra") == [("Zapatilla negra", False)]
