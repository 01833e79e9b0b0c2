"""The certifier writes what the pooled gate covers (revision/certificador/apertura.py), without
Kafka, on SQLite and PostgreSQL: a covered record only for a family whose own e-process at the
pooled λ, since the certifier first saw the pooled certification, crossed 1/δ (v1.6); none for a
family excluded by its evidence, at precision 0.8, with too little evidence, or whose own record
was closed by what people said of its publications; the excluded record once a covered family's
evidence crosses; coverage following a pooled certification again; holds, the automatic scope and
--sin-puerta-conjunta respected; what the page says governs each family; one certifier and one
record per gate across two replicas (the lease, the marks)."""

from __future__ import annotations

import asyncio
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from criterios import CRITERIOS_VERSION
from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    DELTA_PUERTA,
    FAMILIA_TODAS,
    MOTIVO_PUERTA_CAMBIO,
    MOTIVO_PUERTA_CUBIERTA,
    MOTIVO_PUERTA_EXCLUIDA,
    MOTIVO_SIN_GARANTIA,
    OBJETIVO_PUERTA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta
from harness.estados_puerta import estado as estado_puerta
from harness.revisor import ficha_en_revision
from harness.secuencia import aprobaciones_para_abrir, aprobaciones_para_cubrir
from puerta.alcance import Alcance
from puerta.exclusion import ProcesoExclusion
from puerta.resolucion import resolver
from puerta.retencion import registro_retencion
from revision.almacen import decisiones as dec
from revision.almacen.cola import Almacen, Cierre, ItemNuevo
from revision.almacen.flujo import llegada_de
from revision.certificador.apertura import APERTURA_MANUAL, Apertura
from revision.certificador.escritura import EscritorPuerta
from revision.certificador.gobierno import Gobierno, gobierno
from revision.certificador.lease import Lease

ABRE = aprobaciones_para_abrir() + 1  # approvals in a row that open a gate; a margin of one
CUBRE = aprobaciones_para_cubrir()  # own approvals at λ_* that cover a family
BAJO_EL_GRADO = 0.72  # a score under every λ a family's own walk tests (0.95, 0.75)


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


class _Topico:
    """``fichas.puerta`` as the app sees it: what is written is read once ``leer`` is called."""

    def __init__(self) -> None:
        self.estados: dict[str, EstadoPuerta] = {}
        self.escritos: list[EstadoPuerta] = []
        self._leidos = 0

    async def escribir(self, estado: EstadoPuerta) -> None:
        self.escritos.append(estado)

    def leer(self) -> None:
        """The reader catches up with what was written since it last did."""
        for estado in self.escritos[self._leidos :]:
            self.estados[estado.id] = estado
        self._leidos = len(self.escritos)

    def poner(self, estado: EstadoPuerta) -> None:
        """A record another writer (a person, ``fichas calibrar``) put on the topic."""
        self.estados[estado.id] = estado


async def _llegan(
    almacen: Almacen,
    clave: ClavePuerta,
    familia: str,
    cuantas: int,
    estados: dict[str, EstadoPuerta],
    puntuacion: float = 0.97,
) -> list[dict[str, Any]]:
    """``cuantas`` shadow-mode fichas of ``familia`` stored as the consumer stores them."""
    registros = []
    for _ in range(cuantas):
        r = ficha_en_revision(
            f"C-{uuid.uuid4().hex[:10]}",
            familia=familia,
            motivo=MOTIVO_SIN_GARANTIA,
            puntuaciones=(0.2, puntuacion),
        )
        r["clave"] = clave.model_dump(mode="json")
        await almacen.guardar_item(
            ItemNuevo.de_registro(r, "revision", r["motivo"], []),
            time.time(),
            llegada_de(r, "revision", estados),
        )
        registros.append(r)
    return registros


async def _decidir(almacen: Almacen, registros: list[dict[str, Any]], decision: str) -> None:
    for r in registros:
        item = await almacen.item(r["event_id"])
        assert item is not None
        ahora = time.time()
        cierre = Cierre(
            decision, [], "ana", ahora, dec.decision_de(item, decision, "ana", ahora), None
        )
        assert await almacen.decidir(item, cierre) is not None


