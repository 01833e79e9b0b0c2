"""C08's third reading, the evidence of a language (``criterios.idiomas``): texts written
afresh in another language from a Spanish origin fail, whatever the identifier says; Spanish
with foreign names, loanwords or a quoted slogan passes.

Each case was written for this file (none comes from the labelled set). The mutations each
test kills are listed in docs/calidad.md («Mutaciones»).
"""

from __future__ import annotations

from typing import Any

import pytest

from criterios import comprobar, fallos, idiomas
from criterios import fidelidad as f
from criterios.vocabulario import mapear_origen, normalizar


def _origen(
    titulo: str = "Botella de vidrio 1 l",
    descripcion: str = "Botella de vidrio con funda de silicona y tapón de bambú.",
    atributos: dict[str, str] | None = None,
    familia: str = "botellas",
    idioma: str | None = "es",
) -> dict[str, Any]:
    """A mapped Spanish origin: nothing a ficha says in another language is copied from it."""
    return mapear_origen(
        {
            "sku": "BOT-1",
            "familia": familia,
            "ficha_proveedor": {
                "titulo": titulo,
                "descripcion": descripcion,
                "atributos": atributos or {"material": "vidrio", "color": "transparente"},
                "idioma": idioma,
            },
            "cifras": {},
        }
    ).origen


def _ficha(titulo: str, descripcion: str) -> dict[str, Any]:
    return {"titulo": titulo, "descripcion": descripcion, "atributos": {}}


TITULO = "Botella de vidrio con funda de silicona"
DESCRIPCION = "Botella de vidrio de 1 l con funda de silicona y tapón de bambú, fácil de lavar."


@pytest.mark.parametrize(
    ("descripcion", "idioma"),
    [
        # Portuguese written afresh: the identifier gives Spanish 0.96 to the first
        ("Garrafa de vidro com tampa de bambu e capa de silicone, fácil de limpar.", "portugués"),
        ("Garrafa de vidro borossilicato com capa protetora.", "portugués"),
        ("Uma garrafa reutilizável para levar água ao trabalho todos os dias.", "portugués"),
        # French
        ("Bouteille en verre avec housse en silicone, idéale pour le bureau.", "francés"),
        ("Une bouteille réutilisable pour emporter de l'eau partout.", "francés"),
        # English
        ("A reusable glass bottle with a silicone sleeve for the office.", "inglés"),
        # Italian, German, Catalan, Galician: languages outside the identifier's four
        ("Bottiglia di vetro con custodia in silicone, ideale per l'ufficio.", "italiano"),
        ("Una bottiglia riutilizzabile per portare l'acqua al lavoro.", "italiano"),
        ("Glasflasche mit Silikonhülle, ideal für das Büro und die Schule.", "alemán"),
        ("Ampolla de vidre amb funda de silicona, ideal per a l'oficina i l'escola.", "catalán"),
        ("Botella de vidro cunha funda de silicona, ideal para levar auga ao traballo.", "gallego"),
    ],
)
def test_c08_texto_nuevo_en_otro_idioma_falla(descripcion: str, idioma: str) -> None:
    r = f.comprobar_idioma(_ficha(TITULO, descripcion), _origen())
    assert not r["ok"]
    assert f"descripción en {idioma}, no en español" in r["detalle"]
    assert r["detalle"].endswith("Tradúcelo al español; marca y modelo se quedan")
    fallidos = {p["criterio"] for p in fallos(comprobar(_ficha(TITULO, descripcion), _origen()))}
    assert "C08" in fallidos


def test_c08_el_detalle_cita_las_palabras_que_lo_delatan() -> None:
    descripcion = "Garrafa de vidro com tampa de bambu e capa de silicone, fácil de limpar."
    detalle = f.comprobar_idioma(_ficha(TITULO, descripcion), _origen())["detalle"]
    assert "(com, limpar, silicone, tampa)" in detalle


def test_c08_titulo_nuevo_en_portugues_falla() -> None:
    r = f.comprobar_idioma(_ficha("Garrafa de vidro com capa de silicone", DESCRIPCION), _origen())
    assert not r["ok"]
    assert "título en portugués" in r["detalle"]


