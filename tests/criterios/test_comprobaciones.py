"""The code checks C01, C02, C03, C05 and C07 on the hard cases, both ways."""

from __future__ import annotations

import copy
import unicodedata
from typing import Any

import pytest

from criterios import (
    CRITERIOS_EN_CODIGO,
    comprobar,
    comprobar_atributos,
    comprobar_cifras,
    comprobar_descripcion,
    comprobar_reglas_casa,
    comprobar_titulo,
    fallos,
)


def _origen(**cambios: Any) -> dict[str, Any]:
    """The contract's example event as an origin, with some fields replaced."""
    origen: dict[str, Any] = {
        "sku": "ZAP-000123",
        "familia": "zapatillas",
        "atributos_obligatorios": ["talla", "color", "material", "genero"],
        "ficha_proveedor": {
            "titulo": "RUNNER X2 black mesh sneaker men 42",
            "descripcion": "Lightweight running shoe, mesh upper, rubber sole. Weight 280 g.",
            "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
            "idioma": "en",
        },
        "cifras": {"peso_g": 280},
    }
    origen.update(cambios)
    return origen


def _ficha(**cambios: Any) -> dict[str, Any]:
    """A ficha that passes every code check against ``_origen()``."""
    ficha: dict[str, Any] = {
        "titulo": "Zapatilla de running Runner X2 de malla para hombre",
        "descripcion": (
            "Zapatilla de running ligera, con empeine de malla y suela de goma. Pesa 280 g."
        ),
        "atributos": {"color": "negro", "talla": "42", "material": "malla", "genero": "hombre"},
    }
    ficha.update(cambios)
    return ficha


def _proveedor(descripcion: str = "", **atributos: str) -> dict[str, Any]:
    """A supplier ficha with only the given description and attributes."""
    return {"titulo": "", "descripcion": descripcion, "atributos": atributos}


# --- comprobar and fallos --------------------------------------------------------------------


def test_ficha_buena_pasa_todas_las_comprobaciones() -> None:
    resultado = comprobar(_ficha(), _origen())
    assert list(resultado) == list(CRITERIOS_EN_CODIGO)
    assert all(r == {"ok": True, "detalle": ""} for r in resultado.values())
    assert fallos(resultado) == []


def test_ficha_mala_falla_con_detalles_cortos() -> None:
    # English (C08), a size the origin does not give (C09, C11), the title again (C10)
    texto = (
        "SALE 🔥 Delivery in 24 hours. Price 29,99 €. Visit www.tienda.es. Weighs 300 g. "
        "Lightweight running shoe for the city with a breathable upper and a rubber sole. "
    ) * 15
    ficha = _ficha(titulo=texto, descripcion=texto, atributos={"color": "", "talla": "43"})
    resultado = comprobar(ficha, _origen())
    assert [f["criterio"] for f in fallos(resultado)] == list(CRITERIOS_EN_CODIGO)
    for r in resultado.values():
        assert r["ok"] is False
        assert 0 < len(r["detalle"]) <= 200


def test_comprobar_no_modifica_sus_entradas() -> None:
    ficha, origen = _ficha(), _origen()
    antes = copy.deepcopy((ficha, origen))
    comprobar(ficha, origen)
    assert (ficha, origen) == antes


def test_fallos_solo_lista_los_fallidos_en_orden() -> None:
    comprobaciones = {
        "C01": {"ok": True, "detalle": ""},
        "C03": {"ok": False, "detalle": "faltan atributos"},
        "C07": {"ok": False, "detalle": ""},
    }
    assert fallos(comprobaciones) == [
        {"criterio": "C03", "detalle": "faltan atributos"},
        {"criterio": "C07", "detalle": "falla la comprobación"},
    ]


@pytest.mark.parametrize("ficha", [{}, {"titulo": None, "descripcion": None, "atributos": None}])
def test_ficha_mal_formada_falla_sin_lanzar(ficha: dict[str, Any]) -> None:
    resultado = comprobar(ficha, _origen())
    assert not resultado["C01"]["ok"]
    assert not resultado["C02"]["ok"]
    assert not resultado["C03"]["ok"]
    assert resultado["C05"]["ok"]
    assert resultado["C07"]["ok"]