async def _abre_zapatillas(
    almacen: Almacen, apertura: Apertura, topico: _Topico, clave: ClavePuerta
):
    """zapatillas' approvals open its own gate and the pooled one; the topic shows both."""
    await _decidir(
        almacen, await _llegan(almacen, clave, "zapatillas", ABRE, topico.estados), "aprobada"
    )
    escritos = [e for e in await apertura.revisar() if e.clave == clave]
    assert {e.familia for e in escritos} == {"zapatillas", FAMILIA_TODAS}
    topico.leer()
    await _ve_la_conjunta(apertura, clave)


async def _ve_la_conjunta(apertura: Apertura, clave: ClavePuerta) -> None:
    """A round of the lease holder after its reader read the pooled gate's record: where the
    families' coverage sequences start (the next arrival) is recorded."""
    assert [e for e in await apertura.revisar() if e.clave == clave] == []


def _de(apertura: Apertura, familia: str, clave: ClavePuerta):
    return next(s for s in apertura.secuencias if s.id == id_puerta(familia, clave))


def _rechazos_para_excluir(aprobadas: int) -> int:
    """How many rejections after ``aprobadas`` approvals make the exclusion cross (its maths)."""
    proceso = ProcesoExclusion(OBJETIVO_PUERTA, DELTA_PUERTA, aprobadas=aprobadas)
    for r in range(1, 50):
        proceso.actualizar(False)
        if proceso.cruzado:
            return r
    raise AssertionError("never crosses")


async def test_la_conjunta_cubre_solo_lo_que_midio(almacen):
    """With * open (by zapatillas' approvals): botellas, whose own e-process at the pooled λ
    crosses 1/δ after CUBRE approvals since the pooled certification, is covered and published
    at the pooled λ; camisetas 5 approved / 5 rejected is excluded by its own evidence;
    auriculares with 5 approvals is not certified yet; a family at precision 0.8 (80 of 100,
    its exclusion not crossing) is never covered, however many approvals it gathers (v1.5
    covered it after 20). A covered family whose own evidence then crosses the exclusion gets
    its record closed."""
    clave = _clave()
    topico = _Topico()
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    await _abre_zapatillas(almacen, apertura, topico, clave)
    conjunta = topico.estados[id_puerta(FAMILIA_TODAS, clave)]

    botellas = await _llegan(almacen, clave, "botellas", CUBRE, topico.estados)
    camisetas = await _llegan(almacen, clave, "camisetas", 10, topico.estados)
    auriculares = await _llegan(almacen, clave, "auriculares", 5, topico.estados)
    gorras = await _llegan(almacen, clave, "gorras", 100, topico.estados)
    await _decidir(almacen, botellas[:-1], "aprobada")
    await _decidir(almacen, camisetas[:5], "aprobada")
    await _decidir(almacen, camisetas[5:], "rechazada")
    await _decidir(almacen, auriculares, "aprobada")
    for i, r in enumerate(gorras):
        await _decidir(almacen, [r], "rechazada" if i % 5 == 4 else "aprobada")
    assert [e for e in await apertura.revisar() if e.clave == clave] == []  # one short
    await _decidir(almacen, botellas[-1:], "aprobada")
    escritos = [e for e in await apertura.revisar() if e.clave == clave]
    (cubierta,) = escritos
    assert cubierta.familia == "botellas" and cubierta.motivo == MOTIVO_PUERTA_CUBIERTA
    assert cubierta.abierta and cubierta.umbral == conjunta.umbral
    assert cubierta.conjunta_actualizada_en == conjunta.actualizada_en
    assert (cubierta.n, cubierta.k, cubierta.abierta_por) == (CUBRE, 0, ABIERTA_POR_AUTOMATICO)
    # the tables are shared: the app also covers what earlier tests left under their own keys
    propias = {k: n for k, n in apertura.cubiertas.items() if k[1] == clave.texto()}
    assert propias == {("botellas", clave.texto(), "cubierta"): 1}
    assert [e for e in await apertura.revisar() if e.clave == clave] == []  # written once
    topico.leer()
    assert resolver("botellas", clave, topico.estados).razon == "conjunta"
    for familia in ("camisetas", "auriculares", "gorras"):
        assert resolver(familia, clave, topico.estados).razon == "sin_registro"

    def gob(familia: str):
        return _gobierno(apertura, topico.estados, familia, clave)

    assert [gob(f).razon for f in ("zapatillas", "botellas", "camisetas", "auriculares")] == [
        "propia",
        "conjunta",
        "excluida",
        "sin_certificar",
    ]
    # At 0.8 its exclusion has not crossed: it is the v1.6 rule that leaves it uncovered.
    gorra = gob("gorras")
    assert gorra.razon == "sin_certificar" and gorra.cobertura is not None
    assert (gorra.cobertura.n, gorra.cobertura.k) == (100, 20)
    assert gorra.cobertura.e_valor < 1 / DELTA_PUERTA
    textos = {f: gob(f).describir() for f in ("botellas", "camisetas", "auriculares")}
    assert f"con {CUBRE} aprobaciones propias" in textos["botellas"]
    assert "Excluida" in textos["camisetas"] and "5 rechazadas" in textos["camisetas"]
    assert "Sin certificar" in textos["auriculares"] and "5 fichas a ese λ" in textos["auriculares"]

    # Rejections of botellas that arrived in shadow mode (a worker that had not seen the
    # coverage yet): its exclusion crosses, and its covered record is closed.
    tarde = await _llegan(almacen, clave, "botellas", _rechazos_para_excluir(CUBRE), {})
    await _decidir(almacen, tarde, "rechazada")
    (excluida,) = [e for e in await apertura.revisar() if e.clave == clave]
    assert excluida.familia == "botellas" and not excluida.abierta
    assert excluida.motivo == MOTIVO_PUERTA_EXCLUIDA
    topico.leer()
    assert resolver("botellas", clave, topico.estados).razon == "cerrada"
    assert gob("botellas").razon == "excluida"
    assert [e for e in await apertura.revisar() if e.clave == clave] == []