@pytest.mark.parametrize(
    ("titulo", "descripcion", "origen"),
    [
        # foreign brand and model the origin gives
        (
            "Botella Nalgene Wide Mouth de Tritan",
            "Botella Nalgene Wide Mouth de Tritan, con tapa de rosca y boca ancha.",
            _origen(
                "Botella Nalgene Wide Mouth 1 l",
                "Botella de Tritan con boca ancha.",
                {"material": "Tritan", "marca": "Nalgene", "modelo": "Wide Mouth"},
            ),
        ),
        # loanwords of the trade and a hyphenated one: «slip-on» is not «slip» and «on»
        (
            "Zapatillas slip-on de lona",
            "Zapatilla sin cordones, slip-on, con plantilla de espuma y suela de goma.",
            _origen("Zapatilla slip-on lona", "", {"material": "lona"}, "zapatillas"),
        ),
        (
            "Auriculares gaming con micrófono",
            "Auriculares gaming con micrófono y sonido envolvente, con cable USB.",
            _origen("Auriculares gaming", "", {"color": "negro"}, "auriculares"),
        ),
        # a slogan the origin writes as a name
        (
            "Camiseta Born to Run de algodón",
            "Camiseta de algodón con el lema Born to Run estampado en el pecho.",
            _origen("Camiseta Born to Run", "", {"color": "blanco"}, "camisetas"),
        ),
        # one French word of cooking is a loanword, not a language
        (
            "Sartén de crepes de 24 cm",
            "Sartén para hacer crêpes, de aluminio con antiadherente y borde bajo.",
            _origen("Sartén de crepes 24 cm", "", {"material": "aluminio"}, "sartenes"),
        ),
        # Spanish from an English origin: the origin's language is a hint, not a verdict
        (
            "Botella térmica de acero inoxidable",
            "Botella de acero inoxidable con doble pared: mantiene las bebidas frías 24 h.",
            _origen(
                "Insulated steel bottle",
                "Double-wall stainless steel bottle. Keeps drinks cold 24 h.",
                {"material": "stainless steel"},
                idioma="en",
            ),
        ),
        # a hyphenated English term is one word, not «plug», «and» and «play»
        (
            "Auriculares plug-and-play con micrófono",
            "Auriculares con cable USB plug-and-play y micrófono en el cable.",
            _origen("Auriculares USB", "", {"color": "negro"}, "auriculares"),
        ),
        # every word is the Portuguese origin's, but all are Spanish too: nothing to translate
        (
            "Camiseta polo azul",
            "Camiseta polo de manga corta y cuello con botones.",
            _origen(
                "Camiseta polo azul marinho",
                "Camiseta polo em malha piquê.",
                {"cor": "azul"},
                "camisetas",
                idioma="pt",
            ),
        ),
        # «polo» is Galician for «por o», and a Spanish shirt; «has» is English and Spanish
        (
            "Polo de algodón para hombre",
            "Si has buscado un polo de algodón: manga corta, cuello con botones y puños.",
            _origen("Polo algodón hombre", "", {"color": "azul"}, "camisetas"),
        ),
        (TITULO, DESCRIPCION, _origen()),
    ],
)
def test_c08_espanol_con_nombres_y_prestamos_pasa(
    titulo: str, descripcion: str, origen: dict[str, Any]
) -> None:
    r = f.comprobar_idioma(_ficha(titulo, descripcion), origen)
    assert r["ok"], r["detalle"]


def test_c08_titulo_copiado_de_un_origen_extranjero_falla() -> None:
    """«Mini egg pan 12 cm red» has one word Spanish lacks (egg) and reads Spanish to the
    identifier; every word is the English origin's, so nothing was translated."""
    origen = _origen(
        "Mini egg pan 12 cm red",
        "Small non-stick pan for one egg.",
        {"material": "aluminium"},
        "sartenes",
        idioma="en",
    )
    copia = _ficha("Mini egg pan 12 cm red", "Sartén pequeña para un huevo.")
    r = f.comprobar_idioma(copia, origen)
    assert not r["ok"]
    assert "título: copia del origen sin traducir (egg)" in r["detalle"]
    traducido = _ficha("Sartén mini para huevos de 12 cm, roja", "Sartén pequeña para un huevo.")
    assert f.comprobar_idioma(traducido, origen)["ok"]


def test_c08_mezcla_con_el_idioma_del_origen_falla() -> None:
    """No English function word, and only one word copied from the origin (earbuds), but
    five English words against one of Spanish's own (y): the origin's dictionary is asked."""
    origen = _origen(
        "TWS earbuds black",
        "Earbuds with ANC, 30 h.",
        {"color": "black"},
        "auriculares",
        idioma="en",
    )
    ficha = _ficha(
        "Auriculares inalámbricos negros",
        "True wireless earbuds con active noise cancelling y estuche de carga.",
    )
    r = f.comprobar_idioma(ficha, origen)
    assert not r["ok"]
    assert "descripción en inglés" in r["detalle"]


def test_evidencia_cuenta_palabras_funcion_grafias_y_elisiones() -> None:
    hallado = idiomas.evidencia(["com", "não", "ação", "avec", "the", "und", "amb"], "l'eau")
    assert hallado["pt"] == {"com", "não", "ação"}
    assert {"avec", "l'eau"} <= hallado["fr"]
    assert hallado["en"] == {"the"}
    assert hallado["de"] == {"und"}
    assert "amb" in hallado["ca"]
    assert idiomas.evidencia(["niño", "canción", "los", "muy"])["es"] == {
        "niño",
        "canción",
        "los",
        "muy",
    }


def test_palabras_funcion_ajenas_no_son_palabras_vacias_del_espanol() -> None:
    """A foreign function word that Spanish also writes («os», «le», «sur», «par») would
    count Spanish against itself: none is in C08's Spanish function words."""
    espanolas = {normalizar(w) for w in f.STOPWORDS} | idiomas.FUNCION_ESPANOL
    for lang, palabras in idiomas.FUNCION.items():
        comunes = {p for p in palabras if p in espanolas}
        assert not comunes, (lang, comunes)


def test_una_sola_palabra_ajena_no_basta() -> None:
    assert idiomas.idioma_por_evidencia(["para", "crêpes"], "para crêpes", lambda _: False) is None
    assert idiomas.idioma_por_evidencia(["pour", "crêpes"], "pour crêpes", lambda _: False) == (
        "fr",
        frozenset({"pour", "crêpes"}),
    )


def test_el_espanol_con_mas_evidencia_gana() -> None:
    """Two English words against three of Spanish's own: a Spanish text quoting English."""
    palabras = "el lema and the los y".split()
    assert idiomas.idioma_por_evidencia(palabras, " ".join(palabras), lambda _: False) is None
