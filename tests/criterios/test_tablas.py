"""The versioned tables: contents as the contract says, validation, and the version string."""

from __future__ import annotations

import json
import re
import shutil
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from criterios import (
    CRITERIOS_EN_CODIGO,
    CRITERIOS_VERSION,
    FamiliaDesconocida,
    atributos_obligatorios,
    calcular_version,
    cargar_criterios,
    cargar_familias,
    cargar_tablas,
    criterios_comprobados_en_codigo,
    familias_conocidas,
    tablas_desde_datos,
)

DATA_DIR = Path(str(files("criterios").joinpath("datos")))
ARCHIVO_CRITERIOS = "criterios_v1.json"
ARCHIVO_FAMILIAS = "familias_v1.json"
ARCHIVO_VOCABULARIO = "vocabulario_v1.json"


def _tabla_en_bruto(name: str) -> dict[str, Any]:
    """The packaged table as plain JSON, to edit copies of it."""
    data: dict[str, Any] = json.loads((DATA_DIR / name).read_text(encoding="utf-8"))
    return data


def _copiar_tablas(tmp_path: Path) -> Path:
    """A writable copy of the packaged tables."""
    destino = tmp_path / "datos"
    shutil.copytree(DATA_DIR, destino)
    return destino


@pytest.mark.parametrize(
    ("criterio", "comprobado_por"),
    [
        ("C01", "codigo"),
        ("C02", "codigo"),
        ("C03", "codigo"),
        ("C04", "evaluador"),
        ("C05", "codigo+evaluador"),
        ("C06", "evaluador"),
        ("C07", "codigo"),
        ("C08", "codigo"),
        ("C09", "codigo"),
        ("C10", "codigo"),
        ("C11", "codigo"),
    ],
)
def test_criterios_como_en_el_contrato(criterio: str, comprobado_por: str) -> None:
    por_id = {c.id: c for c in cargar_criterios()}
    assert por_id[criterio].comprobado_por == comprobado_por
    assert por_id[criterio].texto_evaluador.strip()
    assert por_id[criterio].texto_generador.strip()
    assert por_id[criterio].regla.strip()


def test_criterios_en_orden_de_tabla() -> None:
    assert [c.id for c in cargar_criterios()] == [f"C{i:02d}" for i in range(1, 12)]


def test_criterios_en_codigo_coinciden_con_las_comprobaciones() -> None:
    assert criterios_comprobados_en_codigo() == CRITERIOS_EN_CODIGO


@pytest.mark.parametrize(
    ("familia", "atributos"),
    [
        ("zapatillas", ("talla", "color", "material", "genero")),
        ("camisetas", ("talla", "color", "composicion", "genero")),
        ("botellas", ("capacidad_ml", "material", "color")),
        ("auriculares", ("conectividad", "autonomia_h", "color")),
        ("sartenes", ("diametro_cm", "material", "apta_induccion")),
    ],
)
def test_familias_como_en_el_contrato(familia: str, atributos: tuple[str, ...]) -> None:
    assert atributos_obligatorios(familia) == atributos
    assert cargar_familias()[familia].nombre == familia


def test_familias_conocidas_son_las_cinco() -> None:
    assert set(familias_conocidas()) == {
        "zapatillas",
        "camisetas",
        "botellas",
        "auriculares",
        "sartenes",
    }


@pytest.mark.parametrize("familia", ["neveras", "", "Zapatillas", " zapatillas"])
def test_familia_desconocida_lanza_key_error_claro(familia: str) -> None:
    with pytest.raises(FamiliaDesconocida) as info:
        atributos_obligatorios(familia)
    assert isinstance(info.value, KeyError)
    assert info.value.familia == familia
    assert "familia desconocida" in str(info.value)
    assert "zapatillas" in str(info.value)


def test_tablas_declaran_su_version() -> None:
    # criteria v2: C08–C11 and the house vocabulary (issue 22); families unchanged
    assert _tabla_en_bruto(ARCHIVO_CRITERIOS)["version"] == 2
    assert _tabla_en_bruto(ARCHIVO_FAMILIAS)["version"] == 1
    assert _tabla_en_bruto(ARCHIVO_VOCABULARIO)["version"] == 1


def test_version_es_la_declarada_mas_hash_del_contenido() -> None:
    assert re.fullmatch(r"2-[0-9a-f]{10}", CRITERIOS_VERSION)
    assert (
        calcular_version(
            _tabla_en_bruto(ARCHIVO_CRITERIOS),
            _tabla_en_bruto(ARCHIVO_FAMILIAS),
            _tabla_en_bruto(ARCHIVO_VOCABULARIO),
        )
        == CRITERIOS_VERSION
    )
    assert cargar_tablas(DATA_DIR).version == CRITERIOS_VERSION


