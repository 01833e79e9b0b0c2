"""The code checks as rules: one case per promotion word, per unit, per threshold.

Each case is written so that it fails if its rule is removed or weakened: a promotion phrase
is matched by exactly one alternative and the test asserts the exact fragment; every unit
spelling is checked against its physical factor written here, independently of the table;
figures that are off by a little or by a factor of ten must fail C07.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from criterios import comprobar_cifras, comprobar_reglas_casa, reglas_casa
from criterios.cifras import UNIDADES, cifras_en_texto

# -- C05: every promotion word -----------------------------------------------------------------

# (phrase, the exact fragment ``promociones`` must return)
PROMOCIONES = [
    ("Oferta de temporada", "Oferta"),
    ("Un ofertón", "ofertón"),
    ("Con descuento", "descuento"),
    ("Llegan las rebajas", "rebajas"),
    ("Artículo rebajado", "rebajado"),
    ("En promoción", "promoción"),
    ("Ver promociones", "promociones"),
    ("Use promo code", "promo code"),
    ("Promo de verano", "Promo"),
    ("Liquidación total", "Liquidación"),
    ("Modelo outlet", "outlet"),
    ("Un chollo", "chollo"),
    ("Es una ganga", "ganga"),
    ("Funda gratis", "gratis"),
    ("Usa el cupón", "cupón"),
    ("Con código promocional", "código promocional"),
    ("Especial black friday", "black friday"),
    ("Llega el Cyber Monday", "Cyber Monday"),
    ("Últimas unidades", "Últimas unidades"),
    ("Hasta agotar existencias", "Hasta agotar existencias"),
    ("Solo por tiempo limitado", "por tiempo limitado"),
    ("Con envío gratuito", "envío gratuito"),
    ("Al mejor precio", "mejor precio"),
    ("Precio especial", "Precio especial"),
    ("Discounted item", "Discounted"),
    ("Clearance item", "Clearance"),
    ("Apply coupon", "coupon"),
    ("Limited time", "Limited time"),
    ("BOGO", "BOGO"),
    ("Buy one get one", "Buy one get one"),
    ("While stocks last", "While stocks last"),
    ("Now on sale", "on sale"),
    ("Sale price", "Sale price"),
    ("Special offer", "Special offer"),
    ("Offer ends soon", "Offer ends"),
    ("Best deal", "Best deal"),
    ("Great deal", "Great deal"),
    ("Deal of the day", "Deal of the day"),
    ("Free shipping", "Free shipping"),
    ("Yours for free", "for free"),
    ("Free of charge", "Free of charge"),
]


def _alternativas_de_palabras() -> list[str]:
    """Top-level alternatives of the word group of PROMOTION_RE, read from its source."""
    fuente = reglas_casa.PROMOTION_RE.pattern
    inicio = fuente.index(r"\b(?:") + len(r"\b(?:")
    profundidad, actual, alternativas = 0, "", []
    for i, c in enumerate(fuente[inicio:], start=inicio):
        escapado = i > 0 and fuente[i - 1] == "\\"
        if c == "(" and not escapado:
            profundidad += 1
        elif c == ")" and not escapado:
            if profundidad == 0:
                break
            profundidad -= 1
        if c == "|" and profundidad == 0 and not escapado:
            alternativas.append(actual)
            actual = ""
            continue
        actual += c
    alternativas.append(actual)
    return [re.sub(r"\s+", "", a) for a in alternativas if a.strip()]


@pytest.mark.parametrize(("frase", "fragmento"), PROMOCIONES)
def test_cada_palabra_de_promocion(frase: str, fragmento: str) -> None:
    assert reglas_casa.promociones(frase) == [fragmento]
    assert not comprobar_reglas_casa({"titulo": frase, "descripcion": "x", "atributos": {}})["ok"]


def test_cada_alternativa_de_promocion_tiene_su_caso() -> None:
    """Adding a word to PROMOTION_RE without a case here fails; so does a case that another
    alternative would catch just the same (removing its own could then go unnoticed)."""
    alternativas = _alternativas_de_palabras()
    assert len(alternativas) == 41
    for alternativa in alternativas:
        patron = re.compile(rf"(?:{alternativa})", re.IGNORECASE | re.VERBOSE)
        casos = [f for _, f in PROMOCIONES if patron.fullmatch(f)]
        assert casos, f"sin caso: {alternativa}"
    assert len(PROMOCIONES) == len(alternativas)


@pytest.mark.parametrize(
    ("frase", "fragmentos"),
    [
        ("2x1 en camisetas", ["2x1"]),
        ("Llévate 3 x 2", ["3 x 2"]),
        ("Hoy 20% off", ["20% off"]),
        ("Un 15 % dto", ["15 % dto"]),
        ("BIG SALE", ["SALE"]),
        ("Camiseta fucsia -30%", ["-30%"]),
        ("Ahora - 15 % en todo", ["- 15 %"]),
    ],
)
def test_otras_formas_de_promocion(frase: str, fragmentos: list[str]) -> None:
    assert reglas_casa.promociones(frase) == fragmentos


@pytest.mark.parametrize(
    "frase",
    [
        "La suela sale por detrás",  # Spanish verb, lower case
        "Camiseta 100% algodón",
        "Botella libre de BPA, BPA-free",
        "Medidas 2 x 1 cm",
        "Sartén de 28 x 28 cm",
        "We offer two sizes",
        "Tejido de punto de algodón",
        "Funciona de -20 °C a 40 °C",
        "Mezcla 95%-5% algodón y elastano",
    ],
)
def test_casi_promociones_no_lo_son(frase: str) -> None:
    assert reglas_casa.promociones(frase) == []
    assert reglas_casa.urls(frase) == []


# -- C05: every superlative and call to buy ------------------------------------------------------

# (phrase, the exact fragment ``superlativos`` must return); each phrase is matched by exactly
# one alternative of SUPERLATIVOS, so removing or weakening that alternative fails its case.
SUPERLATIVOS = [
    ("La más vendida de la temporada.", "más vendida"),
    ("Un superventas del verano.", "superventas"),
    ("Auriculares top ventas", "top ventas"),
    ("Es la zapatilla más ligera del mercado.", "más ligera del mercado"),
    ("Mejor agarre de todo el mundo.", "Mejor agarre de todo el mundo"),
    ("Te hará saltar más alto que nunca.", "más alto que nunca"),
    ("Suena como nunca.", "como nunca"),
    ("Un diseño nunca visto.", "nunca visto"),
    ("La camiseta más suave que hayas probado.", "que hayas probado"),
    ("Ligera y cálida. La mejor primera capa para la montaña.", "La mejor"),
    ("Los mejores auriculares para correr", "Los mejores"),
    ("Esta sartén es la mejor para inducción.", "es la mejor"),
    ("Una de las mejores botellas.", "Una de las mejores"),
    ("Ofrece la mejor sujeción.", "Ofrece la mejor"),
    ("Tu mejor aliada en la cocina.", "Tu mejor aliada"),
    ("Con mejor relación calidad-precio.", "relación calidad-precio"),
    ("La elección número uno de los chefs.", "número uno"),
    ("Nº 1 en ventas.", "Nº 1 en ventas"),
    ("Botella #1 en ventas", "#1 en"),
    ("La favorita de los profesionales.", "favorita de los profesionales"),
    ("Un agarre sin igual.", "sin igual"),
    ("Sonido de otro nivel.", "de otro nivel"),
    ("Increíble comodidad.", "Increíble"),
    ("Un diseño revolucionario.", "revolucionario"),
    ("Calidad insuperable.", "insuperable"),
    ("La compañera perfecta.", "perfecta"),
    ("Un clásico imprescindible.", "Un clásico imprescindible"),
    ("Imprescindible en tu armario.", "Imprescindible en tu"),
    ("Un diseño único.", "diseño único"),
    ("Única en su clase.", "Única en su clase"),
    ("La única sartén que necesitarás.", "La única sartén que necesitarás"),
    ("Es la sartén definitiva.", "la sartén definitiva"),
    ("Durará toda la vida.", "Durará toda la vida"),
    ("Juega como un auténtico campeón.", "como un auténtico campeón"),
    ("Sin duda, muy cómoda.", "Sin duda"),
    ("Un estampado que enamora.", "que enamora"),
    ("Te encantará su tacto.", "Te encantará"),
    ("Te dejará sin palabras.", "Te dejará sin palabras"),
    ("No querrás quitártela.", "No querrás"),
    ("Compra ya.", "Compra ya"),
    ("Cómprala hoy.", "Cómprala hoy"),
    ("Cómpralo.", "Cómpralo"),
    ("Pídela ya.", "Pídela ya"),
    ("Pídelo antes del domingo.", "Pídelo"),
    ("Hazte con la tuya.", "Hazte con"),
    ("Consíguela.", "Consíguela"),
    ("Llévate el tuyo.", "Llévate el tuyo"),
    ("¡No te lo pierdas!", "No te lo pierdas"),
    ("No la dejes escapar.", "No la dejes escapar"),
    ("Date prisa.", "Date prisa"),
    ("¿A qué esperas?", "A qué esperas"),
    ("Añádelo al carrito.", "Añádelo al carrito"),
    ("Quedan pocas unidades.", "Quedan pocas unidades"),
    ("Corre, quedan pocas.", "quedan pocas"),
    ("Stock limitado.", "Stock limitado"),
    ("Solo quedan 3.", "Solo quedan"),
    ("Solo hoy.", "Solo hoy"),
    ("Best seller!", "Best seller"),
    ("Best-selling shoe.", "Best-selling"),
    ("The number one choice.", "number one"),
    ("The world's lightest pan.", "world's lightest"),
    ("The lightest shoe on the market.", "lightest shoe on the market"),
    ("The best bottle for hiking.", "The best"),
    ("This pan is the best.", "is the best"),
    ("Lighter than ever.", "than ever"),
    ("The only pan you'll ever need.", "you'll ever need"),
    ("Amazing sound.", "Amazing"),
    ("Revolutionary design.", "Revolutionary"),
    ("A must-have.", "must-have"),
    ("Buy now.", "Buy now"),
    ("Order yours today.", "Order yours today"),
    ("Add to cart.", "Add to cart"),
    ("Don't miss out!", "Don't miss out"),
    ("Only 3 left.", "Only 3 left"),
]


def _alternativas_que_casan(frase: str) -> list[int]:
    """Indices of the SUPERLATIVOS alternatives that match somewhere in ``frase``."""
    return [
        i
        for i, (_, alternativa) in enumerate(reglas_casa.SUPERLATIVOS)
        if re.search(alternativa, frase, re.IGNORECASE)
    ]


# One expression of every alternative, without the stems: what ``superlativos`` must return.
_TODAS = re.compile("|".join(f"(?:{a})" for _, a in reglas_casa.SUPERLATIVOS), re.IGNORECASE)


@pytest.mark.parametrize(("frase", "fragmento"), SUPERLATIVOS)
def test_cada_superlativo(frase: str, fragmento: str) -> None:
    assert reglas_casa.superlativos(frase) == [fragmento]
    assert len(_alternativas_que_casan(frase)) == 1, _alternativas_que_casan(frase)
    resultado = comprobar_reglas_casa({"titulo": "Botella", "descripcion": frase, "atributos": {}})
    assert not resultado["ok"]
    assert f"superlativo o llamada a comprar en descripción: «{fragmento}»" in resultado["detalle"]


def test_cada_alternativa_de_superlativo_tiene_su_caso() -> None:
    """An alternative added to SUPERLATIVOS without a case here fails."""
    cubiertas = {i for frase, _ in SUPERLATIVOS for i in _alternativas_que_casan(frase)}
    assert cubiertas == set(range(len(reglas_casa.SUPERLATIVOS)))


@pytest.mark.parametrize(
    "frase",
    [
        "Es la mejor opción para correr.",
        "Zapatilla ligera, la mejor opción para correr.",
        "La mejor opción para correr.",
    ],
)
def test_la_mejor_opcion_para_correr_es_promocional(frase: str) -> None:
    """Decided: "la mejor opción para X" ranks the product above every other, which no origin
    can back; the neutral form says what it is made for ("pensada para correr", which passes)."""
    assert reglas_casa.superlativos(frase)
    assert reglas_casa.superlativos("Zapatilla ligera pensada para correr.") == []


CASI_SUPERLATIVOS = [
    # care and use instructions that look like a superlative
    "La mejor forma de limpiarla es a mano.",
    "Para obtener el mejor resultado, lavar a 30 °C.",
    "Los mejores resultados se obtienen lavándola a mano.",
    "Lo único que necesitas para limpiarla es agua tibia.",
    "El curado es un paso imprescindible antes del primer uso.",
    "For best results, hand wash.",
    "The best way to clean it is by hand.",
    # ordinary product words
    "Su filtro de carbón activo mejora el sabor del agua del grifo.",
    "Sartén grill ya curada y apta para inducción.",
    "Con un mejor agarre que el modelo anterior.",
    "El modelo más ligero de la gama.",
    "Más ligera que el modelo anterior.",
    "Talla única.",
    "Color único: negro.",
    "De una única pieza de acero.",
    "Ideal para el día a día.",
    "Camiseta premium de algodón.",
    "Instala la versión definitiva del firmware.",
    "Número de serie en la base; camiseta con el número 10 a la espalda.",
    "Pincel nº 1 de la serie.",
    "La batería se agota en 8 h.",
    "Nunca se oxida.",
    "Quedan pocas arrugas tras el lavado.",
    "Unidades de medida del sistema internacional.",
    "Piel auténtica de vacuno.",
    # buying words that are not a call to buy
    "La compra ya incluye la funda.",
    "Bolsa de la compra plegable.",
    "Pídela en tu talla habitual.",
    "Cómprala en una talla más.",
    "Llévatela a cualquier parte: se pliega.",
    "Se engancha al carrito del bebé.",
    "We offer two sizes.",
]


@pytest.mark.parametrize("frase", CASI_SUPERLATIVOS)
def test_casi_superlativos_no_lo_son(frase: str) -> None:
    assert reglas_casa.superlativos(frase) == []
    assert comprobar_reglas_casa({"titulo": "Botella", "descripcion": frase, "atributos": {}})["ok"]


def test_claves_de_superlativos_no_pierden_nada() -> None:
    """Each alternative's stems are in every phrase it matches, so running only the
    alternatives whose stem is in the text finds what one expression of all of them finds."""
    frases = (
        [f for f, _ in SUPERLATIVOS]
        + CASI_SUPERLATIVOS
        + [
            "Camiseta premium ¡la MEJOR del mercado! Los mejores del mercado, sin duda. Compra ya.",
            "CÓMPRALA HOY. NÚMERO UNO EN VENTAS. The world's best pan, number one. Buy now!",
        ]
    )
    for frase in frases:
        esperado = [m.group(0).strip() for m in _TODAS.finditer(frase)]
        assert reglas_casa.superlativos(frase) == esperado, frase
        for i in _alternativas_que_casan(frase):
            claves, _ = reglas_casa.SUPERLATIVOS[i]
            assert any(c in frase.lower() for c in claves), (frase, claves)


def test_mensaje_de_superlativo_dice_que_hacer_aunque_el_detalle_sea_largo() -> None:
    """The generator is told to drop the phrase; a long detail loses findings, not that."""
    corto = comprobar_reglas_casa(
        {"titulo": "Botella", "descripcion": "Compra ya.", "atributos": {}}
    )["detalle"]
    assert corto == (
        "superlativo o llamada a comprar en descripción: «Compra ya». "
        + reglas_casa.INSTRUCCION_SUPERLATIVOS
    )
    largo = comprobar_reglas_casa(
        {
            "titulo": "Botella 🔥 www.botellas.es 19,99 € EXTRA",
            "descripcion": "La más vendida. Envío en 24 h. Oferta 🔥 en tienda.com por 20 euros.",
            "atributos": {"precio": "19,99"},
        }
    )["detalle"]
    assert len(largo) <= 200
    assert largo.endswith(". " + reglas_casa.INSTRUCCION_SUPERLATIVOS)
    assert "…" in largo


# -- C05: shouting threshold -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("texto", "gritos"),
    [
        ("MUY ligera", []),  # three capitals: not shouting
        ("GRAN ligereza", ["GRAN"]),  # four: shouting
        ("Suela CAÑA alta", ["CAÑA"]),
        ("Talla XXXL y XXL", []),
        ("Puerto USB y HDMI", []),
        ("Modelo AB12CD", []),
        ("ABC DEFG", ["DEFG"]),
    ],
)
def test_umbral_de_mayusculas_es_cuatro(texto: str, gritos: list[str]) -> None:
    assert reglas_casa.mayusculas(texto) == gritos


# -- C05: the known gaps, closed -------------------------------------------------------------


def _ficha(**cambios: Any) -> dict[str, Any]:
    ficha: dict[str, Any] = {
        "titulo": "Botella",
        "descripcion": "Botella de acero.",
        "atributos": {},
    }
    ficha.update(cambios)
    return ficha


@pytest.mark.parametrize(
    ("ficha", "subregla"),
    [
        (_ficha(atributos={"precio": "19,99"}), "precio en atributo precio"),
        (_ficha(atributos={"price_eur": "19.99"}), "precio en atributo price_eur"),
        (_ficha(atributos={"pvp": "veinte"}), "precio en atributo pvp"),
        (_ficha(descripcion="Cuesta diecinueve euros con noventa."), "precio en descripción"),
        (_ficha(descripcion="Por menos de veinte dólares."), "precio en descripción"),
        (_ficha(descripcion="Más en tienda punto com."), "URL en descripción"),
        (_ficha(descripcion="Visita shop dot net."), "URL en descripción"),
        (_ficha(descripcion="Más en tienda\uff0ecom."), "URL en descripción"),
        (_ficha(descripcion="Más en tienda\u3002es."), "URL en descripción"),
    ],
)
def test_huecos_de_c05_cerrados(ficha: dict[str, Any], subregla: str) -> None:
    resultado = comprobar_reglas_casa(ficha)
    assert not resultado["ok"]
    assert subregla in resultado["detalle"]


def test_codigo_del_origen_no_grita_pero_uno_inventado_si() -> None:
    origen = {
        "sku": "SKU-BULK-0001",
        "familia": "botellas",
        "ficha_proveedor": {"titulo": "Pack", "descripcion": "Ref. AB-CDEF-12.", "atributos": {}},
    }
    assert comprobar_reglas_casa(_ficha(titulo="Botella SKU-BULK-0001"), origen)["ok"]
    assert comprobar_reglas_casa(_ficha(descripcion="Referencia AB-CDEF-12."), origen)["ok"]
    assert not comprobar_reglas_casa(_ficha(titulo="Botella SKU-BULK-0002"), origen)["ok"]
    assert not comprobar_reglas_casa(_ficha(titulo="Botella SKU-BULK-0001"))["ok"]


@pytest.mark.parametrize(
    "atributos",
    [{"material": "acero"}, {"precio_unidad_medida": ""}, {"preciosa": "sí"}],
)
def test_atributos_que_no_son_precio(atributos: dict[str, str]) -> None:
    assert comprobar_reglas_casa(_ficha(atributos=atributos))["ok"]


# -- C07: every unit, by its physical factor --------------------------------------------------

# spelling -> (reference unit of its magnitude, how many reference units one of it is)
FACTORES: dict[str, tuple[str, float]] = {
    "mg": ("g", 0.001),
    **dict.fromkeys(("g", "gr", "grs", "gramo", "gramos", "gram", "grams"), ("g", 1.0)),
    **dict.fromkeys(
        ("kg", "kilo", "kilos", "kilogramo", "kilogramos", "kilogram", "kilograms"), ("g", 1000.0)
    ),
    **dict.fromkeys(("lb", "lbs"), ("g", 453.59237)),
    "oz": ("oz", 1.0),
    "ml": ("ml", 1.0),
    "cl": ("ml", 10.0),
    "dl": ("ml", 100.0),
    **dict.fromkeys(("l", "litro", "litros", "liter", "liters", "litre", "litres"), ("ml", 1000.0)),
    **dict.fromkeys(("mm", "milímetros", "milimetros", "millimeters"), ("mm", 1.0)),
    **dict.fromkeys(("cm", "centímetros", "centimetros", "centimeters"), ("mm", 10.0)),
    **dict.fromkeys(("m", "metro", "metros", "meter", "meters", "metres"), ("mm", 1000.0)),
    "km": ("mm", 1_000_000.0),
    **dict.fromkeys(("pulgada", "pulgadas", "pulg", "inch", "inches", "″"), ("mm", 25.4)),
    **dict.fromkeys(("s", "seg", "sec", "segundos", "seconds"), ("s", 1.0)),
    **dict.fromkeys(("min", "mins", "minuto", "minutos", "minute", "minutes"), ("s", 60.0)),
    **dict.fromkeys(("h", "hr", "hrs", "hora", "horas", "hour", "hours"), ("s", 3600.0)),
    **dict.fromkeys(("día", "días", "dia", "dias", "day", "days"), ("s", 86400.0)),
    **dict.fromkeys(("semana", "semanas", "week", "weeks"), ("s", 604800.0)),
    **dict.fromkeys(("mes", "meses", "month", "months"), ("meses", 1.0)),
    **dict.fromkeys(("año", "años", "anos", "ans", "year", "years"), ("meses", 12.0)),
    "mw": ("w", 0.001),
    "w": ("w", 1.0),
    "kw": ("w", 1000.0),
    "wh": ("wh", 1.0),
    "kwh": ("wh", 1000.0),
    "mah": ("mah", 1.0),
    "ah": ("mah", 1000.0),
    "ma": ("ma", 1.0),
    "v": ("v", 1.0),
    "hz": ("hz", 1.0),
    "khz": ("hz", 1e3),
    "mhz": ("hz", 1e6),
    "ghz": ("hz", 1e9),
    "db": ("db", 1.0),
    "kb": ("kb", 1.0),
    "mb": ("kb", 1e3),
    "gb": ("kb", 1e6),
    "tb": ("kb", 1e9),
    "%": ("%", 1.0),
    "°c": ("°c", 1.0),
    "ºc": ("°c", 1.0),
    "°f": ("°f", 1.0),
    "ºf": ("°f", 1.0),
}


def _numero(valor: float) -> str:
    """A value as a Spanish decimal ("0,003"), never in exponent notation."""
    texto = f"{valor:.6f}".rstrip("0").rstrip(".")
    return texto.replace(".", ",")


def _origen(texto: str) -> dict[str, Any]:
    return {
        "familia": "botellas",
        "ficha_proveedor": {"titulo": "x", "descripcion": texto, "atributos": {}},
        "cifras": {},
    }


def _c07(texto: str, origen: dict[str, Any]) -> bool:
    return bool(comprobar_cifras(_ficha(descripcion=texto), origen)["ok"])


def test_onzas_nunca_se_convierten() -> None:
    """An ounce may be of weight or of volume: it only backs ounces."""
    onza = cifras_en_texto("1 oz")[0]
    assert onza.magnitud not in {
        cifras_en_texto("1 g")[0].magnitud,
        cifras_en_texto("1 ml")[0].magnitud,
    }
    origen = _origen("Weight 1 oz.")
    for equivalente in ("28,349523125 g", "28,35 g", "29,5735 ml", "30 ml"):
        assert not _c07(f"Son {equivalente}.", origen)


def test_cada_unidad_tiene_su_caso() -> None:
    assert set(FACTORES) == set(UNIDADES)


@pytest.mark.parametrize("unidad", sorted(FACTORES))
def test_cada_unidad_convierte_con_su_factor(unidad: str) -> None:
    referencia, factor = FACTORES[unidad]
    origen = _origen(f"Dato: 3 {unidad}.")
    assert _c07(f"Son 3 {unidad}.", origen)
    assert not _c07(f"Son 30 {unidad}.", origen)  # a factor-of-ten slip
    assert _c07(f"Son {_numero(3 * factor)} {referencia}.", origen)
    assert not _c07(f"Son {_numero(30 * factor)} {referencia}.", origen)
    assert not _c07(f"Son {_numero(0.3 * factor)} {referencia}.", origen)


@pytest.mark.parametrize(
    ("ficha", "ok"),
    [
        ("Pesa 280 g.", True),
        ("Pesa 0,28 kg.", True),
        ("Pesa 280000 mg.", True),
        ("Pesa 285 g.", False),  # near miss
        ("Pesa 279 g.", False),
        ("Pesa 2,8 kg.", False),  # factor of ten
        ("Pesa 28 g.", False),
        ("Pesa 2800 g.", False),
        ("Pesa 280 kg.", False),  # right number, wrong unit
        ("Pesa 280 mg.", False),
        ("Pesa 0,028 kg.", False),
        ("Pesa 0,3 kg.", False),  # rounded
    ],
)
def test_c07_casi_iguales_y_deslices_de_diez(ficha: str, ok: bool) -> None:
    assert _c07(ficha, _origen("Weight 280 g.")) is ok


@pytest.mark.parametrize(
    ("origen", "ficha", "ok"),
    [
        ("Weight 1 lb.", "Pesa 453,59237 g.", True),
        ("Weight 1 lb.", "Pesa 454 g.", False),  # rounded conversion
        ("Weight 1 lb.", "Pesa 45,359237 g.", False),
        ("Weight 2 lbs.", "Pesa 907,18474 g.", True),
        ("Dosis de 500 mg.", "Dosis de 0,5 g.", True),
        ("Dosis de 500 mg.", "Dosis de 5 g.", False),
        ("Dosis de 500 mg.", "Dosis de 0,05 g.", False),
        ("Weight 3,5 oz.", "Pesa 99,2 g.", False),  # ounces never convert
    ],
)
def test_c07_factores_de_mg_y_lb(origen: str, ficha: str, ok: bool) -> None:
    assert _c07(ficha, _origen(origen)) is ok