async def test_solo_cuenta_la_evidencia_desde_la_certificacion_conjunta(almacen):
    """A family's approvals before the pooled certification helped choose its λ: they cover
    nothing. botellas with CUBRE approvals before * opened (too few for its own gate) is not
    covered by them: its coverage sequence starts after them, empty."""
    assert CUBRE < aprobaciones_para_abrir()
    clave = _clave()
    topico = _Topico()
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    antes = await _llegan(almacen, clave, "botellas", CUBRE, topico.estados)
    await _decidir(almacen, antes, "aprobada")
    await _abre_zapatillas(almacen, apertura, topico, clave)
    assert [e for e in await apertura.revisar() if e.clave == clave] == []
    sec = _de(apertura, "botellas", clave)
    assert sec.decididas == CUBRE and not sec.certificada
    desde = apertura.desde_conjunta(sec, topico.estados)
    assert desde is not None and desde.decididas == 0
    ordenes = [f.orden for f in await almacen.secuencias() if f.familia == "botellas"]
    assert desde.desde > max(ordenes)
    g = gobierno("botellas", clave, topico.estados, sec, apertura.alcance, desde_conjunta=desde)
    assert g.razon == "sin_certificar" and g.cobertura is not None and g.cobertura.n == 0


async def _cubre_botellas(
    almacen: Almacen, clave: ClavePuerta
) -> tuple[Apertura, _Topico, EstadoPuerta]:
    """zapatillas opens * (seen by the certifier); botellas' CUBRE approvals since, at a score
    its own walk never tests, cover it; the topic shows the covered record."""
    topico = _Topico()
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir)
    await _abre_zapatillas(almacen, apertura, topico, clave)
    await _decidir(
        almacen,
        await _llegan(almacen, clave, "botellas", CUBRE, topico.estados, BAJO_EL_GRADO),
        "aprobada",
    )
    (cubierta,) = [e for e in await apertura.revisar() if e.clave == clave]
    topico.leer()
    return apertura, topico, cubierta