def test_tablas_empaquetadas_se_leen_una_vez() -> None:
    assert cargar_criterios() is cargar_criterios()
    assert cargar_tablas() is cargar_tablas()


def _editar_texto_evaluador(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    criterios["criterios"][3]["texto_evaluador"] += " Sé estricto."


def _editar_texto_generador(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    criterios["criterios"][0]["texto_generador"] = criterios["criterios"][0]["texto_generador"][:-1]


def _editar_regla(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    criterios["criterios"][6]["regla"] = "Otra regla."


def _editar_familia(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    familias["familias"]["botellas"].append("tapon")


def _anadir_familia(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    familias["familias"]["mochilas"] = ["capacidad_l", "color"]


def test_editar_el_vocabulario_cambia_la_version(tmp_path: Path) -> None:
    """The vocabulary changes what C08–C11 compare, so it is part of the version."""
    directorio = _copiar_tablas(tmp_path)
    vocabulario = _tabla_en_bruto(ARCHIVO_VOCABULARIO)
    vocabulario["valores"]["color"]["negro"].append("zwart")
    (directorio / ARCHIVO_VOCABULARIO).write_text(json.dumps(vocabulario), encoding="utf-8")
    editadas = cargar_tablas(directorio)
    assert editadas.version != CRITERIOS_VERSION
    assert editadas.version.startswith("2-")


@pytest.mark.parametrize(
    "edit",
    [
        _editar_texto_evaluador,
        _editar_texto_generador,
        _editar_regla,
        _editar_familia,
        _anadir_familia,
    ],
)
def test_editar_cualquier_texto_cambia_la_version(tmp_path: Path, edit: Any) -> None:
    directorio = _copiar_tablas(tmp_path)
    criterios, familias = _tabla_en_bruto(ARCHIVO_CRITERIOS), _tabla_en_bruto(ARCHIVO_FAMILIAS)
    edit(criterios, familias)
    (directorio / ARCHIVO_CRITERIOS).write_text(json.dumps(criterios), encoding="utf-8")
    (directorio / ARCHIVO_FAMILIAS).write_text(json.dumps(familias), encoding="utf-8")
    editadas = cargar_tablas(directorio)
    assert editadas.version != CRITERIOS_VERSION
    assert editadas.version.startswith("2-")
    vocabulario = _tabla_en_bruto(ARCHIVO_VOCABULARIO)
    assert tablas_desde_datos(criterios, familias, vocabulario).version == editadas.version


def test_reformatear_una_tabla_conserva_la_version(tmp_path: Path) -> None:
    directorio = _copiar_tablas(tmp_path)
    compact = json.dumps(
        _tabla_en_bruto(ARCHIVO_CRITERIOS), separators=(",", ":"), ensure_ascii=True
    )
    (directorio / ARCHIVO_CRITERIOS).write_text(compact, encoding="utf-8")
    assert cargar_tablas(directorio).version == CRITERIOS_VERSION


def test_copia_editada_no_toca_las_tablas_empaquetadas(tmp_path: Path) -> None:
    criterios, familias = _tabla_en_bruto(ARCHIVO_CRITERIOS), _tabla_en_bruto(ARCHIVO_FAMILIAS)
    familias["familias"]["mochilas"] = ["color"]
    assert "mochilas" in tablas_desde_datos(criterios, familias).familias
    assert "mochilas" not in familias_conocidas()


def _id_repetido(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    criterios["criterios"][1]["id"] = "C01"


def _comprobado_por_invalido(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    criterios["criterios"][0]["comprobado_por"] = "modelo"


def _falta_texto(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    del criterios["criterios"][2]["texto_generador"]


def _texto_vacio(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    criterios["criterios"][2]["texto_evaluador"] = ""


def _id_invalido(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    criterios["criterios"][2]["id"] = "criterio3"


def _atributo_repetido(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    familias["familias"]["botellas"] = ["color", "color"]


def _familia_sin_atributos(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    familias["familias"]["botellas"] = []


def _sin_version(criterios: dict[str, Any], familias: dict[str, Any]) -> None:
    del familias["version"]


@pytest.mark.parametrize(
    "edit",
    [
        _id_repetido,
        _comprobado_por_invalido,
        _falta_texto,
        _texto_vacio,
        _id_invalido,
        _atributo_repetido,
        _familia_sin_atributos,
        _sin_version,
    ],
)
def test_tablas_mal_formadas_se_rechazan(edit: Any) -> None:
    criterios, familias = _tabla_en_bruto(ARCHIVO_CRITERIOS), _tabla_en_bruto(ARCHIVO_FAMILIAS)
    edit(criterios, familias)
    with pytest.raises(ValidationError):
        tablas_desde_datos(criterios, familias)