# --- C01, C02: lengths in characters ---------------------------------------------------------

N_DESCOMPUESTA = unicodedata.normalize("NFD", "ñ")


@pytest.mark.parametrize(
    ("titulo", "ok"),
    [
        ("ñ" * 80, True),
        ("ñ" * 81, False),
        (N_DESCOMPUESTA * 80, True),  # 160 code points decomposed, 80 characters once composed
        ("a" * 80, True),
        ("a" * 81, False),
        ("€" * 80, True),  # 240 bytes in UTF-8
        ("", False),
        ("   \t ", False),
        ("Sartén", True),
    ],
)
def test_largo_del_titulo_en_caracteres(titulo: str, ok: bool) -> None:
    assert comprobar_titulo({"titulo": titulo})["ok"] is ok


def test_detalle_del_titulo_dice_el_largo() -> None:
    detalle = comprobar_titulo({"titulo": "ñ" * 81})["detalle"]
    assert "81" in detalle
    assert "80" in detalle


@pytest.mark.parametrize(
    ("descripcion", "ok"),
    [
        ("ñ" * 1200, True),
        ("ñ" * 1201, False),
        ("", False),
        ("\n\n", False),
        ("Botella de acero.", True),
    ],
)
def test_largo_de_la_descripcion_en_caracteres(descripcion: str, ok: bool) -> None:
    resultado = comprobar_descripcion({"descripcion": descripcion})
    assert resultado["ok"] is ok
    assert (resultado["detalle"] == "") is ok


# --- C03: required attributes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("atributos", "faltan"),
    [
        ({"talla": "42", "color": "negro", "material": "malla", "genero": "hombre"}, []),
        ({"talla": "42", "color": "negro", "material": "malla", "genero": "hombre", "x": ""}, []),
        ({"talla": "42", "color": "negro", "material": "malla"}, ["genero"]),
        (
            {"talla": " ", "color": "negro", "material": "", "genero": "hombre"},
            ["talla", "material"],
        ),
        ({}, ["talla", "color", "material", "genero"]),
    ],
)
def test_atributos_obligatorios(atributos: dict[str, str], faltan: list[str]) -> None:
    resultado = comprobar_atributos({"atributos": atributos}, _origen())
    assert resultado["ok"] is (not faltan)
    for nombre in faltan:
        assert nombre in resultado["detalle"]


def test_atributos_obligatorios_desde_la_tabla_de_familias() -> None:
    origen = _origen(familia="botellas")
    del origen["atributos_obligatorios"]
    ficha = {"atributos": {"capacidad_ml": "750", "material": "acero"}}
    resultado = comprobar_atributos(ficha, origen)
    assert not resultado["ok"]
    assert "color" in resultado["detalle"]


def test_familia_desconocida_falla_c03() -> None:
    origen = _origen(familia="neveras")
    del origen["atributos_obligatorios"]
    resultado = comprobar_atributos(_ficha(), origen)
    assert not resultado["ok"]
    assert "neveras" in resultado["detalle"]