def _gobierno(
    apertura: Apertura, estados: dict[str, EstadoPuerta], familia: str, clave: ClavePuerta
) -> Gobierno:
    """What the page says governs ``familia``, with its coverage sequence."""
    sec = _de(apertura, familia, clave)
    desde = apertura.desde_conjunta(sec, estados)
    return gobierno(familia, clave, estados, sec, apertura.alcance, desde_conjunta=desde)


async def test_una_familia_cerrada_por_la_vigilancia_no_se_vuelve_a_cubrir(almacen):
    """A family whose own (covered) record the online bound or the detector closed is not
    covered again under the same pooled record, whatever its new approvals: it needs its own
    gate (v1.5 covered it again after 20)."""
    clave = _clave()
    apertura, topico, cubierta = await _cubre_botellas(almacen, clave)
    cerrada = cubierta.model_copy(
        update={
            "abierta": False,
            "umbral": None,
            "motivo": MOTIVO_PUERTA_CAMBIO,
            "abierta_por": None,
            "actualizada_en": datetime.now(UTC),
        }
    )
    topico.poner(cerrada)
    await _decidir(
        almacen,
        await _llegan(almacen, clave, "botellas", CUBRE, topico.estados, BAJO_EL_GRADO),
        "aprobada",
    )
    escritos = [e for e in await apertura.revisar() if e.clave == clave]
    assert [e for e in escritos if e.motivo == MOTIVO_PUERTA_CUBIERTA] == []
    g = _gobierno(apertura, topico.estados, "botellas", clave)
    assert g.razon == "cerrada_por_vigilancia" and "detector de cambios" in g.describir()
    assert g.cobertura is not None and g.cobertura.razon == "cerrada_por_vigilancia"


async def test_la_cobertura_sigue_a_la_conjunta(almacen):
    """The pooled gate certified again (by fichas calibrar, at another λ of the grid; the app
    never relaxes it to the λ its own sequence certifies): the covered record no longer
    governs; the family's evidence since the new certification starts
    empty, and once CUBRE of its new fichas are approved the app writes a covered record resting
    on the new certification; closing * leaves covered records to the resolution (nothing
    written). botellas' scores (0.72) reach no λ its own walk tests, so only coverage can
    publish it."""
    clave = _clave()
    apertura, topico, primera = await _cubre_botellas(almacen, clave)
    otra = estado_puerta(
        clave, 0.7, FAMILIA_TODAS, actualizada_en=datetime.now(UTC) + timedelta(seconds=1)
    )
    topico.poner(otra)
    assert resolver("botellas", clave, topico.estados).razon == "conjunta_cerrada"
    assert [e for e in await apertura.revisar() if e.clave == clave] == []  # nothing since
    await _decidir(
        almacen,
        await _llegan(almacen, clave, "botellas", CUBRE, topico.estados, BAJO_EL_GRADO),
        "aprobada",
    )
    (segunda,) = [e for e in await apertura.revisar() if e.clave == clave]
    assert segunda.umbral == 0.7 and segunda.conjunta_actualizada_en == otra.actualizada_en
    assert segunda.actualizada_en > primera.actualizada_en and segunda.n == CUBRE
    topico.leer()
    assert resolver("botellas", clave, topico.estados).razon == "conjunta"
    cerrada = estado_puerta(clave, None, FAMILIA_TODAS, abierta=False)
    topico.poner(cerrada)
    assert [e for e in await apertura.revisar() if e.clave == clave] == []
    assert resolver("botellas", clave, topico.estados).razon == "conjunta_cerrada"


