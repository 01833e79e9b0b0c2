"""The certifier's stored sequence states (revision/certificador/secuencias.py), on SQLite and
PostgreSQL: advanced round after round by the newly decided prefix only, across app restarts and a
restart after a closure, they equal a recomputation from scratch over the whole store bit for bit;
the page's counts equal the full scan's; the migration fills the sequences of a store in
use."""

from __future__ import annotations

import json
import random
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from criterios import CRITERIOS_VERSION
from esquemas.constantes import (
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_COTA_BAJA,
    MOTIVO_RECHAZADA,
    MOTIVO_SIN_GARANTIA,
    OBJETIVO_PUERTA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from harness.revisor import estado_abierto, ficha_en_revision
from harness.secuencia import secuencia_de_cero
from puerta.secuencial import (
    REJILLA,
    avanzar,
    certificar_secuencia,
    inicial,
)
from revision.almacen import decisiones as dec
from revision.almacen.cola import Almacen, Cierre, ItemNuevo
from revision.almacen.flujo import llegada_de
from revision.certificador.apertura import Apertura
from revision.certificador.secuencias import AlmacenSecuencias

FAMILIAS = ("zapatillas", "botellas", "camisetas")


@pytest.fixture
async def almacen(dsn: str | None, tmp_path: Path):
    a = await Almacen.abrir(dsn, tmp_path)
    yield a
    await a.cerrar()


def _clave() -> ClavePuerta:
    return ClavePuerta(
        modelo=f"m-{uuid.uuid4().hex[:8]}",
        prompt_evaluador_sha256="e" * 64,
        criterios_version=CRITERIOS_VERSION,
        modo_evaluador="veredicto",
        prompt_generador_sha256="g" * 64,
    )


def _registro(rng: random.Random, clave: ClavePuerta) -> dict[str, Any]:
    """A shadow-mode ficha of a random family: mostly high scores, some under the grid, some
    without a score, some whose code checks failed."""
    azar = rng.random()
    puntuacion = (
        None if azar < 0.05 else (rng.uniform(0.1, 0.5) if azar < 0.15 else rng.uniform(0.5, 1.0))
    )
    motivo = MOTIVO_RECHAZADA if rng.random() < 0.08 else MOTIVO_SIN_GARANTIA
    registro = ficha_en_revision(
        f"S-{uuid.uuid4().hex[:10]}",
        familia=rng.choice(FAMILIAS),
        motivo=motivo,
        puntuaciones=(0.2, puntuacion),
    )
    registro["clave"] = clave.model_dump(mode="json")
    return registro


async def _llegan(
    almacen: Almacen, registros: list[dict[str, Any]], estados: dict[str, EstadoPuerta]
) -> None:
    for r in registros:
        await almacen.guardar_item(
            ItemNuevo.de_registro(r, "revision", r["motivo"], []),
            time.time(),
            llegada_de(r, "revision", estados),
        )


async def _decidir(almacen: Almacen, registro: dict[str, Any], decision: str) -> None:
    item = await almacen.item(registro["event_id"])
    if item is None or item.estado != "abierta":
        return
    ahora = time.time()
    await almacen.decidir(
        item,
        Cierre(decision, [], "ana", ahora, dec.decision_de(item, decision, "ana", ahora), None),
    )


class _Topico:
    def __init__(self) -> None:
        self.estados: dict[str, EstadoPuerta] = {}

    async def escribir(self, estado: EstadoPuerta) -> None:
        """Nothing opens here: a round's openings are not what this test measures."""


async def _comparar(almacen: Almacen, apertura: Apertura, clave: ClavePuerta) -> int:
    """Every sequence of ``clave`` the certifier holds equals the recomputation from scratch;
    how many were compared."""
    filas = [f for f in await almacen.secuencias() if f.clave == clave]
    reinicios = await almacen.reinicios()
    comparadas = 0
    for sec in apertura.secuencias:
        if sec.clave != clave:
            continue
        propias = (
            filas
            if sec.familia == FAMILIA_TODAS
            else [f for f in filas if f.familia == sec.familia]
        )
        desde = reinicios.get((FAMILIA_TODAS, clave.texto()), 0)
        if sec.familia != FAMILIA_TODAS:
            desde = max(desde, reinicios.get((sec.familia, clave.texto()), 0))
        prefijo, llegadas, decididas, pendientes, bloqueo = secuencia_de_cero(propias, desde)
        assert sec.resultado == certificar_secuencia(prefijo, OBJETIVO_PUERTA, DELTA_PUERTA)
        assert (sec.llegadas, sec.decididas, sec.pendientes, sec.bloqueo) == (
            llegadas,
            decididas,
            pendientes,
            bloqueo,
        ), sec.familia
        assert sec.desde == desde
        # The state itself, bit for bit: the same numbers as one advance over the whole prefix
        # (positions aside: the stored state consumed the undecidable rows too).
        una_vez = avanzar(
            inicial(OBJETIVO_PUERTA, DELTA_PUERTA, REJILLA, desde), enumerate(prefijo, start=desde)
        )
        assert sec.estado.umbrales == una_vez.umbrales
        assert sec.estado.decididas == una_vez.decididas
        comparadas += 1
    return comparadas


async def test_avanzar_en_rondas_y_reinicios_es_recalcular(almacen):
    """Fichas arrive and are decided (out of order, some obsolete) over many rounds; the app
    restarts twice (new certifiers on the same store) and a gate is closed by the online bound
    once; after every round each sequence equals the recomputation from scratch."""
    rng = random.Random(3838)
    clave = _clave()
    topico = _Topico()
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    registros: list[dict[str, Any]] = []
    for ronda in range(12):
        nuevos = [_registro(rng, clave) for _ in range(rng.randint(5, 25))]
        await _llegan(almacen, nuevos, topico.estados)
        registros += nuevos
        abiertos = [r for r in registros if rng.random() < 0.5]
        rng.shuffle(abiertos)  # people decide in any order
        for r in abiertos:
            await _decidir(almacen, r, rng.choice(["aprobada"] * 8 + ["rechazada", "editada"]))
        if ronda % 4 == 3:  # a newer version closes an older item as obsolete
            viejo = rng.choice(registros)
            nuevo = dict(viejo, event_id=f"ev-{uuid.uuid4().hex[:8]}", version=2)
            await _llegan(almacen, [nuevo], topico.estados)
            registros.append(nuevo)
        if ronda in (4, 8):  # a restart of the app: a new certifier on the stored states
            apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
        if ronda == 6:  # the online bound closed zapatillas: its sequence starts again
            cerrada = estado_abierto(familia="zapatillas").model_copy(
                update={
                    "clave": clave,
                    "abierta": False,
                    "umbral": None,
                    "motivo": MOTIVO_PUERTA_COTA_BAJA,
                    "actualizada_en": datetime.now(UTC),
                }
            )
            topico.estados[cerrada.id] = cerrada
        await apertura.revisar()
        assert await _comparar(almacen, apertura, clave) == len(FAMILIAS) + 1
    reinicio = (await almacen.reinicios())[("zapatillas", clave.texto())]
    zapatillas = next(
        s for s in apertura.secuencias if s.familia == "zapatillas" and s.clave == clave
    )
    assert zapatillas.desde == reinicio > 0

    # Every ficha decided: the stored states reach the end, and a page's in-memory advance
    # (no write) is the same.
    for r in registros:
        await _decidir(almacen, r, "aprobada")
    await apertura.revisar()
    assert await _comparar(almacen, apertura, clave) == len(FAMILIAS) + 1
    assert all(
        s.bloqueo is None and s.pendientes == 0 for s in apertura.secuencias if s.clave == clave
    )
    lectora = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    await lectora.calcular()
    assert [s for s in lectora.secuencias if s.clave == clave] == [
        s for s in apertura.secuencias if s.clave == clave
    ]


async def test_la_ronda_lee_solo_lo_nuevo(almacen):
    """A round reads the rows after each stored position, not the history: with the states
    stored, advancing over a store where old rows are gone from the reads costs nothing and
    changes nothing (the rows before the position are never read again)."""
    rng = random.Random(29)
    clave = _clave()
    topico = _Topico()
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    registros = [_registro(rng, clave) for _ in range(40)]
    await _llegan(almacen, registros, topico.estados)
    for r in registros:
        await _decidir(almacen, r, "aprobada")
    await apertura.revisar()
    antes = {s.id: s for s in apertura.secuencias if s.clave == clave}
    leidas: list[int] = []
    store = AlmacenSecuencias(almacen.database)
    original = store.filas_tras

    async def contar(clave_id: str, familia: str, posicion: int, limite: int = 1000):
        filas = await original(clave_id, familia, posicion, limite)
        if clave_id == clave.texto():  # other tests' keys share the PostgreSQL tables
            leidas.append(len(filas))
        return filas

    apertura._store = store
    store.filas_tras = contar  # type: ignore[method-assign]
    await apertura.revisar()
    assert sum(leidas) == 0  # nothing new: not one row read
    assert {s.id: s for s in apertura.secuencias if s.clave == clave} == antes
    nuevos = [_registro(rng, clave) for _ in range(3)]
    await _llegan(almacen, nuevos, topico.estados)
    for r in nuevos:
        await _decidir(almacen, r, "aprobada")
    leidas.clear()
    await apertura.revisar()
    assert 0 < sum(leidas) <= 2 * len(nuevos)  # each row read by its family and by "*"


async def test_la_migracion_4_sobre_un_almacen_en_uso(tmp_path):
    """A store at migration 3 with shadow evidence: after migrating, its sequences are known
    (each family and the pooled one) with no state yet, and the certifier advances them over
    the evidence already stored."""
    import sqlite3

    import migraciones
    from revision.almacen.migrations import ESQUEMA

    conn = sqlite3.connect(tmp_path / "revision.sqlite", isolation_level=None)
    migraciones.migrar_sqlite(
        conn, migraciones.Esquema(ESQUEMA.nombre, ESQUEMA.tabla, ESQUEMA.migraciones[:4])
    )
    clave = _clave()
    rng = random.Random(4)
    registros = [_registro(rng, clave) for _ in range(12)]
    for i, r in enumerate(registros):
        conn.execute(
            "insert into revision_items values (?, 'revision', ?, ?, 1, ?, '[]', '{}', ?, "
            "'decidida', ?)",
            (r["event_id"], r["motivo"], r["sku"], r["familia"], i, i),
        )
        conn.execute(
            "insert into revision_evidencias values (?, ?, ?, ?, ?, ?, 1, ?, ?)",
            (
                r["event_id"],
                clave.texto(),
                clave.model_dump_json(),
                r["familia"],
                r["historial"][-1]["puntuacion"],
                int(r["motivo"] == MOTIVO_SIN_GARANTIA),
                i,
                i,
            ),
        )
        conn.execute(
            "insert into revision_decisiones values (?, 'revision', 'aprobada', ?, '[]', 'ana', "
            "?, 0, '{}', null, 1)",
            (r["event_id"], r["familia"], i),
        )
    conn.close()
    almacen = await Almacen.abrir(None, tmp_path)
    try:
        guardadas = await AlmacenSecuencias(almacen.database).listar()
        familias = {r["familia"] for r in registros}
        assert {(g.familia, g.estado) for g in guardadas} == {
            (f, None) for f in familias | {FAMILIA_TODAS}
        }
        apertura = Apertura(almacen, dict, _Topico().escribir)
        await apertura.revisar()
        conjunta = next(s for s in apertura.secuencias if s.familia == FAMILIA_TODAS)
        assert conjunta.decididas == sum(
            1
            for r in registros
            if r["motivo"] == MOTIVO_SIN_GARANTIA
            and (r["historial"][-1]["puntuacion"] or 0) >= min(REJILLA)
        )
        assert all(g.estado is not None for g in await AlmacenSecuencias(almacen.database).listar())
    finally:
        await almacen.cerrar()


def _estado_v15(clave: ClavePuerta, posicion: int) -> str:
    """A state as v1.5 stored it (format ``fichas-secuencia/1``: obsolete fichas skipped, a
    plug-in capital alone, no weights), written by hand: what an upgraded store holds."""
    umbrales = [
        {
            "umbral": u,
            "n": 30,
            "aprobadas": 30,
            "log_capital": 2.5,
            "log_maximo": 3.1,
            "excluido": False,
        }
        for u in REJILLA
    ]
    return json.dumps(
        {
            "formato": "fichas-secuencia/1",
            "objetivo": OBJETIVO_PUERTA,
            "delta": DELTA_PUERTA,
            "apuestas_exclusion": [0.5, 0.75],
            "desde": 0,
            "posicion": posicion,
            "decididas": 30,
            "umbrales": umbrales,
        },
        sort_keys=True,
        separators=(",", ":"),
    )


async def _guardadas(almacen: Almacen, clave: ClavePuerta) -> dict[str, str | None]:
    """The stored state texts of ``clave``'s sequences, by family."""
    rows = await almacen.database.run(
        "select familia, estado from revision_secuencias where clave_id = $1", (clave.texto(),)
    )
    return {str(f): None if e is None else str(e) for f, e in rows.rows}


async def test_un_estado_de_la_v15_se_recalcula_desde_las_filas(almacen):
    """A store upgraded from v1.5 holds format-1 states (which skipped obsolete fichas): the
    first round reads none of them, recomputes every sequence from its rows (obsolete ones now
    failures) and writes the result in their place, although its position is not ahead of the
    stored one; the result equals a fresh computation, and a restart reads it back as is."""
    rng = random.Random(1515)
    clave = _clave()
    topico = _Topico()
    registros = [_registro(rng, clave) for _ in range(60)]
    await _llegan(almacen, registros, topico.estados)
    for r in registros[:40]:
        await _decidir(almacen, r, rng.choice(["aprobada"] * 8 + ["rechazada"]))
    viejo = registros[45]
    await _llegan(almacen, [dict(viejo, event_id=f"ev-{uuid.uuid4().hex[:8]}", version=2)], {})
    filas = [f for f in await almacen.secuencias() if f.clave == clave]
    final = max(f.orden for f in filas)
    v15 = _estado_v15(clave, final)  # as far as the rows go: no write "ahead" of it
    await almacen.database.run(
        "update revision_secuencias set estado = $2, posicion = $3 where clave_id = $1",
        (clave.texto(), v15, final),
    )
    listadas = [g for g in await AlmacenSecuencias(almacen.database).listar() if g.clave == clave]
    assert {(g.estado, g.anticuado) for g in listadas} == {(None, v15)}

    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    await apertura.revisar()
    assert await _comparar(almacen, apertura, clave) == len(FAMILIAS) + 1
    guardadas = await _guardadas(almacen, clave)
    assert v15 not in guardadas.values()
    for sec in apertura.secuencias:
        if sec.clave == clave:
            assert guardadas[sec.familia] == sec.estado.a_json()
    otra = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)  # a restart
    await otra.calcular()
    assert [s for s in otra.secuencias if s.clave == clave] == [
        s for s in apertura.secuencias if s.clave == clave
    ]


async def test_un_estado_de_un_formato_posterior_no_se_pisa(almacen):
    """A state a newer build wrote (a later format, during a rolling upgrade) is never written
    over: this build recomputes in memory, and the stored text stays."""
    rng = random.Random(16)
    clave = _clave()
    topico = _Topico()
    registros = [_registro(rng, clave) for _ in range(10)]
    await _llegan(almacen, registros, topico.estados)
    for r in registros:
        await _decidir(almacen, r, "aprobada")
    posterior = json.dumps({"formato": "fichas-secuencia/3", "lo_que_sea": 1})
    await almacen.database.run(
        "update revision_secuencias set estado = $2 where clave_id = $1",
        (clave.texto(), posterior),
    )
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    await apertura.revisar()
    assert await _comparar(almacen, apertura, clave) >= 2
    assert set((await _guardadas(almacen, clave)).values()) == {posterior}
