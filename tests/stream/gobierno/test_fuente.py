"""The worker's gate source and its start-up reasons, on fixed states (pure)."""

from __future__ import annotations

from harness.estados_puerta import clave_fake, estado
from stream.gobierno.fuente import fija, razon


def test_razon_nombra_la_clave_en_uso_y_las_vistas() -> None:
    clave, otra = clave_fake(), clave_fake(modelo="otro")
    abierta = estado(clave, umbral=0.7, familia="zapatillas")
    assert razon("zapatillas", clave, {abierta.id: abierta})[0] is True
    ajena = estado(otra, umbral=0.7, familia="zapatillas")
    abierta_, texto = razon("zapatillas", clave, {ajena.id: ajena})
    assert not abierta_
    assert otra.texto() in texto and f"running key is {clave.texto()}" in texto
    assert "no gate record at all" in razon("zapatillas", clave, {})[1]
    cerrada = estado(clave, abierta=False, familia="zapatillas")
    assert "closed by its record" in razon("zapatillas", clave, {cerrada.id: cerrada})[1]
    # v1.5: a pooled gate alone governs no family, and the reason says so
    conjunta = estado(clave, umbral=0.7)
    abierta_, texto = razon("zapatillas", clave, {conjunta.id: conjunta})
    assert not abierta_ and "a pooled gate alone governs no family" in texto
    fuente = fija(clave, {abierta.id: abierta})
    aplicada = fuente.umbral("zapatillas")
    assert aplicada is not None and aplicada.umbral == 0.7 and aplicada.clave == clave
    assert fija(clave, {ajena.id: ajena}).umbral("zapatillas") is None
