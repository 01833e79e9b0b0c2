"""The gates' evidence in the store and the certifier that opens gates
(revision/certificador/apertura.py), without Kafka, on SQLite and PostgreSQL: arrival positions,
evidence on every decision, the decided-prefix rule, obsolete fichas as failures (v1.6: the
selective reviewer of issue 47 opens nothing), per-key evidence, restarts after a closure (by the
bound or the detector), the automatic and the manual opening, an open gate relaxing λ."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from criterios import CRITERIOS_VERSION
from esquemas import DecisionRevision
from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    FAMILIA_TODAS,
    MOTIVO_RECHAZADA,
    MOTIVO_SIN_GARANTIA,
    MOTIVOS_VIGILANCIA,
    ORIGEN_SECUENCIAL_SOMBRA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta
from harness.revisor import estado_abierto, ficha_en_revision
from revision.almacen import decisiones as dec
from revision.almacen.cola import Almacen, Cierre, ItemNuevo
from revision.almacen.flujo import llegada_de
from revision.certificador.apertura import APERTURA_MANUAL, Apertura


@pytest.fixture
async def almacen(dsn: str | None, tmp_path: Path):
    a = await Almacen.abrir(dsn, tmp_path)
    yield a
    await a.cerrar()


def _clave() -> ClavePuerta:
    """A key of its own per test (the PostgreSQL tables are shared by every test)."""
    return ClavePuerta(
        modelo=f"m-{uuid.uuid4().hex[:8]}",
        prompt_evaluador_sha256="e" * 64,
        criterios_version=CRITERIOS_VERSION,
        modo_evaluador="veredicto",
        prompt_generador_sha256="g" * 64,
    )


def _registro(
    clave: ClavePuerta,
    familia: str = "zapatillas",
    puntuacion: float | None = 0.97,
    motivo: str = MOTIVO_SIN_GARANTIA,
) -> dict[str, Any]:
    registro = ficha_en_revision(
        f"A-{uuid.uuid4().hex[:10]}", familia=familia, motivo=motivo, puntuaciones=(0.2, puntuacion)
    )
    registro["clave"] = clave.model_dump(mode="json")
    return registro


def _de_clave(escritos: list[EstadoPuerta], clave: ClavePuerta) -> list[EstadoPuerta]:
    """The states of one key (earlier tests' keys share the PostgreSQL tables)."""
    return [e for e in escritos if e.clave == clave]


async def _llegan(
    almacen: Almacen,
    registros: list[dict[str, Any]],
    estados: dict[str, EstadoPuerta] | None = None,
) -> None:
    for r in registros:
        await almacen.guardar_item(
            ItemNuevo.de_registro(r, "revision", r["motivo"], []),
            time.time(),
            llegada_de(r, "revision", estados or {}),
        )


async def _decidir(almacen: Almacen, registro: dict[str, Any], decision: str) -> dict[str, Any]:
    item = await almacen.item(registro["event_id"])
    ahora = time.time()
    stored = await almacen.decidir(
        item,
        Cierre(decision, [], "ana", ahora, dec.decision_de(item, decision, "ana", ahora), None),
    )
    assert stored is not None
    return stored.registro


class _Topico:
    """Stands in for ``fichas.puerta`` as the app sees it: what was written is what is read."""

    def __init__(self) -> None:
        self.estados: dict[str, EstadoPuerta] = {}
        self.escritos: list[EstadoPuerta] = []

    async def escribir(self, estado: EstadoPuerta) -> None:
        self.escritos.append(estado)

    def leer(self) -> None:
        """The reader catches up with what was written."""
        for estado in self.escritos:
            self.estados[estado.id] = estado


def _apertura(almacen: Almacen, topico: _Topico, modo: str = "automatica") -> Apertura:
    return Apertura(almacen, lambda: dict(topico.estados), topico.escribir, modo)


def _de(apertura: Apertura, familia: str, clave: ClavePuerta):
    return next(s for s in apertura.secuencias if s.id == id_puerta(familia, clave))


async def test_evidencia_llegada_por_familia_y_clave_en_cada_decision(almacen):
    """Arrival positions per (key, family); the evidence on the decision, the key on a person's
    publication; no score or no key: no evidence; obsolete closures carry it too."""
    clave = _clave()
    zapatillas = [_registro(clave) for _ in range(3)]
    botella = _registro(clave, familia="botellas", puntuacion=0.6, motivo=MOTIVO_RECHAZADA)
    sin_puntuacion = _registro(clave, puntuacion=None)
    sin_clave = ficha_en_revision(
        f"A-{uuid.uuid4().hex[:10]}", motivo=MOTIVO_SIN_GARANTIA, puntuaciones=(0.9, 0.9)
    )
    await _llegan(
        almacen, [zapatillas[0], botella, zapatillas[1], sin_puntuacion, zapatillas[2], sin_clave]
    )

    items = [await almacen.item(r["event_id"]) for r in zapatillas]
    # every keyed item of the family takes a position, scored or not (sin_puntuacion is 2)
    assert [i.evidencia["llegada"] for i in items] == [0, 1, 3]
    assert items[0].evidencia == {
        "familia": "zapatillas",
        "clave": clave.model_dump(mode="json"),
        "puntuacion": 0.97,
        "codigo_ok": True,
        "llegada": 0,
    }
    item_botella = await almacen.item(botella["event_id"])
    assert item_botella.evidencia["llegada"] == 0  # its own family's sequence
    assert item_botella.evidencia["codigo_ok"] is False  # rechazada: a code check failed
    assert (await almacen.item(sin_puntuacion["event_id"])).evidencia is None
    assert (await almacen.item(sin_clave["event_id"])).evidencia is None

    registro = await _decidir(almacen, zapatillas[0], "aprobada")
    evidencia = DecisionRevision.model_validate(registro).evidencia
    assert evidencia is not None and evidencia.clave == clave and evidencia.llegada == 0
    publicada = dec.publicacion(items[1], items[1].datos["ficha"], "ana", False, time.time(), "m")
    assert publicada["clave"] == clave.model_dump(mode="json")
    assert (await _decidir(almacen, sin_puntuacion, "rechazada"))["evidencia"] is None

    nueva = dict(zapatillas[2], event_id=f"ev-{uuid.uuid4().hex[:8]}", version=2)
    await _llegan(almacen, [nueva])  # closes version 1 as obsolete
    obsoleta = await almacen.decision(zapatillas[2]["event_id"])
    assert obsoleta.decision == "obsoleta" and obsoleta.registro["evidencia"]["llegada"] == 3

    filas = [f for f in await almacen.secuencias() if f.clave == clave]
    assert [f.event_id for f in filas][:3] == [
        zapatillas[0]["event_id"],
        botella["event_id"],
        zapatillas[1]["event_id"],
    ]
    assert [f.orden for f in filas] == sorted(f.orden for f in filas)


async def test_una_puerta_abierta_no_da_sombra(almacen):
    """An item stored while its gate is open is not shadow-mode evidence (the gate selected
    it): it is in no sequence. The pooled gate alone governs no family (v1.5): an item of a
    family without a record of its own keeps arriving in shadow mode."""
    clave = _clave()
    abierto = estado_abierto(familia="zapatillas", modelo=clave.modelo).model_copy(
        update={"clave": clave}
    )
    conjunta = estado_abierto(modelo=clave.modelo).model_copy(update={"clave": clave})
    retenida, sombra = _registro(clave), _registro(clave, familia="botellas")
    await _llegan(almacen, [retenida, sombra], {abierto.id: abierto, conjunta.id: conjunta})
    assert (await almacen.item(retenida["event_id"])).evidencia is not None
    filas = [f for f in await almacen.secuencias() if f.clave == clave]
    assert [f.event_id for f in filas] == [sombra["event_id"]]


async def test_el_prefijo_decidido_en_orden_de_llegada(almacen):
    """Deciding the later fichas first does not advance the certifier; the first undecided
    ficha blocks; a code failure never blocks; the blocking ficha left undecided until a newer
    version supersedes it counts against the gate (v1.6: a failure at every λ it reaches), so
    the gate opens only after as many more approvals as the walk asks for."""
    clave = _clave()
    topico = _Topico()
    apertura = _apertura(almacen, topico)
    fallida = _registro(clave, motivo=MOTIVO_RECHAZADA)
    registros = [fallida] + [_registro(clave) for _ in range(45)]
    await _llegan(almacen, registros)
    for r in registros[2:]:
        await _decidir(almacen, r, "aprobada")
    assert _de_clave(await apertura.revisar(), clave) == []
    sec = _de(apertura, "zapatillas", clave)
    assert (sec.llegadas, sec.decididas, sec.pendientes) == (45, 0, 1)
    assert sec.bloqueo == registros[1]["event_id"]  # the code failure before it does not block
    assert not sec.certificada and sec.resultado.faltan is not None

    nueva = dict(registros[1], event_id=f"ev-{uuid.uuid4().hex[:8]}", version=2)
    await almacen.guardar_item(
        ItemNuevo.de_registro(nueva, "revision", nueva["motivo"], []), time.time()
    )  # no key: no evidence
    assert (await almacen.decision(registros[1]["event_id"])).decision == "obsoleta"

    assert _de_clave(await apertura.revisar(), clave) == []
    sec = _de(apertura, "zapatillas", clave)
    assert (sec.decididas, sec.bloqueo) == (45, None)  # the obsolete one closed the block
    assert not sec.certificada  # 44 approvals and one failure: not enough
    estricto = sec.resultado.umbrales[0]
    assert (estricto.n, estricto.k, estricto.obsoletas) == (45, 1, 1)
    faltan = sec.resultado.faltan
    assert faltan is not None and faltan > 0

    mas = [_registro(clave) for _ in range(faltan)]
    await _llegan(almacen, mas)
    for r in mas[:-1]:
        await _decidir(almacen, r, "aprobada")
    assert _de_clave(await apertura.revisar(), clave) == []  # one short
    await _decidir(almacen, mas[-1], "aprobada")
    escritos = _de_clave(await apertura.revisar(), clave)
    sec = _de(apertura, "zapatillas", clave)
    assert sec.certificada and (sec.resultado.n, sec.resultado.k) == (45 + faltan, 1)
    assert {e.familia for e in escritos} == {"zapatillas", FAMILIA_TODAS}
    for estado in escritos:
        assert estado.abierta and estado.clave == clave
        assert estado.abierta_por == ABIERTA_POR_AUTOMATICO
        assert estado.origen_datos == ORIGEN_SECUENCIAL_SOMBRA
        assert estado.umbral == sec.resultado.umbral and (estado.n, estado.k) == (45 + faltan, 1)
    # written once, even before the reader catches up
    assert _de_clave(await apertura.revisar(), clave) == []
    topico.leer()
    assert _de_clave(await apertura.revisar(), clave) == []


async def test_dejar_sin_decidir_las_malas_hasta_que_caducan_no_abre(almacen):
    """The issue's scenario through the app's store and certifier: 50 zapatillas items, every
    7th bad; a reviewer approves the 43 good ones and leaves the 7 bad undecided until version 2
    of those SKUs supersedes them, then approves the 7 new ones. v1.5 opened zapatillas and
    ``*`` at n = 44, k = 0; what people were offered was 50 good of 57. Now each superseded
    ficha is a failure at every λ it reaches: neither gate opens."""
    clave = _clave()
    topico = _Topico()
    apertura = _apertura(almacen, topico)
    registros = [_registro(clave) for _ in range(50)]
    malas = [r for i, r in enumerate(registros) if i % 7 == 6]
    assert len(malas) == 7
    await _llegan(almacen, registros)
    for r in registros:
        if r not in malas:
            await _decidir(almacen, r, "aprobada")
    assert _de_clave(await apertura.revisar(), clave) == []
    nuevas = [dict(r, event_id=f"ev-{uuid.uuid4().hex[:8]}", version=2) for r in malas]
    await _llegan(almacen, nuevas)
    for r in malas:
        assert (await almacen.decision(r["event_id"])).decision == "obsoleta"
    for r in nuevas:
        await _decidir(almacen, r, "aprobada")
    assert _de_clave(await apertura.revisar(), clave) == []
    for familia in ("zapatillas", FAMILIA_TODAS):
        sec = _de(apertura, familia, clave)
        assert (sec.decididas, sec.pendientes, sec.bloqueo) == (57, 0, None)
        assert not sec.certificada
        estricto = sec.resultado.umbrales[0]
        assert (estricto.n, estricto.k, estricto.obsoletas) == (57, 7, 7)
    assert apertura.listas() == [] or all(s.clave != clave for s in apertura.listas())


async def test_las_decisiones_de_otra_clave_no_abren(almacen):
    """A key's evidence opens that key's gates only; another key's sequence stays its own."""
    buena, otra = _clave(), _clave()
    topico = _Topico()
    apertura = _apertura(almacen, topico)
    buenas = [_registro(buena) for _ in range(45)]
    otras = [_registro(otra) for _ in range(5)]
    await _llegan(almacen, buenas + otras)
    for r in buenas + otras:
        await _decidir(almacen, r, "aprobada")
    escritos = await apertura.revisar()
    assert len(_de_clave(escritos, buena)) == 2 and _de_clave(escritos, otra) == []
    sec = _de(apertura, FAMILIA_TODAS, otra)
    assert (sec.llegadas, sec.decididas, sec.certificada) == (5, 5, False)


async def _abiertas_por_45(almacen: Almacen) -> tuple[ClavePuerta, _Topico, Apertura]:
    """A key of its own whose 45 approved arrivals opened its zapatillas and pooled gates, the
    reader caught up: the key, the topic stand-in and the certifier."""
    clave = _clave()
    topico = _Topico()
    apertura = _apertura(almacen, topico)
    viejas = [_registro(clave) for _ in range(45)]
    await _llegan(almacen, viejas)
    for r in viejas:
        await _decidir(almacen, r, "aprobada")
    assert len(_de_clave(await apertura.revisar(), clave)) == 2
    topico.leer()
    return clave, topico, apertura


def _cerrada(estado: EstadoPuerta, motivo: str, cuando: datetime) -> EstadoPuerta:
    """``estado`` closed by what people said of its publications (``motivo``) at ``cuando``."""
    return estado.model_copy(
        update={
            "abierta": False,
            "umbral": None,
            "motivo": motivo,
            "abierta_por": None,
            "actualizada_en": cuando,
        }
    )


@pytest.mark.parametrize("motivo", MOTIVOS_VIGILANCIA)
async def test_reabrir_tras_el_cierre_necesita_evidencia_nueva(almacen, motivo):
    """Closed by what people said of its publications (the online bound, or the change
    detector): the sequence starts again after the closure, so the old decisions open nothing;
    new fichas, decided, open it again."""
    clave, topico, apertura = await _abiertas_por_45(almacen)
    for estado in list(topico.estados.values()):
        topico.estados[estado.id] = _cerrada(estado, motivo, datetime.now(UTC))
    topico.escritos.clear()
    assert _de_clave(await apertura.revisar(), clave) == []
    for familia in ("zapatillas", FAMILIA_TODAS):
        sec = _de(apertura, familia, clave)
        assert (sec.llegadas, sec.decididas, sec.certificada) == (0, 0, False)

    otra = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)  # a restart
    assert _de_clave(await otra.revisar(), clave) == []

    nuevas = [_registro(clave) for _ in range(45)]
    await _llegan(almacen, nuevas, topico.estados)
    for r in nuevas[:30]:
        await _decidir(almacen, r, "aprobada")
    assert _de_clave(await apertura.revisar(), clave) == []
    for r in nuevas[30:]:
        await _decidir(almacen, r, "aprobada")
    escritos = _de_clave(await apertura.revisar(), clave)
    assert {e.familia for e in escritos} == {"zapatillas", FAMILIA_TODAS}
    assert all(e.n == 45 for e in escritos)


