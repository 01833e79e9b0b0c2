"""The gate that closes itself, without Kafka: the sample's verdicts in publication order, the
bound and the change detector (each at δ/2), the closing rule, recall; on SQLite and PostgreSQL,
verdicts decided out of order consumed in publication order, and a sampled item no newer version
closes."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from esquemas.constantes import (
    DELTA_PUERTA,
    MOTIVO_PUERTA_CAMBIO,
    MOTIVO_PUERTA_COTA_BAJA,
    OBJETIVO_PUERTA,
)
from esquemas.estado_puerta import EstadoPuerta
from harness.revisor import estado_abierto, ficha_en_revision, muestra_publicada, puerta_aplicada
from harness.secuencia import incorrectas_para_cerrar
from puerta.cierre import Cierre as CierrePuerta
from puerta.cota import CotaEnLinea
from puerta.deteccion import detector, observar
from revision.almacen import decisiones as dec
from revision.almacen.cola import Almacen, Cierre, ItemNuevo
from revision.certificador import retenidas
from revision.certificador.publicacion import FilaMuestra, fila_de
from revision.certificador.vigilancia import Vigilancia, actuales, por_cerrar, seguir

AHORA = datetime(2026, 12, 2, tzinfo=UTC)


def _muestra(estado: EstadoPuerta | None, i: int = 0) -> dict:
    puerta = None if estado is None else puerta_aplicada(estado)
    return muestra_publicada(f"ZAP-V-{i}", puerta=puerta)


def _filas(veredictos: Iterable[tuple[str | None, dict[str, Any]]]) -> list[FilaMuestra]:
    """Sample items in the app's arrival order, as decided now (None: nobody decided it)."""
    estados = {None: "abierta", "obsoleta": "obsoleta"}
    return [
        fila_de(i, d["event_id"], estados.get(decision, "decidida"), decision, d)
        for i, (decision, d) in enumerate(veredictos)
    ]


CIERRAN = incorrectas_para_cerrar()  # the bound at δ/2 closes after this many in a row


def test_solo_cuentan_las_publicaciones_con_puerta_y_los_veredictos():
    abierto = estado_abierto()
    seg = seguir(
        _filas(
            [
                ("incorrecta", _muestra(None)),  # published without a gate: says nothing of λ
                ("obsoleta", _muestra(abierto)),  # closed before v1.6: no verdict, passed over
                ("correcta", _muestra(abierto)),
                ("incorrecta", _muestra(abierto)),
            ]
        )
    )
    ((cert, s),) = seg.items()
    assert cert.id == abierto.id and cert.umbral == abierto.umbral
    assert (s.veredictos, s.incorrectas, s.pendientes, s.bloqueo) == (2, 1, 0, None)


def test_una_racha_de_incorrectas_cierra_la_puerta_abierta_una_vez():
    abierto = estado_abierto()
    antes = seguir(_filas([("incorrecta", _muestra(abierto, i)) for i in range(CIERRAN - 1)]))
    assert por_cerrar(antes, {abierto.id: abierto}, AHORA) == []
    seg = seguir(_filas([("incorrecta", _muestra(abierto, i)) for i in range(CIERRAN)]))
    (s,) = seg.values()
    assert s.bajo_objetivo and s.cota_superior < abierto.objetivo
    assert s.motivo == MOTIVO_PUERTA_COTA_BAJA
    ((_, cerrado),) = por_cerrar(seg, {abierto.id: abierto}, AHORA)
    assert cerrado.id == abierto.id and cerrado.clave == abierto.clave
    assert cerrado.familia == abierto.familia
    assert not cerrado.abierta and cerrado.umbral is None
    assert cerrado.motivo == MOTIVO_PUERTA_COTA_BAJA
    assert cerrado.cota_inferior == s.cota_inferior == 0.0
    assert (cerrado.n, cerrado.k, cerrado.objetivo) == (abierto.n, abierto.k, abierto.objetivo)
    assert f"{CIERRAN} veredictos en orden de publicación, {CIERRAN} incorrectos" in (
        cerrado.origen_datos
    )
    # Once the topic shows it closed, nothing more is published.
    assert por_cerrar(seg, {abierto.id: cerrado}, AHORA) == []
    # No record at all: the gate is closed already.
    assert por_cerrar(seg, {}, AHORA) == []


def test_muchas_correctas_no_cierran_y_la_cota_sube():
    abierto = estado_abierto()
    seg = seguir(_filas([("correcta", _muestra(abierto, i)) for i in range(40)]))
    (s,) = seg.values()
    assert not s.bajo_objetivo and 0.8 < s.cota_inferior < 1.0
    assert por_cerrar(seg, {abierto.id: abierto}, AHORA) == []