async def test_retenidas_alcance_y_sin_conjunta(almacen):
    """A held family is neither opened nor covered; * held covers nobody; a family outside
    --apertura-familias is not opened by the app but a reviewer's click opens it (once);
    --sin-puerta-conjunta never opens *."""
    clave = _clave()
    topico = _Topico()
    ahora = datetime.now(UTC)
    topico.poner(registro_retencion("zapatillas", clave, True, "marta", "auditoría", ahora))
    alcance = Alcance(frozenset({"zapatillas", "botellas"}))
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir, alcance=alcance)
    for familia in ("zapatillas", "camisetas"):
        registros = await _llegan(almacen, clave, familia, ABRE, topico.estados)
        await _decidir(almacen, registros, "aprobada")
    escritos = [e for e in await apertura.revisar() if e.clave == clave]
    # zapatillas held, camisetas out of scope: only * opens
    assert {e.familia for e in escritos} == {FAMILIA_TODAS}
    topico.leer()
    await _ve_la_conjunta(apertura, clave)
    assert {s.familia for s in apertura.listas() if s.clave == clave} == {"camisetas"}
    assert apertura.por_clic("camisetas") and not apertura.por_clic("zapatillas")
    assert await apertura.abrir(id_puerta("zapatillas", clave), "ana") is None
    abierta = await apertura.abrir(id_puerta("camisetas", clave), "ana")
    assert abierta is not None and abierta.abierta_por == "ana"
    assert await apertura.abrir(id_puerta("camisetas", clave), "luis") is None  # once
    topico.leer()
    gob = gobierno("zapatillas", clave, topico.estados, _de(apertura, "zapatillas", clave), alcance)
    assert gob.razon == "retenida" and gob.retencion is not None
    assert "marta" in gob.describir() and "auditoría" in gob.describir()

    # * held: botellas, with enough evidence and in scope, is not covered until released.
    topico.poner(registro_retencion(FAMILIA_TODAS, clave, True, "marta", None, ahora))
    await _decidir(
        almacen,
        await _llegan(almacen, clave, "botellas", CUBRE, topico.estados),
        "aprobada",
    )
    assert [e for e in await apertura.revisar() if e.clave == clave] == []
    topico.poner(registro_retencion(FAMILIA_TODAS, clave, False, "marta", None, ahora))
    (cubierta,) = [e for e in await apertura.revisar() if e.clave == clave]
    assert cubierta.familia == "botellas" and cubierta.motivo == MOTIVO_PUERTA_CUBIERTA

    sin = _clave()
    sin_topico = _Topico()
    sin_conjunta = Apertura(
        almacen,
        lambda: dict(sin_topico.estados),
        sin_topico.escribir,
        alcance=Alcance(conjunta=False),
    )
    await _decidir(almacen, await _llegan(almacen, sin, "zapatillas", ABRE, {}), "aprobada")
    escritos = [e for e in await sin_conjunta.revisar() if e.clave == sin]
    assert {e.familia for e in escritos} == {"zapatillas"}
    assert not sin_conjunta.por_clic(FAMILIA_TODAS)


async def test_manual_cubrir_con_un_clic(almacen):
    """Manual mode: nothing is opened nor covered by itself; the page offers the coverage, and
    the click writes the covered record with the reviewer's name; an excluded family's closed
    record needs no click."""
    clave = _clave()
    topico = _Topico()
    apertura = Apertura(almacen, lambda: dict(topico.estados), topico.escribir, APERTURA_MANUAL)
    await _decidir(almacen, await _llegan(almacen, clave, "zapatillas", ABRE, {}), "aprobada")
    assert [e for e in await apertura.revisar() if e.clave == clave] == []
    assert await apertura.abrir(id_puerta(FAMILIA_TODAS, clave), "ana") is not None
    topico.leer()
    await _ve_la_conjunta(apertura, clave)
    await _decidir(
        almacen,
        await _llegan(almacen, clave, "botellas", CUBRE, topico.estados),
        "aprobada",
    )
    assert [e for e in await apertura.revisar() if e.clave == clave] == []
    assert apertura.cubrible(id_puerta("botellas", clave), topico.estados)
    cubierta = await apertura.abrir(id_puerta("botellas", clave), "luis")
    assert cubierta is not None and cubierta.motivo == MOTIVO_PUERTA_CUBIERTA
    assert cubierta.abierta_por == "luis"