# --- C05: house rules ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("texto", "subregla", "fragmento"),
    [
        # prices
        ("Su precio es de 29,99 €.", "precio", "29,99"),
        ("Solo 20 euros.", "precio", "20 euros"),
        ("Cuesta $15.", "precio", "$"),
        ("Por 30 USD.", "precio", "30 USD"),
        ("Now only 12 dollars.", "precio", "12 dollars"),
        ("Just 10 pounds.", "precio", "10 pounds"),
        ("Por 100 reales.", "precio", "100 reales"),
        ("PVP recomendado.", "precio", "PVP"),
        ("Price 19.99 today.", "precio", "Price 19.99"),
        # promotions
        ("¡En oferta esta semana!", "promoción", "oferta"),
        ("Con un 20% de descuento.", "promoción", "descuento"),
        ("Rebajas de verano.", "promoción", "Rebajas"),
        ("Promoción exclusiva.", "promoción", "Promoción"),
        ("Llévate 2x1.", "promoción", "2x1"),
        ("Funda gratis.", "promoción", "gratis"),
        ("Liquidación total.", "promoción", "Liquidación"),
        ("Now on sale.", "promoción", "on sale"),
        ("Big discount.", "promoción", "discount"),
        ("Special offer for members.", "promoción", "Special offer"),
        ("Best deal of the season.", "promoción", "Best deal"),
        ("Take 30% off.", "promoción", "30% off"),
        ("BIG SALE.", "promoción", "SALE"),
        ("Free shipping on this model.", "promoción", "Free shipping"),
        ("Comes with a free gift.", "promoción", "free gift"),
        # delivery times
        ("Entrega en 24 h.", "plazo de entrega", "Entrega en 24 h"),
        ("Envío en 48 horas.", "plazo de entrega", "Envío en 48 horas"),
        ("Si pides hoy, llega mañana.", "plazo de entrega", "llega mañana"),
        ("Next-day delivery available.", "plazo de entrega", "Next-day delivery"),
        ("Ships within 2 days.", "plazo de entrega", "Ships within 2 days"),
        ("Entrega en un plazo de 2 a 3 días laborables.", "plazo de entrega", "Entrega en un"),
        # shouting capitals
        ("Zapatilla SUPER ligera.", "mayúsculas", "SUPER"),
        ("Modelo RUNNER X2.", "mayúsculas", "RUNNER"),
        ("Sartén ANTIADHERENTE.", "mayúsculas", "ANTIADHERENTE"),
        # emojis
        ("Ligera 🔥", "emoji", "🔥"),
        ("Cómoda 😀", "emoji", "😀"),
        ("✔ Impermeable", "emoji", "✔"),
        ("Calidad ⭐", "emoji", "⭐"),
        ("Hecha en España 🇪🇸", "emoji", "🇪"),
        # URLs
        ("Más en https://tienda.com/zapatillas.", "URL", "https://tienda.com/zapatillas"),
        ("Visita www.marca.es.", "URL", "www.marca.es"),
        ("Disponible en tienda.com", "URL", "tienda.com"),
        ("Compra en shop.es hoy.", "URL", "shop.es"),
        # superlatives and calls to buy
        ("La más vendida de la temporada.", "superlativo o llamada a comprar", "más vendida"),
        ("Compra ya, quedan pocas unidades.", "superlativo o llamada a comprar", "Compra ya"),
        ("Best seller!", "superlativo o llamada a comprar", "Best seller"),
    ],
)
def test_reglas_casa_incumplidas(texto: str, subregla: str, fragmento: str) -> None:
    resultado = comprobar_reglas_casa(_ficha(descripcion=texto))
    assert not resultado["ok"]
    assert f"{subregla} en descripción" in resultado["detalle"]
    assert fragmento in resultado["detalle"]


@pytest.mark.parametrize(
    "texto",
    [
        "Camiseta 100% algodón.",
        "Botella libre de BPA.",
        "BPA-free bottle.",
        "Hands-free calls with the built-in microphone.",
        "Función manos libres.",
        "Impresión a tamaño real.",
        "Colores reales y vivos.",
        "El agua sale fácilmente por la boquilla.",
        "These headphones offer a secure fit.",
        "A great deal of comfort.",
        "Autonomía de 24 h.",
        "Up to 30 hours of battery.",
        "La batería llega hasta 30 horas de autonomía.",
        "Entrega 20 W de potencia.",
        "Conexión USB-C, HDMI y LED; sin BPA; NFC, AAC, LDAC y ANC.",
        "Resistente al agua IPX7.",
        "Talla XXXL.",
        "Conector de 3.5 mm, firmware v2.0 y batería de 1.200 mAh.",
        "Caracteres normales: ñ, º, °, ™, ®, ⌀ 28 cm.",
        "Precio y calidad no se mencionan aquí.",
        "Compatible con Bluetooth 5.3, p. ej. con móviles de EE.UU.",
        "Medidas 2x1 m.",
        "Tapete de 2x1.5 m.",
        "Sale de la caja lista para usar.",
    ],
)
def test_reglas_casa_permiten_texto_normal(texto: str) -> None:
    assert comprobar_reglas_casa(_ficha(descripcion=texto)) == {"ok": True, "detalle": ""}


