"""docs/contrato.md: the shared contract verbatim, plus what the code does with topics, headers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from esquemas.constantes import (
    CABECERA_ESQUEMA,
    CABECERA_ESQUEMA_VERSION,
    CABECERA_EVENT_ID,
    CABECERA_SKU,
    CABECERA_VERSION,
)
from infra.config import Settings
from infra.kafka.topics import topic_configs

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "contrato.md"


def _secciones(texto: str) -> list[str]:
    """The text of each ``## `` section, heading included."""
    return [s.strip() for s in re.split(r"^(?=## )", texto, flags=re.M) if s.startswith("## ")]


def test_la_copia_del_repositorio_contiene_el_contrato_compartido() -> None:
    """Every section of shared/contrato.md is in docs/contrato.md, word for word."""
    candidatos = [REPO.parent / "shared" / "contrato.md", Path("/work/shared/contrato.md")]
    compartido = next((c for c in candidatos if c.exists()), None)
    if compartido is None:
        pytest.skip("no copy of shared/contrato.md beside the repository")
    nuestro = DOC.read_text(encoding="utf-8")
    for seccion in _secciones(compartido.read_text(encoding="utf-8")):
        assert seccion in nuestro, seccion.splitlines()[0]


def test_la_tabla_de_topics_dice_lo_que_crea_el_worker() -> None:
    filas = re.findall(r"^\| `([a-z._]+)` \| (delete|compact) \|", DOC.read_text(), re.M)
    assert dict(filas) == {t: c["cleanup.policy"] for t, c in topic_configs(Settings()).items()}


def test_la_tabla_de_cabeceras_nombra_las_del_codigo() -> None:
    filas = re.findall(r"^\| `([a-z_]+)` \| (?:every output|outcomes)", DOC.read_text(), re.M)
    nombres = [CABECERA_ESQUEMA, CABECERA_ESQUEMA_VERSION, CABECERA_SKU, CABECERA_VERSION]
    assert sorted(filas) == sorted([*nombres, CABECERA_EVENT_ID])


def test_el_readme_enlaza_la_copia_del_repositorio() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "](docs/contrato.md)" in readme
    assert "../shared/" not in readme