class _CierreEnLaRonda:
    """The reader's view of ``fichas.puerta`` when a closure arrives in the middle of a round:
    the first read of each round sees the gates as they were, every later read the closure."""

    def __init__(self, topico: _Topico, motivo: str) -> None:
        self.topico = topico
        self.motivo = motivo
        self.cerrada_en = datetime.now(UTC)
        self.lecturas = 0

    def __call__(self) -> dict[str, EstadoPuerta]:
        self.lecturas += 1
        if self.lecturas == 1:
            return dict(self.topico.estados)
        return {
            id_: _cerrada(e, self.motivo, self.cerrada_en) for id_, e in self.topico.estados.items()
        }


@pytest.mark.parametrize("motivo", MOTIVOS_VIGILANCIA)
async def test_un_cierre_que_llega_durante_la_ronda_no_se_reabre(almacen, motivo):
    """The closure reaches the reader while a round runs (after the round read the gates): the
    round acts on the view it started with (the gate open: nothing to write) and the next one
    restarts the sequence, so the evidence from before the closure reopens nothing. A round
    that read the gates again after its restart step reopened the gate 60 ms after the change
    detector closed it (tests/revision/certificador/test_apertura_puerta.py saw it)."""
    clave, topico, apertura = await _abiertas_por_45(almacen)
    topico.escritos.clear()

    vista = _CierreEnLaRonda(topico, motivo)
    apertura.estados = vista
    assert _de_clave(await apertura.revisar(), clave) == []
    assert vista.lecturas >= 1
    assert _de_clave(await apertura.revisar(), clave) == []  # the closure seen: restarted
    for familia in ("zapatillas", FAMILIA_TODAS):
        sec = _de(apertura, familia, clave)
        assert (sec.llegadas, sec.decididas, sec.certificada) == (0, 0, False)
    # a reviewer's click on another replica, the closure in its view: nothing to open either
    otra = Apertura(almacen, vista, topico.escribir, APERTURA_MANUAL)
    assert await otra.abrir(id_puerta("zapatillas", clave), "ana") is None
    assert _de_clave(topico.escritos, clave) == []


