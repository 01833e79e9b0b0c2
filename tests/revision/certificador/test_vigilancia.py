"""The gate that closes itself, without Kafka: sequences, the closing rule, recall."""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from esquemas.constantes import MOTIVO_PUERTA_COTA_BAJA
from esquemas.estado_puerta import EstadoPuerta
from harness.revisor import estado_abierto, muestra_publicada, puerta_aplicada
from revision.certificador import retenidas
from revision.certificador.vigilancia import Vigilancia, actuales, por_cerrar, seguir

AHORA = datetime(2026, 12, 2, tzinfo=UTC)


def _muestra(estado: EstadoPuerta | None, i: int = 0) -> dict:
    puerta = None if estado is None else puerta_aplicada(estado)
    return muestra_publicada(f"ZAP-V-{i}", puerta=puerta)


def test_solo_cuentan_las_publicaciones_con_puerta_y_los_veredictos():
    abierto = estado_abierto()
    seg = seguir(
        [
            ("incorrecta", _muestra(None)),  # published without a gate: says nothing of λ
            ("obsoleta", _muestra(abierto)),  # not a verdict
            ("correcta", _muestra(abierto)),
            ("incorrecta", _muestra(abierto)),
        ]
    )
    ((cert, s),) = seg.items()
    assert cert.id == abierto.id and cert.umbral == abierto.umbral
    assert (s.veredictos, s.incorrectas) == (2, 1)


def test_una_racha_de_incorrectas_cierra_la_puerta_abierta_una_vez():
    abierto = estado_abierto()
    seg = seguir([("incorrecta", _muestra(abierto, i)) for i in range(2)])
    (s,) = seg.values()
    assert s.bajo_objetivo and s.cota_superior < abierto.objetivo
    ((_, cerrado),) = por_cerrar(seg, {abierto.id: abierto}, AHORA)
    assert cerrado.id == abierto.id and cerrado.clave == abierto.clave
    assert cerrado.familia == abierto.familia
    assert not cerrado.abierta and cerrado.umbral is None
    assert cerrado.motivo == MOTIVO_PUERTA_COTA_BAJA
    assert cerrado.cota_inferior == s.cota_inferior == 0.0
    assert (cerrado.n, cerrado.k, cerrado.objetivo) == (abierto.n, abierto.k, abierto.objetivo)
    assert "2 veredictos, 2 incorrectos" in cerrado.origen_datos
    # Once the topic shows it closed, nothing more is published.
    assert por_cerrar(seg, {abierto.id: cerrado}, AHORA) == []
    # No record at all: the gate is closed already.
    assert por_cerrar(seg, {}, AHORA) == []


def test_muchas_correctas_no_cierran_y_la_cota_sube():
    abierto = estado_abierto()
    seg = seguir([("correcta", _muestra(abierto, i)) for i in range(40)])
    (s,) = seg.values()
    assert not s.bajo_objetivo and 0.8 < s.cota_inferior < 1.0
    assert por_cerrar(seg, {abierto.id: abierto}, AHORA) == []


def test_una_sola_incorrecta_no_cierra():
    """One error in the first verdicts is what a 90 % gate does now and then."""
    abierto = estado_abierto()
    seg = seguir([("incorrecta", _muestra(abierto))] + [("correcta", _muestra(abierto))] * 5)
    assert por_cerrar(seg, {abierto.id: abierto}, AHORA) == []


def test_una_certificacion_nueva_empieza_de_cero_y_no_se_cierra_por_la_vieja():
    vieja = estado_abierto()
    nueva = estado_abierto(umbral=0.9, actualizada_en=vieja.actualizada_en + timedelta(days=1))
    seg = seguir([("incorrecta", _muestra(vieja, i)) for i in range(3)])
    assert por_cerrar(seg, {nueva.id: nueva}, AHORA) == []
    seg = seguir(
        [("incorrecta", _muestra(vieja, i)) for i in range(3)] + [("correcta", _muestra(nueva, 9))]
    )
    (actual,) = actuales(seg).values()
    assert actual.certificacion.umbral == 0.9 and actual.veredictos == 1


