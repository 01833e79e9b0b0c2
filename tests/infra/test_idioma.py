"""One name, one language: no public name mixes a Spanish word and an English one.

The naming rule (docs/arquitectura.md, "The naming rule"): domain words in Spanish as the
contract writes them, plumbing in English, never both in one name. A public name of the product
or the harness (a module's function, class or constant; a class's method or field) is split into
words (``snake_case``, ``CamelCase``); one with a word of ``vocabulario.ESPANOL`` and one of
``vocabulario.INGLES`` fails. Words in neither list say nothing, nor do loanwords
(``vocabulario.PRESTAMOS``). The contract's spellings win: a run of two or more words that is a
contract field (``event_id``) or a documented ``FICHAS_*`` variable without its prefix
(``topic_puerta``) is left out first, and a name that is one of them whole is not judged.
"""

from __future__ import annotations

import ast
import inspect
import re
from pathlib import Path

import pydantic

import esquemas
from tests.infra.test_fronteras import PRODUCTO, REPO
from tests.infra.vocabulario import ESPANOL, INGLES, PRESTAMOS

PAQUETES = (*PRODUCTO, "harness")


def palabras(nombre: str) -> list[str]:
    """The words of an identifier, lower case: ``set_puerta`` and ``SetPuerta`` alike."""
    separado = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", nombre)
    separado = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", separado)
    return [w.lower() for w in separado.split("_") if w and not w.isdigit()]


def grafias_del_contrato() -> set[tuple[str, ...]]:
    """The contract's spellings as word tuples: every field of every model of ``esquemas``
    (and its alias), and every ``FICHAS_*`` variable the README and docs/ name, without the
    prefix."""
    campos = {
        nombre
        for modelo in vars(esquemas).values()
        if inspect.isclass(modelo) and issubclass(modelo, pydantic.BaseModel)
        for nombre, campo in modelo.model_fields.items()
        for nombre in (nombre, campo.alias or nombre)
    }
    texto = "".join(
        p.read_text(encoding="utf-8") for p in (REPO / "README.md", *(REPO / "docs").glob("*.md"))
    )
    variables = {v.removeprefix("FICHAS_") for v in re.findall(r"FICHAS_[A-Z0-9_]+", texto)}
    return {tuple(palabras(g)) for g in campos | variables if g}


def mezcla(nombre: str, grafias: set[tuple[str, ...]]) -> tuple[list[str], list[str]] | None:
    """(its Spanish words, its English words) when the name has both; else None."""
    resto = palabras(nombre)
    if tuple(resto) in grafias:
        return None
    for grafia in sorted((g for g in grafias if len(g) > 1), key=len, reverse=True):
        n = len(grafia)
        resto = [
            w
            for i, w in enumerate(resto)
            if not any(tuple(resto[j : j + n]) == grafia for j in range(max(0, i - n + 1), i + 1))
        ]
    resto = [w for w in resto if w not in PRESTAMOS]
    espanol = [w for w in resto if w in ESPANOL]
    ingles = [w for w in resto if w in INGLES]
    return (espanol, ingles) if espanol and ingles else None


def nombres_publicos(archivo: Path) -> list[str]:
    """A module's public names: its functions, classes and constants, and each public class's
    public methods and fields (``Clase.metodo``)."""
    nombres = []
    for nodo in ast.parse(archivo.read_text(encoding="utf-8")).body:
        if isinstance(nodo, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            nombres.append(nodo.name)
        if isinstance(nodo, ast.ClassDef) and not nodo.name.startswith("_"):
            for hijo in nodo.body:
                if isinstance(hijo, ast.FunctionDef | ast.AsyncFunctionDef):
                    nombres.append(f"{nodo.name}.{hijo.name}")
                elif isinstance(hijo, ast.AnnAssign) and isinstance(hijo.target, ast.Name):
                    nombres.append(f"{nodo.name}.{hijo.target.id}")
        objetivos = nodo.targets if isinstance(nodo, ast.Assign) else []
        if isinstance(nodo, ast.AnnAssign):
            objetivos = [nodo.target]
        nombres.extend(t.id for t in objetivos if isinstance(t, ast.Name))
    return [n for n in nombres if not n.split(".")[-1].startswith("_")]


def mezclas(raiz: Path, paquetes: tuple[str, ...]) -> list[str]:
    """Every public name below the packages that mixes the languages, with its words."""
    grafias = grafias_del_contrato()
    fuera = []
    for paquete in paquetes:
        for archivo in sorted((raiz / paquete).rglob("*.py")):
            for nombre in nombres_publicos(archivo):
                hallada = mezcla(nombre.split(".")[-1], grafias)
                if hallada is not None:
                    ruta = archivo.relative_to(raiz)
                    fuera.append(f"{ruta}: {nombre} (es {hallada[0]}, en {hallada[1]})")
    return fuera


def test_ningun_nombre_publico_mezcla_idiomas() -> None:
    assert mezclas(REPO, PAQUETES) == []


def test_el_detector_ve_una_mezcla_y_respeta_el_contrato() -> None:
    grafias = grafias_del_contrato()
    assert mezcla("set_puerta", grafias) == (["puerta"], ["set"])
    assert mezcla("OnModoPuerta", grafias) == (["modo", "puerta"], ["on"])
    assert mezcla("publicar_ficha", grafias) is None and mezcla("retry_publish", grafias) is None
    assert mezcla("CABECERA_EVENT_ID", grafias) is None  # event_id: a contract field
    assert mezcla("topic_puerta", grafias) is None  # FICHAS_TOPIC_PUERTA
    assert mezcla("crear_topic", grafias) is None  # a loanword
    assert mezcla("sku_version", grafias) is None  # words of neither list


def test_el_detector_lee_los_nombres_publicos(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "m.py").write_text(
        "X_PUERTA = 1\n_set_puerta = 2\n"
        "class VersionStore:\n    def reclamar_record(self): ...\n    def _get_puerta(self): ...\n"
        "    puerta_offset: int\n"
    )
    assert mezclas(tmp_path, ("p",)) == [
        "p/m.py: VersionStore.reclamar_record (es ['reclamar'], en ['record'])",
        "p/m.py: VersionStore.puerta_offset (es ['puerta'], en ['offset'])",
    ]