def test_una_sola_incorrecta_no_cierra():
    """One error in the first verdicts is what a 90 % gate does now and then."""
    abierto = estado_abierto()
    filas = [("incorrecta", _muestra(abierto))] + [("correcta", _muestra(abierto, 1))] * 5
    assert por_cerrar(seguir(_filas(filas)), {abierto.id: abierto}, AHORA) == []


def test_una_certificacion_nueva_empieza_de_cero_y_no_se_cierra_por_la_vieja():
    vieja = estado_abierto()
    nueva = estado_abierto(umbral=0.9, actualizada_en=vieja.actualizada_en + timedelta(days=1))
    malas = [("incorrecta", _muestra(vieja, i)) for i in range(CIERRAN)]
    assert por_cerrar(seguir(_filas(malas)), {nueva.id: nueva}, AHORA) == []
    seg = seguir(_filas([*malas, ("correcta", _muestra(nueva, 9))]))
    (actual,) = actuales(seg).values()
    assert actual.certificacion.umbral == 0.9 and actual.veredictos == 1


def test_el_detector_cierra_tras_una_racha_buena_y_una_caida():
    """After 1,000 correct verdicts the precision drops to 0.7: the bound since certification
    stays far above the objective, the change detector closes the gate (cambio_detectado)."""
    abierto = estado_abierto()
    caida = itertools.cycle(["correcta"] * 7 + ["incorrecta"] * 3)
    veredictos = ["correcta"] * 1000
    cierre = CierrePuerta(OBJETIVO_PUERTA, DELTA_PUERTA)
    for _ in veredictos:
        cierre.anotar(True)
    while cierre.motivo() is None:
        v = next(caida)
        veredictos.append(v)
        cierre.anotar(v == "correcta")
    seg = seguir(_filas((v, _muestra(abierto, i)) for i, v in enumerate(veredictos)))
    (s,) = seg.values()
    assert s.motivo == MOTIVO_PUERTA_CAMBIO and len(veredictos) - 1000 < 300
    # The bound alone, at the same δ/2 on the same verdicts, is nowhere near closing.
    cota = CotaEnLinea(DELTA_PUERTA / 2)
    for v in veredictos:
        cota.actualizar(v == "correcta")
    assert cota.cota_superior >= OBJETIVO_PUERTA and s.cota_superior == cota.cota_superior
    ((_, cerrado),) = por_cerrar(seg, {abierto.id: abierto}, AHORA)
    assert cerrado.motivo == MOTIVO_PUERTA_CAMBIO and not cerrado.abierta
    assert "detector de cambios" in cerrado.origen_datos and "log R" in cerrado.origen_datos


def test_un_veredicto_sin_decidir_retiene_los_siguientes():
    """Per certification, its items in publication order are consumed up to the first nobody
    decided: later verdicts wait behind it (counted, and it named), then count in order."""
    abierto = estado_abierto()
    datos = [_muestra(abierto, i) for i in range(4)]
    seg = seguir(
        _filas(
            [("incorrecta", datos[0]), (None, datos[1])] + [("incorrecta", d) for d in datos[2:]]
        )
    )
    (s,) = seg.values()
    assert (s.veredictos, s.pendientes, s.retenidos) == (1, 1, 2)
    assert s.bloqueo is not None and s.bloqueo.event_id == datos[1]["event_id"]


def test_vigilancia_escribe_el_cierre_una_vez_y_cuenta():
    abierto = estado_abierto(familia="zapatillas")
    estados = {abierto.id: abierto}
    escritos: list[EstadoPuerta] = []

    async def escribir(estado: EstadoPuerta) -> None:
        escritos.append(estado)

    async def caso() -> None:
        vig = Vigilancia(lambda: estados, escribir)
        filas = _filas([("incorrecta", _muestra(abierto, i)) for i in range(CIERRAN + 1)])
        for fila in filas[: CIERRAN - 1]:
            vig.llega(fila)
        assert await vig.revisar() == []
        vig.llega(filas[CIERRAN - 1])
        (cerrado,) = await vig.revisar()
        # The reader has not caught up yet: one more bad verdict writes nothing more.
        vig.llega(filas[CIERRAN])
        assert await vig.revisar() == []
        assert escritos == [cerrado]
        assert vig.cerradas == {("zapatillas", abierto.clave.texto(), MOTIVO_PUERTA_COTA_BAJA): 1}

    asyncio.run(caso())


