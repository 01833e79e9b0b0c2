"""The gate audit file: the shapes a gate file may take, read back as states."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esquemas.estado_puerta import EstadoPuerta
from harness.estados_puerta import clave_fake, estado
from harness.version_siguiente import siguiente
from puerta.auditoria import estados_de_archivo
from puerta.resolucion import resolver
from puerta.retencion import registro_retencion


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


def test_un_archivo_de_la_version_siguiente_se_lee_y_lo_que_no_conoce_cierra(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """v1.6: a gate file written by a later version (a field at every level) is read; a state
    whose motivo this version does not know closes its gate (a hold's: held), with a warning,
    as on the topic; a file that holds no gate state is still refused."""
    clave = clave_fake()
    abierta = estado(clave, umbral=0.7, familia="zapatillas")
    cerrada = estado(clave, umbral=0.7, familia="tv")
    retenida = registro_retencion("tv", clave, True, "ana", None, cerrada.actualizada_en)
    forma = {
        "puertas": [
            {"id": e.id, "estado": siguiente(EstadoPuerta, e.model_dump(mode="json"), nuevos)}
            for e, nuevos in (
                (abierta, {}),
                (cerrada, {"motivo": "abierta_por_mezcla"}),
                (retenida, {"motivo": "retenida_hasta"}),
            )
        ]
    }
    ruta = tmp_path / "v1_7.json"
    ruta.write_text(json.dumps(forma), encoding="utf-8")
    estados = estados_de_archivo(ruta)
    assert estados[abierta.id] == abierta and cerrada.id not in estados
    assert resolver("tv", clave, estados).razon == "retenida"
    assert "abierta_por_mezcla" in caplog.text and "retenida_hasta" in caplog.text
