"""C09 in the title and the description, for every closed-set key of the vocabulary
(``claves_en_texto``): material, composition, connectivity and closure as well as colour and
gender; with the compound and mixed values an origin supports.

Each case was written for this file (none comes from the labelled set). The mutations each
test kills are listed in docs/calidad.md («Mutaciones»).
"""

from __future__ import annotations

from typing import Any

import pytest

from criterios import comprobar, fallos
from criterios import fidelidad as f
from criterios.vocabulario import claves_en_texto, datos_vocabulario, mapear_origen


def _origen(
    atributos: dict[str, str], familia: str, titulo: str = "", descripcion: str = ""
) -> dict[str, Any]:
    return mapear_origen(
        {
            "sku": "X-1",
            "familia": familia,
            "ficha_proveedor": {
                "titulo": titulo,
                "descripcion": descripcion,
                "atributos": atributos,
                "idioma": "es",
            },
            "cifras": {},
        }
    ).origen


def _ficha(titulo: str, descripcion: str) -> dict[str, Any]:
    return {"titulo": titulo, "descripcion": descripcion, "atributos": {}}


@pytest.mark.parametrize(
    ("familia", "atributos", "titulo", "descripcion", "dice", "clave"),
    [
        # material
        (
            "botellas",
            {"material": "stainless steel"},
            "Botella térmica de aluminio de 750 ml",
            "Botella con doble pared que mantiene el frío.",
            "título dice «aluminio»",
            "material",
        ),
        (
            "zapatillas",
            {"material": "sintético"},
            "Zapatilla infantil roja",
            "Zapatilla con cierre de velcro y parte superior de cuero.",
            "descripción dice «piel»",
            "material",
        ),
        (
            "botellas",
            {"material": "plástico sin BPA"},
            "Botella deportiva de vidrio",
            "Botella ligera con tapón de rosca.",
            "título dice «vidrio»",
            "material",
        ),
        (
            "sartenes",
            {"material": "hierro fundido"},
            "Sartén de 26 cm",
            "Sartén de acero al carbono que conserva el calor.",
            "descripción dice «acero al carbono»",
            "material",
        ),
        # composition
        (
            "camisetas",
            {"composition": "100% cotton"},
            "Camiseta básica blanca",
            "Camiseta de poliéster de cuello redondo.",
            "descripción dice «poliéster»",
            "composición",
        ),
        (
            "camisetas",
            {"composicion": "100% lino"},
            "Camiseta de lana de manga corta",
            "Camiseta de manga corta y cuello de pico.",
            "título dice «lana»",
            "composición",
        ),
        # connectivity
        (
            "auriculares",
            {"connectivity": "Bluetooth 5.3"},
            "Auriculares de diadema con cable",
            "Auriculares de diadema plegables con almohadillas.",
            "título dice «con cable»",
            "conectividad",
        ),
        (
            "auriculares",
            {"conectividad": "wired 3.5 mm"},
            "Auriculares de estudio",
            "Auriculares inalámbricos de estudio con sonido cerrado.",
            "descripción dice «inalámbrica»",
            "conectividad",
        ),
        # closure
        (
            "zapatillas",
            {"cierre": "velcro"},
            "Zapatilla infantil con cordones",
            "Zapatilla ligera para el colegio.",
            "título dice «cordones»",
            "cierre",
        ),
        (
            "zapatillas",
            {"closure": "laces"},
            "Zapatilla de caminar",
            "Zapatilla ligera con cremallera lateral.",
            "descripción dice «cremallera»",
            "cierre",
        ),
    ],
)
def test_c09_valor_del_texto_contradice_el_origen(
    familia: str,
    atributos: dict[str, str],
    titulo: str,
    descripcion: str,
    dice: str,
    clave: str,
) -> None:
    origen = _origen(atributos, familia)
    r = f.comprobar_contradicciones(_ficha(titulo, descripcion), origen)
    assert not r["ok"]
    assert dice in r["detalle"]
    assert f"el {clave} del origen es" in r["detalle"]
    assert r["detalle"].endswith("Usa el valor del origen")
    assert "C09" in {p["criterio"] for p in fallos(comprobar(_ficha(titulo, descripcion), origen))}


@pytest.mark.parametrize(
    ("familia", "atributos", "titulo", "descripcion", "texto_origen"),
    [
        # a compound origin value supports each of its parts
        (
            "botellas",
            {"material": "acero inoxidable y silicona"},
            "Botella de acero inoxidable",
            "Botella con funda de silicona antideslizante.",
            "",
        ),
        (
            "zapatillas",
            {"material": "malla y goma"},
            "Zapatilla de trail",
            "Zapatilla de malla con suela de goma.",
            "",
        ),
        # a mixed colour supports any colour
        (
            "camisetas",
            {"color": "multicolor"},
            "Camiseta de rayas",
            "Camiseta de rayas rojas, azules y blancas.",
            "",
        ),
        # the origin's text names the other part, in its own language
        (
            "zapatillas",
            {"material": "malla"},
            "Zapatilla de running",
            "Zapatilla de malla con suela de goma.",
            "Mesh running shoe with rubber sole.",
        ),
        # the same value in other words: translations and synonyms of the vocabulary
        (
            "botellas",
            {"material": "stainless steel"},
            "Botella de acero inoxidable",
            "Botella de acero inoxidable con doble pared.",
            "",
        ),
        (
            "auriculares",
            {"connectivity": "Bluetooth 5.0"},
            "Auriculares inalámbricos",
            "Auriculares inalámbricos con Bluetooth.",
            "",
        ),
        (
            "zapatillas",
            {"fecho": "velcro"},
            "Zapatilla infantil",
            "Zapatilla con cierre de tiras adherentes.",
            "",
        ),
        # less precise in the text shares a word: not a contradiction in the text
        (
            "zapatillas",
            {"material": "piel sintética"},
            "Zapatilla urbana",
            "Zapatilla de piel sintética blanca.",
            "",
        ),
        # a key the origin does not give cannot be contradicted
        (
            "auriculares",
            {"color": "negro"},
            "Auriculares con cable",
            "Auriculares con cable de 1,2 m.",
            "",
        ),
    ],
)
def test_c09_valores_que_el_origen_respalda_pasan(
    familia: str,
    atributos: dict[str, str],
    titulo: str,
    descripcion: str,
    texto_origen: str,
) -> None:
    origen = _origen(atributos, familia, descripcion=texto_origen)
    r = f.comprobar_contradicciones(_ficha(titulo, descripcion), origen)
    assert r["ok"], r["detalle"]


def test_claves_en_texto_son_del_vocabulario_y_cerradas() -> None:
    """The keys C09 reads in the text are the vocabulary's, each with its closed set of values;
    sizes and yes/no are not read (their spellings «g» and «no» are everyday words)."""
    valores = datos_vocabulario()["valores"]
    claves = claves_en_texto()
    assert {"color", "genero", "material", "composicion", "conectividad", "cierre"} <= set(claves)
    assert all(clave in valores for clave in claves)
    assert "talla" not in claves and "apta_induccion" not in claves