def test_un_fallo_al_escribir_se_reintenta():
    abierto = estado_abierto()
    intentos: list[EstadoPuerta] = []

    async def escribir(estado: EstadoPuerta) -> None:
        intentos.append(estado)
        if len(intentos) == 1:
            raise ConnectionError("broker down")

    async def caso() -> None:
        vig = Vigilancia(lambda: {abierto.id: abierto}, escribir)
        for fila in _filas([("incorrecta", _muestra(abierto, i)) for i in range(CIERRAN)]):
            vig.llega(fila)
        with pytest.raises(ConnectionError):
            await vig.revisar()
        await vig.revisar_o_registrar()
        assert len(intentos) == 2
        assert vig.cerradas == {("*", abierto.clave.texto(), MOTIVO_PUERTA_COTA_BAJA): 1}

    asyncio.run(caso())


def test_muestra_de_retenidas_es_una_proporcion_estable():
    ids = [f"ev-{i}" for i in range(4000)]
    elegidos = [e for e in ids if retenidas.en_muestra(e, 0.25)]
    assert 0.22 < len(elegidos) / len(ids) < 0.28
    assert elegidos == [e for e in ids if retenidas.en_muestra(e, 0.25)]
    assert not any(retenidas.en_muestra(e, 0.0) for e in ids)
    assert all(retenidas.en_muestra(e, 1.0) for e in ids)


def test_recall_de_la_puerta():
    abierto = estado_abierto()
    veredictos = [
        ("correcta", _muestra(abierto, 0)),
        ("correcta", _muestra(abierto, 1)),
        ("correcta", _muestra(abierto, 2)),
        ("correcta", _muestra(None, 3)),  # no gate: not a publication of the gate
        ("incorrecta", _muestra(abierto, 4)),
    ]
    retenidas_ = [
        ("r1", "zapatillas", "aprobada"),  # the gate kept back a publishable ficha
        ("r2", "zapatillas", "editada"),
        ("r3", "zapatillas", "rechazada"),
        ("r4", "zapatillas", None),
        ("r5", "botellas", "obsoleta"),
    ]
    correctas = retenidas.correctas_publicadas(veredictos)
    assert correctas == {"zapatillas": 3}
    figuras = retenidas.calcular(correctas, retenidas_, proporcion=1.0)
    zap = figuras["zapatillas"]
    assert zap.correctas_publicadas == 3 and zap.retenidas_aprobadas == 1
    assert zap.valor == pytest.approx(3 / 4)
    assert zap.retenidas[retenidas.PENDIENTE] == 1
    assert figuras["botellas"].valor is None
    assert figuras["todas"].retenidas["obsoleta"] == 1
    texto = retenidas.render_texto(figuras)
    assert "zapatillas" in texto and "0.75" in texto
    # Outside the app's draw a held-back item does not count.
    assert retenidas.calcular(correctas, retenidas_, proporcion=0.0)["zapatillas"].valor == 1.0


def test_una_familia_cubierta_alimenta_su_cota_y_la_de_la_conjunta():
    """A verdict on a covered family's publication counts for its covered record's
    certification and for the pooled one it rests on; a run of bad ones closes both (the pooled
    record with its own n and k), and a gate certified on its own data feeds only itself."""
    conjunta = estado_abierto(umbral=0.5)
    cubierta = conjunta.model_copy(
        update={
            "familia": "botellas",
            "motivo": "cubierta_por_conjunta",
            "n": 20,
            "k": 0,
            "conjunta_actualizada_en": conjunta.actualizada_en,
            "actualizada_en": conjunta.actualizada_en + timedelta(minutes=1),
        }
    )
    propia = estado_abierto(familia="zapatillas")
    seg = seguir(
        _filas(
            [
                ("incorrecta", muestra_publicada(f"B-{i}", puerta=puerta_aplicada(cubierta)))
                for i in range(CIERRAN)
            ]
            + [("correcta", muestra_publicada("Z-1", puerta=puerta_aplicada(propia)))]
        )
    )
    por_familia = {cert.familia: s for cert, s in seg.items()}
    assert set(por_familia) == {"botellas", "*", "zapatillas"}
    assert (por_familia["botellas"].veredictos, por_familia["*"].veredictos) == (CIERRAN,) * 2
    assert por_familia["zapatillas"].veredictos == 1
    pooled = next(c for c in seg if c.familia == "*")
    assert pooled.certificada_en == conjunta.actualizada_en and pooled.umbral == 0.5
    estados = {e.id: e for e in (conjunta, cubierta, propia)}
    cerrados = {e.familia: e for _, e in por_cerrar(seg, estados, AHORA)}
    assert set(cerrados) == {"botellas", "*"}
    assert (cerrados["*"].n, cerrados["*"].k) == (conjunta.n, conjunta.k)
    assert cerrados["botellas"].motivo == MOTIVO_PUERTA_COTA_BAJA


