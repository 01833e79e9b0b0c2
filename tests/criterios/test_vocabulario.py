"""The house vocabulary: supplier keys and values in es/en/pt/fr mapped to the house's Spanish.

The expected house values are written here, not read from the data file, so a wrong or
missing alias in ``criterios/datos/vocabulario_v1.json`` fails a case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from criterios.vocabulario import (
    clave_de_casa,
    mapear_atributos,
    mapear_origen,
    mapear_valor,
)
from herramientas.evaluar.casos import origen_de_caso, valor_comparable

CASOS = Path(__file__).parents[2] / "ejemplos" / "evaluacion" / "casos.jsonl"


@pytest.mark.parametrize(
    ("familia", "clave", "casa"),
    [
        ("zapatillas", "cor", "color"),
        ("camisetas", "couleur", "color"),
        ("botellas", "colour", "color"),
        ("zapatillas", "tamanho", "talla"),
        ("zapatillas", "pointure", "talla"),
        ("camisetas", "taille", "talla"),
        ("zapatillas", "size", "talla"),
        ("zapatillas", "matière", "material"),
        ("botellas", "matériau", "material"),
        ("camisetas", "composição", "composicion"),
        ("camisetas", "gênero", "genero"),
        ("zapatillas", "gender", "genero"),
        ("camisetas", "genre", "genero"),
        ("botellas", "capacity", "capacidad_ml"),
        ("botellas", "contenance_ml", "capacidad_ml"),
        ("botellas", "capacidade", "capacidad_ml"),
        ("auriculares", "battery_h", "autonomia_h"),
        ("auriculares", "autonomie_h", "autonomia_h"),
        ("auriculares", "connectivité", "conectividad"),
        ("auriculares", "conectividade", "conectividad"),
        ("sartenes", "diâmetro_cm", "diametro_cm"),
        ("sartenes", "diameter_cm", "diametro_cm"),
        ("sartenes", "induction", "apta_induccion"),
        ("sartenes", "indução", "apta_induccion"),
        ("sartenes", "Diamètre cm", "diametro_cm"),
        ("auriculares", "Battery Life (h)", "autonomia_h"),
        ("zapatillas", "Color", "color"),
    ],
)
def test_claves_en_cuatro_idiomas(familia: str, clave: str, casa: str) -> None:
    assert clave_de_casa(clave, familia) == casa


def test_alias_de_una_familia_no_vale_en_otra() -> None:
    # "size_cm" of a frying pan is its diameter; of a shoe, nothing the house knows
    assert clave_de_casa("size_cm", "sartenes") == "diametro_cm"
    assert clave_de_casa("size_cm", "zapatillas") is None
    assert clave_de_casa("size", "sartenes") == "diametro_cm"
    assert clave_de_casa("size", "camisetas") == "talla"


@pytest.mark.parametrize(
    ("clave", "valor", "casa"),
    [
        ("color", "black", "negro"),
        ("color", "preto", "negro"),
        ("color", "noir", "negro"),
        ("color", "Bleu marine", "azul marino"),
        ("color", "écru", "crudo"),
        ("color", "amber", "ámbar"),
        ("color", "silver", "plata"),
        ("color", "roja", "rojo"),
        ("color", "verde militar", "verde militar"),  # already the house's: unchanged
        ("material", "stainless steel", "acero inoxidable"),
        ("material", "aço inox", "acero inoxidable"),
        ("material", "acier inoxydable", "acero inoxidable"),
        ("material", "couro sintético", "piel sintética"),
        ("material", "fonte d'aluminium", "aluminio fundido"),
        ("material", "forged aluminium", "aluminio forjado"),
        ("material", "cast iron", "hierro fundido"),
        ("material", "plastic (BPA-free)", "plástico sin BPA"),
        ("material", "vidro borossilicato", "vidrio de borosilicato"),
        ("material", "toile", "lona"),
        ("genero", "feminino", "mujer"),
        ("genero", "homme", "hombre"),
        ("genero", "enfant", "infantil"),
        ("genero", "masculino", "hombre"),
        ("apta_induccion", "yes", "sí"),
        ("apta_induccion", "oui", "sí"),
        ("apta_induccion", "sim", "sí"),
        ("apta_induccion", "non", "no"),
        ("talla", "G", "L"),
        ("talla", "10 ans", "10 años"),
        ("talla", "42", "42"),
        ("composicion", "100% algodão", "100% algodón"),
        ("composicion", "100% coton biologique", "100% algodón orgánico"),
        ("composicion", "100% lin", "100% lino"),
        ("composicion", "95% cotton, 5% elastane", "95% algodón, 5% elastano"),
    ],
)
def test_valores_en_cuatro_idiomas(clave: str, valor: str, casa: str) -> None:
    assert mapear_valor(clave, valor) == casa


@pytest.mark.parametrize(
    ("clave", "valor", "casa"),
    [
        ("capacidad_ml", "75 cl", "750"),
        ("capacidad_ml", "0,5 l", "500"),
        ("capacidad_ml", "1 l", "1000"),
        ("capacidad_ml", "750 ml", "750"),
        ("capacidad_ml", "350", "350"),  # a bare number is already in the key's unit
        ("diametro_cm", "11 pulgadas", "27,94"),
        ("diametro_cm", "28x28", "28"),
        ("diametro_cm", "28x30", "28x30"),  # not a square: not one diameter, as written
        ("diametro_cm", "280 mm", "28"),
        ("capacidad_ml", "2 kg", "2 kg"),  # another magnitude: as written, never guessed
        ("autonomia_h", "n/a", "no aplica"),
        ("autonomia_h", "1.200 min", "1.200 min"),  # ambiguous 1.200: as written
    ],
)
def test_unidades_de_la_clave(clave: str, valor: str, casa: str) -> None:
    assert mapear_valor(clave, valor) == casa


@pytest.mark.parametrize(
    ("valor"),
    ["algodón supima", "cotton supima", "azul petróleo", "Tritanio", "malla 3D"],
)
def test_valor_con_una_palabra_desconocida_se_queda_entero(valor: str) -> None:
    # "algodón supima" would be half translated; unknown words keep the supplier's value
    clave = "composicion" if "supima" in valor else "color"
    assert mapear_valor(clave, valor) == valor


def test_clave_desconocida_se_conserva_y_se_informa() -> None:
    atributos, desconocidas = mapear_atributos(
        {"cor": "preto", "tecnologia": "Boost", "colour": "black"}, "zapatillas"
    )
    assert atributos == {"color": "negro", "tecnologia": "Boost", "colour": "black"}
    # "colour" is a known alias, but "color" was already filled: kept as written, not reported
    assert desconocidas == ["tecnologia"]


def test_mapear_origen_no_toca_el_original_y_es_idempotente() -> None:
    origen: dict[str, Any] = {
        "familia": "botellas",
        "ficha_proveedor": {"titulo": "Bottle", "atributos": {"capacity": "75 cl"}},
        "cifras": {"capacidad_ml": 750},
    }
    mapeo = mapear_origen(origen)
    assert mapeo.origen["ficha_proveedor"]["atributos"] == {"capacidad_ml": "750"}
    assert origen["ficha_proveedor"]["atributos"] == {"capacity": "75 cl"}
    assert mapear_origen(mapeo.origen).origen == mapeo.origen
    assert mapeo.claves_desconocidas == ()


def test_los_80_origenes_del_conjunto_quedan_con_claves_de_la_casa() -> None:
    """Every supplier key of the labelled set is known, and where the origin gives a required
    attribute its mapped value is the reference's (reader's comparison: case, accents)."""
    distintos = []
    for linea in CASOS.read_text(encoding="utf-8").splitlines():
        caso = json.loads(linea)
        mapeo = mapear_origen(origen_de_caso(caso))
        assert mapeo.claves_desconocidas == (), caso["id"]
        atributos = mapeo.origen["ficha_proveedor"]["atributos"]
        for clave, valor in atributos.items():
            esperado = caso["referencia"]["atributos"].get(clave)
            if esperado is not None and valor_comparable(valor) != valor_comparable(esperado):
                distintos.append((caso["id"], clave, valor, esperado))
    # The references write these with more than the origin gives ("no aplica (con cable)",
    # "aluminio con revestimiento cerámico") or in other words ("cable de 3,5 mm")
    assert {(i, c) for i, c, _, _ in distintos} == {
        ("EV-AUR-03", "conectividad"),
        ("EV-AUR-10", "conectividad"),
        ("EV-AUR-10", "autonomia_h"),
        ("EV-AUR-14", "autonomia_h"),
        ("EV-SAR-04", "material"),
    }