@pytest.mark.parametrize(
    ("campo", "ficha"),
    [
        ("título", _ficha(titulo="Zapatilla 🔥")),
        ("atributo color", _ficha(atributos={"color": "NEGRO INTENSO"})),
        ("atributo material", _ficha(atributos={"material": "malla, ver tienda.com"})),
    ],
)
def test_reglas_casa_nombran_el_campo(campo: str, ficha: dict[str, Any]) -> None:
    resultado = comprobar_reglas_casa(ficha)
    assert not resultado["ok"]
    assert f"en {campo}:" in resultado["detalle"]


def test_marca_en_mayusculas_del_proveedor_no_grita() -> None:
    ficha = _ficha(titulo="Zapatilla ASICS Gel Nimbus")
    origen = _origen(ficha_proveedor=_proveedor(marca="ASICS"))
    assert comprobar_reglas_casa(ficha, origen)["ok"]
    assert not comprobar_reglas_casa(ficha)["ok"]


def test_mayusculas_del_titulo_del_proveedor_no_se_permiten() -> None:
    ficha = _ficha(titulo="Zapatilla RUNNER X2")
    assert not comprobar_reglas_casa(ficha, _origen())["ok"]


# --- C07: figures with a unit ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("texto", "proveedor", "cifras", "ok"),
    [
        ("Pesa 280 g.", _proveedor("Weight 280 g."), {}, True),
        ("Pesa 0,28 kg.", _proveedor("Weight 280 g."), {}, True),
        ("Pesa 0.28 kg.", _proveedor(), {"peso_g": 280}, True),
        ("Pesa 280 gramos.", _proveedor(), {"peso": "0,28 kg"}, True),
        ("Pesa 300 g.", _proveedor("Weight 280 g."), {"peso_g": 280}, False),
        ("Capacidad de 1,5 l.", _proveedor("Capacity 1500 ml."), {}, True),
        ("Capacidad de 1500 ml.", _proveedor("Capacity 1.5 L."), {}, True),
        ("Capacidad de 150 cl.", _proveedor(), {"capacidad_ml": 1500}, True),
        ("Capacidad de 2 l.", _proveedor("Capacity 1.5 L."), {}, False),
        ("Batería de 1.200 mAh.", _proveedor("Battery 1,200 mAh."), {}, True),
        ("Batería de 1200 mAh.", _proveedor("Batería de 1.200 mAh."), {}, True),
        ("Batería de 1.200 mAh.", _proveedor("Battery 1200mAh"), {}, True),
        ("Batería de 1.500 mAh.", _proveedor("Battery 1200mAh"), {}, False),
        ("Hasta 30 h de autonomía.", _proveedor("Up to 30 hours of playback."), {}, True),
        ("Hasta 1800 min de música.", _proveedor("Up to 30 hours."), {}, True),
        ("Hasta 40 h de autonomía.", _proveedor("Up to 30 hours of playback."), {}, False),
        ("Hasta 30 h.", _proveedor(), {"autonomia_h": "30"}, True),
        ("Hasta 30 h.", _proveedor(), {"autonomia": 30}, True),  # bare number fallback
        ("Hasta 30 h.", _proveedor(autonomia="30"), {}, True),  # bare attribute value
        ("Hasta 30 h.", _proveedor("Battery lasts 30, model X30."), {}, False),
        ("Sartén de 28 cm.", _proveedor(diametro_cm="28"), {}, True),
        ("Sartén de 280 mm.", _proveedor(diametro="28 cm"), {}, True),
        ("Sartén de 30 cm.", _proveedor(diametro="28 cm"), {}, False),
        ("Medidas 30 x 20 cm.", _proveedor("Size 30x20 cm"), {}, True),
        ("Medidas 30 x 25 cm.", _proveedor("Size 30x20 cm"), {}, False),
        ("Pack de 2 x 500 ml.", _proveedor("Pack of 2 bottles, 500 ml each."), {}, True),
        ("Pack de 2 x 750 ml.", _proveedor("Pack of 2 bottles, 500 ml each."), {}, False),
        ("Potencia de 20 W.", _proveedor("20W output"), {}, True),
        ("Carga en 2 h.", _proveedor("Charges in 120 minutes."), {}, True),
        ("Camiseta 100% algodón.", _proveedor(composicion="100% cotton"), {}, True),
        ("Camiseta 100% algodón.", _proveedor(composicion="cotton"), {}, False),
        ("Pantalla de 6,1 pulgadas.", _proveedor("6.1 inch display"), {}, True),
        ("Apta hasta 250 °C.", _proveedor("Oven safe to 250ºC"), {}, True),
        ("Apta hasta 260 °C.", _proveedor("Oven safe to 250ºC"), {}, False),
        ("Mismo peso en otra magnitud: 280 ml.", _proveedor("Weight 280 g."), {}, False),
        ("Talla 42, modelo X2, IPX7, Bluetooth 5.3.", _proveedor(), {}, True),
        ("Conectividad 5G.", _proveedor(), {}, True),
        ("Sin cifras.", _proveedor(), {}, True),
    ],
)
def test_cifras_deben_estar_en_el_origen(
    texto: str, proveedor: dict[str, Any], cifras: dict[str, Any], ok: bool
) -> None:
    origen = _origen(ficha_proveedor=proveedor, cifras=cifras)
    resultado = comprobar_cifras(_ficha(descripcion=texto), origen)
    assert resultado["ok"] is ok, resultado["detalle"]