@pytest.fixture
async def almacen(dsn: str | None, tmp_path):
    a = await Almacen.abrir(dsn, tmp_path)
    yield a
    await a.cerrar()


async def _publicadas(almacen: Almacen, estado: EstadoPuerta, cuantas: int) -> list[dict]:
    """``cuantas`` sampled publications of ``estado``'s gate, stored in this order."""
    datos = []
    for _ in range(cuantas):
        d = muestra_publicada(f"S-{uuid.uuid4().hex[:8]}", puerta=puerta_aplicada(estado))
        nuevo = ItemNuevo.de_registro(d, "muestra", "muestra", [])
        await almacen.guardar_item(dataclasses.replace(nuevo, familia=estado.familia), time.time())
        datos.append(d)
    return datos


async def _veredicto(almacen: Almacen, datos: dict, decision: str) -> None:
    item = await almacen.item(datos["event_id"])
    ahora = time.time()
    cierre = Cierre(
        decision, [], "luis", ahora, dec.decision_de(item, decision, "luis", ahora), None
    )
    assert await almacen.decidir(item, cierre) is not None


async def test_cada_replica_lee_los_veredictos_de_todas(almacen):
    """Verdicts taken on another replica reach this one's monitor from the store (each counted
    once, however often it reads); only the lease holder writes the closure."""
    abierto = estado_abierto(familia=f"f-{uuid.uuid4().hex[:6]}")
    escritos: list[EstadoPuerta] = []

    async def escribir(estado: EstadoPuerta) -> None:
        escritos.append(estado)

    titular = [False]
    vig = Vigilancia(
        lambda: {abierto.id: abierto}, escribir, almacen=almacen, titular=lambda: titular[0]
    )
    await vig.refrescar()
    for datos in await _publicadas(almacen, abierto, CIERRAN):  # taken on the other replica
        await _veredicto(almacen, datos, "incorrecta")
    assert await vig.revisar() == []  # read, but not the holder
    mias = [s for c, s in vig.seguimientos.items() if c.familia == abierto.familia]
    assert [s.veredictos for s in mias] == [CIERRAN]
    await vig.refrescar()  # read again: nothing counted twice
    assert [s.veredictos for s in mias] == [CIERRAN]
    titular[0] = True
    (cerrado,) = await vig.revisar()
    assert cerrado.familia == abierto.familia and escritos == [cerrado]


async def test_los_veredictos_cuentan_en_orden_de_publicacion(almacen):
    """People decide the sampled publications out of order: the later ones first. The monitor
    holds them behind the first one nobody decided (counted and named, what the page and
    /metrics show), then consumes all of them in publication order: the detector ends where
    feeding them in publication order ends, not where decision order would."""
    abierto = estado_abierto(familia=f"f-{uuid.uuid4().hex[:6]}")

    async def escribir(estado: EstadoPuerta) -> None:
        """Nothing closes here."""

    vig = Vigilancia(lambda: {abierto.id: abierto}, escribir, almacen=almacen)
    publicadas = await _publicadas(almacen, abierto, 6)
    decisiones = ["correcta", "incorrecta", "correcta", "correcta", "incorrecta", "incorrecta"]
    orden_decidido = [5, 4, 3, 2, 1]  # the last first; the first is left for later
    for i in orden_decidido:
        await _veredicto(almacen, publicadas[i], decisiones[i])
    await vig.revisar()
    (seg,) = [s for c, s in vig.seguimientos.items() if c.familia == abierto.familia]
    assert (seg.veredictos, seg.pendientes, seg.retenidos) == (0, 1, 5)
    assert seg.bloqueo is not None and seg.bloqueo.event_id == publicadas[0]["event_id"]
    await _veredicto(almacen, publicadas[0], decisiones[0])
    await vig.revisar()
    assert (seg.veredictos, seg.incorrectas, seg.pendientes, seg.bloqueo) == (6, 3, 0, None)

    def log_r(orden: list[int]) -> float:
        estado = detector(OBJETIVO_PUERTA, DELTA_PUERTA / 2)
        for i in orden:
            estado = observar(estado, decisiones[i] == "correcta")
        return estado.log_r

    assert seg.log_r == log_r([0, 1, 2, 3, 4, 5])
    assert seg.log_r != log_r([*orden_decidido, 0])