def test_vigilancia_escribe_el_cierre_una_vez_y_cuenta():
    abierto = estado_abierto(familia="zapatillas")
    estados = {abierto.id: abierto}
    escritos: list[EstadoPuerta] = []

    async def escribir(estado: EstadoPuerta) -> None:
        escritos.append(estado)

    async def caso() -> None:
        vig = Vigilancia(lambda: estados, escribir)
        vig.reconstruir([("incorrecta", _muestra(abierto, 0))])
        assert await vig.revisar() == []
        vig.anotar("incorrecta", _muestra(abierto, 1))
        (cerrado,) = await vig.revisar()
        # The reader has not caught up yet: a third bad verdict writes nothing more.
        vig.anotar("incorrecta", _muestra(abierto, 2))
        assert await vig.revisar() == []
        assert escritos == [cerrado]
        assert vig.cerradas == {("zapatillas", abierto.clave.texto()): 1}

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
        vig.reconstruir([("incorrecta", _muestra(abierto, i)) for i in range(2)])
        with pytest.raises(ConnectionError):
            await vig.revisar()
        await vig.revisar_o_registrar()
        assert len(intentos) == 2 and vig.cerradas == {("*", abierto.clave.texto()): 1}

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
    certification and for the pooled one it rests on; two bad ones close both (the pooled
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
        [
            ("incorrecta", muestra_publicada(f"B-{i}", puerta=puerta_aplicada(cubierta)))
            for i in range(2)
        ]
        + [("correcta", muestra_publicada("Z-1", puerta=puerta_aplicada(propia)))]
    )
    por_familia = {cert.familia: s for cert, s in seg.items()}
    assert set(por_familia) == {"botellas", "*", "zapatillas"}
    assert (por_familia["botellas"].veredictos, por_familia["*"].veredictos) == (2, 2)
    assert por_familia["zapatillas"].veredictos == 1
    pooled = next(c for c in seg if c.familia == "*")
    assert pooled.certificada_en == conjunta.actualizada_en and pooled.umbral == 0.5
    estados = {e.id: e for e in (conjunta, cubierta, propia)}
    cerrados = {e.familia: e for _, e in por_cerrar(seg, estados, AHORA)}
    assert set(cerrados) == {"botellas", "*"}
    assert (cerrados["*"].n, cerrados["*"].k) == (conjunta.n, conjunta.k)
    assert cerrados["botellas"].motivo == MOTIVO_PUERTA_COTA_BAJA


async def test_cada_replica_lee_los_veredictos_de_todas(dsn, tmp_path):
    """Verdicts taken on another replica reach this one's monitor from the store (each counted
    once, even read again in the overlap); only the lease holder writes the closure."""
    import time
    import uuid

    from revision.almacen import decisiones as dec
    from revision.almacen.cola import Almacen, Cierre, ItemNuevo

    almacen = await Almacen.abrir(dsn, tmp_path)
    try:
        abierto = estado_abierto(familia=f"f-{uuid.uuid4().hex[:6]}")
        escritos: list[EstadoPuerta] = []

        async def escribir(estado: EstadoPuerta) -> None:
            escritos.append(estado)

        titular = [False]
        vig = Vigilancia(
            lambda: {abierto.id: abierto}, escribir, almacen=almacen, titular=lambda: titular[0]
        )
        await vig.refrescar()
        for i in range(2):  # taken on the other replica: stored, never anotated here
            datos = _muestra(abierto, i)
            nuevo = ItemNuevo.de_registro(datos, "muestra", "muestra", [])
            await almacen.guardar_item(
                dataclasses.replace(nuevo, familia=abierto.familia), time.time()
            )
            item = await almacen.item(datos["event_id"])
            ahora = time.time()
            await almacen.decidir(
                item,
                Cierre(
                    "incorrecta",
                    [],
                    "luis",
                    ahora,
                    dec.decision_de(item, "incorrecta", "luis", ahora),
                    None,
                ),
            )
        assert await vig.revisar() == []  # read, but not the holder
        mias = [s for c, s in vig.seguimientos.items() if c.familia == abierto.familia]
        assert [s.veredictos for s in mias] == [2]
        await vig.refrescar()  # the overlap reads them again: not counted twice
        assert [s.veredictos for s in mias] == [2]
        titular[0] = True
        (cerrado,) = await vig.revisar()
        assert cerrado.familia == abierto.familia and escritos == [cerrado]
    finally:
        await almacen.cerrar()