async def _zapatillas(apertura: Apertura, clave: ClavePuerta) -> list[EstadoPuerta]:
    """The zapatillas records of ``clave`` one round writes (and none of the pooled gate)."""
    escritos = _de_clave(await apertura.revisar(), clave)
    assert [e for e in escritos if e.familia == FAMILIA_TODAS] == []
    return [e for e in escritos if e.familia == "zapatillas"]


async def test_una_puerta_abierta_relaja_su_umbral_y_nunca_lo_endurece(almacen):
    """An open gate's sequence keeps growing with the blind shadow share (stored as shadow
    evidence although the gate is open): when it certifies a more lenient λ than the open
    record, the app writes a new open record at that λ, once; a gate open at a λ more lenient
    than anything the sequence certifies is left as it is (closing is the bound's job); the
    pooled gate, open at the same stricter λ, is never relaxed."""
    clave = _clave()
    topico = _Topico()
    apertura = _apertura(almacen, topico)
    abierta = estado_abierto(familia="zapatillas", umbral=0.95, n=30, k=0).model_copy(
        update={"clave": clave}
    )
    topico.estados[abierta.id] = abierta
    conjunta = abierta.model_copy(update={"familia": FAMILIA_TODAS})
    topico.estados[conjunta.id] = conjunta  # the pooled gate is never relaxed (docs/revision.md)
    registros = [_registro(clave) for _ in range(60)]
    # The blind share of the open gate's fichas: stored as shadow evidence (no gate applies).
    await _llegan(almacen, registros, {})
    hechas = 0
    for r in registros:  # decide until the sequence certifies
        await _decidir(almacen, r, "aprobada")
        hechas += 1
        await apertura.calcular()
        if _de(apertura, "zapatillas", clave).certificada:
            break
    sec = _de(apertura, "zapatillas", clave)
    assert sec.certificada and sec.resultado.umbral < abierta.umbral
    (relajada,) = await _zapatillas(apertura, clave)
    assert relajada.abierta and relajada.umbral == sec.resultado.umbral
    assert (relajada.n, relajada.k) == (sec.resultado.n, sec.resultado.k) == (hechas, 0)
    assert relajada.actualizada_en > abierta.actualizada_en
    # once, before and after the reader catches up
    assert await _zapatillas(apertura, clave) == []
    topico.leer()
    assert await _zapatillas(apertura, clave) == []

    # Open more leniently than the grid's most lenient λ: nothing to relax, never tightened.
    laxa = abierta.model_copy(update={"umbral": 0.45, "actualizada_en": datetime.now(UTC)})
    topico.estados[laxa.id] = laxa
    assert await _zapatillas(apertura, clave) == []
    assert _de(apertura, "zapatillas", clave).id not in {s.id for s in apertura.listas()}