@pytest.mark.parametrize(
    ("atributos", "ok"),
    [
        ({"capacidad_ml": "750"}, True),
        ({"capacidad_ml": "0,75 l"}, True),
        ({"capacidad": "750 ml"}, True),
        ({"capacidad_ml": "1000"}, False),
        ({"autonomia_h": "30"}, False),
        ({"peso_g": "280"}, False),
        ({"color": "azul", "material": "acero"}, True),
    ],
)
def test_cifras_de_atributos_usan_el_sufijo_de_la_clave(
    atributos: dict[str, str], ok: bool
) -> None:
    origen = _origen(ficha_proveedor=_proveedor("Steel bottle, 750 ml."), cifras={})
    resultado = comprobar_cifras(_ficha(descripcion="Botella.", atributos=atributos), origen)
    assert resultado["ok"] is ok, resultado["detalle"]


def test_detalle_de_cifras_cita_la_cifra_y_el_campo() -> None:
    ficha = _ficha(titulo="Zapatilla de 0,3 kg", atributos={"autonomia_h": "30"})
    detalle = comprobar_cifras(ficha, _origen())["detalle"]
    assert "«0,3 kg» (título)" in detalle
    assert "atributo autonomia_h" in detalle


def test_cifras_del_titulo_del_proveedor_cuentan() -> None:
    origen = _origen(ficha_proveedor={"titulo": "Bottle 750 ml", "descripcion": ""}, cifras={})
    assert comprobar_cifras(_ficha(descripcion="Botella de 0,75 l."), origen)["ok"]


def test_un_origen_ya_mapeado_da_el_mismo_resultado() -> None:
    """The graph maps the origin once per evaluation and passes it on (issue 33): every
    labelled ficha gets the same checks with the origin mapped by the caller as without."""
    import json
    from pathlib import Path

    from criterios import mapear_origen
    from herramientas.evaluar.casos import origen_de_caso

    casos = Path(__file__).parents[2] / "ejemplos" / "evaluacion" / "casos.jsonl"
    comparadas = 0
    for linea in casos.read_text(encoding="utf-8").splitlines():
        caso = json.loads(linea)
        origen = origen_de_caso(caso)
        mapeado = mapear_origen(origen).origen
        for ficha in [caso["referencia"], *(c["ficha"] for c in caso["candidatas"])]:
            assert comprobar(ficha, origen, mapeado) == comprobar(ficha, origen), caso["id"]
            comparadas += 1
    assert comparadas > 200
