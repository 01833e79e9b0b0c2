"""``revision.almacen.recalificaciones``: every ``--recalificar`` run recorded, and the evaluator
variants tried on the same labels counted from them (pure counting; the store on SQLite and
PostgreSQL)."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from harness.estados_puerta import clave_fake
from revision.almacen.recalificaciones import Corrida, Recalificaciones, contar, por_clave


def test_contar_variantes_en_las_mismas_etiquetas() -> None:
    filas = [
        ("r1", "almacen:g", "k1", 1.0, 0.05),
        ("r2", "almacen:g", "k1", 2.0, 0.05),  # the same variant again: one variant, two runs
        ("r3", "almacen:g", "k2", 3.0, 0.05),
        ("r3", "conjunto:c", "k2", 3.0, 0.05),  # one run on two label sets
        ("r4", "conjunto:c", "k3", 4.0, 0.01),
        ("r5", "almacen:otro", "k9", 5.0, 0.05),  # another generator's labels
    ]
    solo = contar(filas, {"almacen:g"})
    assert (solo.n, solo.claves, solo.corridas) == (2, ("k1", "k2"), 3)
    assert solo.azar == pytest.approx(0.1)  # the union bound: each variant's δ
    ambas = contar(filas, {"almacen:g", "conjunto:c"})
    assert (ambas.n, ambas.corridas, ambas.azar) == (3, 4, pytest.approx(0.11))
    assert contar(filas, {"nada"}).n == 0
    assert contar([(f"r{i}", "e", f"k{i}", float(i), 0.05) for i in range(30)], {"e"}).azar == 1.0
    claves = por_clave(filas)
    # k2 was certified on both label sets, so everything tried on either counts for it
    assert claves["k2"].n == 3 and claves["k1"].n == 2 and claves["k9"].n == 1


async def test_registrar_y_contar_en_el_almacen(dsn: str | None, tmp_path: Path) -> None:
    etiquetas = f"almacen:{uuid.uuid4().hex[:16]}"
    clave = clave_fake()
    otra = clave.model_copy(update={"prompt_evaluador_sha256": uuid.uuid4().hex * 2})

    def corrida(c: object, hecha_en: float, publicar: bool) -> Corrida:
        return Corrida(
            corrida=uuid.uuid4().hex, etiquetas=(etiquetas,), clave=c,  # type: ignore[arg-type]
            hecha_en=hecha_en, conservadas=31, descartadas={"reintentaria": 2},
            resultado="certificada", publicar=publicar, delta=0.05,
        )  # fmt: skip

    almacen = await Recalificaciones.abrir(dsn, tmp_path)
    try:
        await almacen.registrar(corrida(clave, 1.0, publicar=False))  # a dry run counts
        assert (await almacen.variantes({etiquetas})).n == 1
        await almacen.registrar(corrida(clave, 2.0, publicar=True))
        await almacen.registrar(corrida(otra, 3.0, publicar=True))
        variantes = await almacen.variantes({etiquetas})
        assert variantes.claves == (clave.texto(), otra.texto())
        assert (variantes.n, variantes.corridas) == (2, 3)
        assert (await almacen.por_clave())[otra.texto()].n == 2
    finally:
        await almacen.cerrar()
    # durable: a new connection (the next run, the app) reads the same
    almacen = await Recalificaciones.abrir(dsn, tmp_path)
    try:
        assert (await almacen.variantes({etiquetas})).n == 2
    finally:
        await almacen.cerrar()