async def test_una_ficha_de_la_muestra_no_caduca(almacen):
    """A sampled publication was published and seen: a newer version of its SKU does not close
    it as obsolete (a review item of the same SKU is), nor does a sample record that arrives
    after a newer version was seen; its verdict still counts."""
    abierto = estado_abierto(familia=f"f-{uuid.uuid4().hex[:6]}")
    (muestra,) = await _publicadas(almacen, abierto, 1)
    sku = muestra["sku"]
    revision = ficha_en_revision(sku, 1)
    await almacen.guardar_item(
        ItemNuevo.de_registro(revision, "revision", "sin_garantia", []), time.time()
    )
    nueva = ficha_en_revision(sku, 2)
    assert [
        d.event_id
        for d in await almacen.guardar_item(
            ItemNuevo.de_registro(nueva, "revision", "sin_garantia", []), time.time()
        )
    ] == [revision["event_id"]]
    assert (await almacen.item(muestra["event_id"])).estado == "abierta"
    assert await almacen.decision(muestra["event_id"]) is None
    cerradas = await almacen.observar_version(sku, 3, time.time())
    assert [d.event_id for d in cerradas] == [nueva["event_id"]]  # the review item only
    tardia = muestra_publicada(sku, 1, puerta=puerta_aplicada(abierto))  # after v3 was seen
    await almacen.guardar_item(
        dataclasses.replace(
            ItemNuevo.de_registro(tardia, "muestra", "muestra", []), familia=abierto.familia
        ),
        time.time(),
    )
    assert (await almacen.item(tardia["event_id"])).estado == "abierta"
    vig = Vigilancia(lambda: {abierto.id: abierto}, escribir_nada, almacen=almacen)
    for datos in (muestra, tardia):
        await _veredicto(almacen, datos, "correcta")
    await vig.refrescar()
    (seg,) = [s for c, s in vig.seguimientos.items() if c.familia == abierto.familia]
    assert seg.veredictos == 2


async def escribir_nada(estado: EstadoPuerta) -> None:
    """A monitor whose closures are not what the test is about."""


async def test_la_migracion_de_la_muestra_sobre_un_almacen_en_uso(tmp_path):
    """A store from before the sample was numbered, with sample items decided in another order
    than they arrived: after migrating, they are numbered by arrival time and the monitor reads
    their verdicts in that order; the items stored later take the next numbers."""
    import json
    import sqlite3

    import migraciones
    from revision.almacen.migrations import ESQUEMA

    numerar = next(
        i for i, m in enumerate(ESQUEMA.migraciones) if "sample's arrival order" in m.descripcion
    )
    conn = sqlite3.connect(tmp_path / "revision.sqlite", isolation_level=None)
    migraciones.migrar_sqlite(
        conn, migraciones.Esquema(ESQUEMA.nombre, ESQUEMA.tabla, ESQUEMA.migraciones[:numerar])
    )
    abierto = estado_abierto(familia="zapatillas")
    datos = [_muestra(abierto, i) for i in range(4)]
    veredictos = ["correcta", "correcta", "incorrecta", "incorrecta"]
    for i, (d, v) in enumerate(zip(datos, veredictos, strict=True)):
        conn.execute(
            "insert into revision_items (event_id, tipo, motivo, sku, version, familia, "
            "criterios, datos, recibido_en, estado, cerrado_en) values "
            "(?, 'muestra', 'muestra', ?, 1, 'zapatillas', '[]', ?, ?, 'decidida', ?)",
            (d["event_id"], d["sku"], json.dumps(d), 100.0 + i, 200.0 - i),
        )
        conn.execute(
            "insert into revision_decisiones values (?, 'muestra', ?, 'zapatillas', '[]', 'ana', "
            "?, 0, '{}', null, 1)",
            (d["event_id"], v, 200.0 - i),  # decided last first
        )
    conn.close()
    almacen = await Almacen.abrir(None, tmp_path)
    try:
        (nueva,) = await _publicadas(almacen, abierto, 1)
        await _veredicto(almacen, nueva, "incorrecta")
        vig = Vigilancia(lambda: {abierto.id: abierto}, escribir_nada, almacen=almacen)
        await vig.refrescar()
        (seg,) = vig.seguimientos.values()
        assert (seg.veredictos, seg.incorrectas) == (5, 3)

        def log_r(orden: list[str]) -> float:
            estado = detector(OBJETIVO_PUERTA, DELTA_PUERTA / 2)
            for v in orden:
                estado = observar(estado, v == "correcta")
            return estado.log_r

        assert seg.log_r == log_r([*veredictos, "incorrecta"])  # arrival order, the new one last
        assert seg.log_r != log_r([*veredictos[::-1], "incorrecta"])  # not decision order
    finally:
        await almacen.cerrar()
