"""The gate audit file: the shapes a gate file may take, read back as states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.estados_puerta import clave_fake, estado
from puerta.auditoria import estados_de_archivo


def test_el_archivo_de_auditoria_en_sus_formas(tmp_path: Path) -> None:
    abierta = estado(clave_fake(), umbral=0.7, familia="zapatillas")
    dump = abierta.model_dump(mode="json")
    formas = [
        {"puertas": [{"estado": dump, "certificacion": {}}]},
        {"estados": [dump]},
        [dump],
        dump,
    ]
    for i, forma in enumerate(formas):
        ruta = tmp_path / f"p{i}.json"
        ruta.write_text(json.dumps(forma), encoding="utf-8")
        assert estados_de_archivo(ruta) == {abierta.id: abierta}, forma
    mala = tmp_path / "mala.json"
    mala.write_text('[{"familia": "x"}]', encoding="utf-8")
    with pytest.raises(ValueError, match="not a gate state"):
        estados_de_archivo(mala)