async def test_apertura_manual_un_clic_con_nombre(almacen):
    """Manual: nothing opens by itself; the ready gate opens with the reviewer's name, once."""
    clave = _clave()
    topico = _Topico()
    apertura = _apertura(almacen, topico, APERTURA_MANUAL)
    registros = [_registro(clave) for _ in range(45)]
    await _llegan(almacen, registros)
    for r in registros:
        await _decidir(almacen, r, "aprobada")
    assert await apertura.revisar() == []  # manual: writes nothing, whatever the key
    listas = {s.id for s in apertura.listas()}
    assert id_puerta(FAMILIA_TODAS, clave) in listas
    assert await apertura.abrir(id_puerta("otra", clave), "ana") is None
    estado = await apertura.abrir(id_puerta(FAMILIA_TODAS, clave), "ana")
    assert estado is not None and estado.abierta_por == "ana" and estado.abierta
    topico.leer()
    assert await apertura.abrir(id_puerta(FAMILIA_TODAS, clave), "luis") is None


async def test_la_migracion_3_sobre_un_almacen_en_uso(tmp_path):
    """A store at migration 2 with an item: after migrating it has the evidence tables, the
    old item has no evidence, and a new one gets arrival position 0."""
    import sqlite3

    import migraciones
    from revision.almacen.migrations import ESQUEMA

    conn = sqlite3.connect(tmp_path / "revision.sqlite", isolation_level=None)
    migraciones.migrar_sqlite(
        conn, migraciones.Esquema(ESQUEMA.nombre, ESQUEMA.tabla, ESQUEMA.migraciones[:3])
    )
    conn.close()
    vieja = _registro(_clave())
    almacen = await Almacen.abrir(None, tmp_path)
    try:
        await almacen.guardar_item(
            ItemNuevo.de_registro(vieja, "revision", vieja["motivo"], []), time.time()
        )
        assert (await almacen.item(vieja["event_id"])).evidencia is None
        nueva = _registro(_clave())
        await _llegan(almacen, [nueva])
        assert (await almacen.item(nueva["event_id"])).evidencia["llegada"] == 0
    finally:
        await almacen.cerrar()