async def test_dos_replicas_un_certificador_y_un_registro(almacen):
    """Two certifiers on one store, each with its lease: only the holder writes; clicks on
    both replicas at once write one record; when the holder's lease lapses the other takes
    over, and it does not write again what the first wrote (its reader had not caught up)."""
    clave = _clave()
    topico = _Topico()
    reloj = [time.time()]
    leases = [
        Lease(
            almacen.database,
            f"r{i}-{uuid.uuid4().hex[:4]}",
            f"t-{clave.texto()}",
            20.0,
            lambda: reloj[0],
        )
        for i in range(2)
    ]
    replicas = [
        Apertura(almacen, lambda: dict(topico.estados), topico.escribir, lease=lease)
        for lease in leases
    ]
    assert await leases[0].renew() and not await leases[1].renew()
    await _decidir(almacen, await _llegan(almacen, clave, "zapatillas", ABRE, {}), "aprobada")
    assert [e for e in await replicas[1].revisar() if e.clave == clave] == []  # not the holder
    assert replicas[1].secuencias and _de(replicas[1], "zapatillas", clave).certificada
    escritos = [e for e in await replicas[0].revisar() if e.clave == clave]
    assert {e.familia for e in escritos} == {"zapatillas", FAMILIA_TODAS}
    # The first holder stops (crash: no release); the lease lapses; the other takes it.
    reloj[0] += 25
    assert not leases[0].held and await leases[1].renew()
    # Its reader has not caught up with the openings: the marks keep them from being rewritten.
    assert [e for e in await replicas[1].revisar() if e.clave == clave] == []
    assert len([e for e in topico.escritos if e.clave == clave]) == 2

    # Manual clicks racing on both replicas: one record.
    manuales = [
        Apertura(
            almacen, lambda: dict(topico.estados), topico.escribir, APERTURA_MANUAL, lease=lease
        )
        for lease in leases
    ]
    otra = _clave()
    await _decidir(almacen, await _llegan(almacen, otra, "botellas", ABRE, {}), "aprobada")
    resultados = await asyncio.gather(
        *(m.abrir(id_puerta("botellas", otra), f"revisor-{i}") for i, m in enumerate(manuales))
    )
    assert len([r for r in resultados if r is not None]) == 1
    assert len([e for e in topico.escritos if e.clave == otra]) == 1


async def test_lease_tomar_renovar_caducar_soltar(almacen):
    """The lease on both dialects: one holder; renewing keeps it; another takes it only once
    it expired or was released; the margin stops a holder writing before it ends."""
    reloj = [1_000_000.0]
    nombre = f"prueba-{uuid.uuid4().hex[:6]}"
    a = Lease(almacen.database, "a", nombre, 20.0, lambda: reloj[0])
    b = Lease(almacen.database, "b", nombre, 20.0, lambda: reloj[0])
    assert await a.renew() and a.held
    assert not await b.renew() and not b.held
    reloj[0] += 10
    assert await a.renew() and not await b.renew()
    reloj[0] += 16  # 6 s before the end: within the margin, a stops writing
    assert not a.held
    assert not await b.renew()  # not expired yet
    reloj[0] += 5
    assert await b.renew() and b.held and not await a.renew()
    assert (await b.current())[0] == "b"
    await b.release()
    assert await a.renew() and a.held


async def test_una_escritura_fallida_se_decide_de_nuevo(almacen):
    """A failed send forgets its mark (the next round decides again); a mark a crash left
    unsent is forgotten after its time; a mark sent stays."""
    fallos = [1]
    enviados: list[EstadoPuerta] = []

    async def escribir(estado: EstadoPuerta) -> None:
        if fallos[0]:
            fallos[0] -= 1
            raise ConnectionError("broker down")
        enviados.append(estado)

    reloj = [time.time()]
    escritor = EscritorPuerta(almacen.database, escribir, lambda: reloj[0])
    estado = estado_puerta(_clave())
    marca_ = f"prueba|{uuid.uuid4().hex}"
    with pytest.raises(ConnectionError):
        await escritor.escribir(marca_, estado)
    assert await escritor.escribir(marca_, estado) and enviados == [estado]
    assert not await escritor.escribir(marca_, estado)

    colgada = f"prueba|{uuid.uuid4().hex}"
    await almacen.database.run(
        "insert into revision_escrituras (marca, puerta, estado, creada, enviada) "
        "values ($1, $2, $3, $4, 0)",
        (colgada, estado.id, estado.model_dump_json(), reloj[0]),
    )
    assert not await escritor.escribir(colgada, estado)
    reloj[0] += 200
    assert await escritor.limpiar() >= 1
    assert await escritor.escribir(colgada, estado)