def test_llegada_de_sombra_por_la_puerta_que_rige():
    """Shadow mode is read on the gate that governs the family under the record's key: the
    family's own open gate, or its record covered by the open pooled gate; the pooled record
    alone governs no family (v1.5); another key's open gate does not count; a sampled
    publication is never shadow; a record without a key is evidence of nothing."""
    clave = _clave()
    registro = _registro(clave, familia="botellas")
    conjunta = estado_abierto(modelo=clave.modelo).model_copy(update={"clave": clave})
    propia = conjunta.model_copy(update={"familia": "botellas"})
    cubierta = propia.model_copy(
        update={
            "motivo": "cubierta_por_conjunta",
            "conjunta_actualizada_en": conjunta.actualizada_en,
        }
    )
    otra = conjunta.model_copy(update={"clave": _clave()})
    assert llegada_de(registro, "revision", {}).sombra
    assert llegada_de(registro, "revision", {otra.id: otra}).sombra
    assert llegada_de(registro, "revision", {conjunta.id: conjunta}).sombra
    assert not llegada_de(registro, "revision", {propia.id: propia}).sombra
    cubiertas = {conjunta.id: conjunta, cubierta.id: cubierta}
    assert not llegada_de(registro, "revision", cubiertas).sombra
    llegada = llegada_de(registro, "revision", {})
    assert (llegada.clave, llegada.puntuacion, llegada.codigo_ok) == (clave, 0.97, True)
    muestra = dict(registro, puntuacion=0.91)
    assert llegada_de(muestra, "muestra", {}) == type(llegada)(clave, 0.91, True, False)
    assert llegada_de(dict(registro, clave=None), "revision", {}) is None
