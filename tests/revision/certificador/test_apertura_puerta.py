"""Issue 29, "Done when": a gate's whole life with real processes.

Everything real: the broker, ``fichas worker`` processes, the review app as a process with its
automatic opener, the scripted fake LLM, and a scripted reviewer deciding over HTTP through the
app's own forms (``harness.revisor_http``). The fake LLM's scores separate good fichas from bad
ones with an AUC of about 0.95: good ones score 0.97; of the bad ones, most are rejected at 0.6
(inside the opener's grid, so their labels matter and an undecided one blocks the prefix) and
one in nine is approved at 0.97 (a tie with the good ones).

1. Another key's decisions: a worker running model ``fake-otro`` (another ``ClavePuerta``)
   produces fichas that people approve; its own gate opens, and the gate of the main key never
   does.
2. Shadow mode of the main key: the reviewer decides the good fichas first. The gate stays
   closed while the decided prefix (in arrival order) stops at the first undecided ficha, then
   opens by itself once the bad ones are decided too.
3. The workers publish through it; the same events sent again give the same final fichas as in
   shadow mode (same text, same attempts), only their destination differs.
4. The reviewer grades the sample of step 3 (in publication order it comes first, and an
   undecided sampled ficha holds the later verdicts back); a shift in the judge (bad fichas now
   approved at 0.97) is published, sampled and graded ``incorrecta``: the closing tests (the
   bound and the detector, v1.6) close the gate again, and no old evidence reopens it.
"""

from __future__ import annotations

import asyncio
import functools
import json
from pathlib import Path
from typing import Any

import pytest

from esquemas import FichaEnRevision, FichaPublicada
from esquemas.constantes import (
    ABIERTA_POR_AUTOMATICO,
    DELTA_PUERTA,
    MOTIVOS_VIGILANCIA,
    OBJETIVO_PUERTA,
    ORIGEN_SECUENCIAL_SOMBRA,
)
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta
from harness.estados_puerta import clave_fake
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, revisor_env
from harness.revisor_http import RevisorHttp
from harness.secuencia import aprobaciones_para_abrir, incorrectas_para_cerrar
from harness.topicos import Topics, create_input_topic, produce, read_all, settings_for
from harness.worker import WorkerProcess, worker_env
from infra.network import free_port
from puerta.resolucion import puerta_para
from puerta.secuencial import Observacion, certificar_secuencia
from puerta.topico import leer_estados
from tests.revision.conftest import CLAVE, USUARIO, esperar

pytestmark = pytest.mark.kafka

FAMILIA = "zapatillas"  # harness.eventos' family
BUENA = {"accion": "aprobar", "puntuacion": 0.97}
MALA = {"accion": "rechazar", "puntuacion": 0.6}
MALA_ALTA = {"accion": "aprobar", "puntuacion": 0.97}  # a bad ficha the judge likes

# Phase 1: another key's fichas, all good, approved.
OTRA = [f"OT-{i:02d}" for i in range(aprobaciones_para_abrir() + 1)]
# Phase 2: the main key's shadow sequence; every 6th ficha is bad, one of them scored high.
SOMBRA = [f"{'MA' if i % 6 == 3 else 'BU'}-{i:02d}" for i in range(54)]
MALAS = [s for s in SOMBRA if s.startswith("MA")]
MALA_ALTA_SKU = MALAS[-1]
MALAS_BAJAS = MALAS[:-1]
BUENAS = [s for s in SOMBRA if s.startswith("BU")]


# Phase 4: the judge drifts: bad fichas approved at 0.97, as many as close the gate after the
# sample of phase 3 (the good ones correct, the one bad ficha published incorrect) wherever the
# bad one fell in publication order.
@functools.cache
def _deriva() -> list[str]:
    """The drift's SKUs: computed on first use, not at import (the search costs about 2 s of
    CPU, which every pytest process that collects this module paid)."""
    veces = max(
        incorrectas_para_cerrar(antes=[j != mala for j in range(len(BUENAS) + 1)])
        for mala in range(len(BUENAS) + 1)
    )
    return [f"DE-{i:02d}" for i in range(veces)]


def _guion() -> dict[str, Any]:
    """The fake LLM's script: scores that separate good from bad fichas (AUC about 0.95)."""
    reglas = [
        {"sku": "OT-.*|BU-.*", "evaluador": [BUENA]},
        {"sku": MALA_ALTA_SKU, "evaluador": [MALA_ALTA]},
        {"sku": "MA-.*", "evaluador": [MALA]},
        {"sku": "DE-.*", "evaluador": [MALA_ALTA]},
    ]
    return {"rules": reglas}


def _mensajes(skus: list[str], version: int = 1) -> list[tuple[bytes, bytes]]:
    return [
        (
            sku.encode(),
            json.dumps(evento_dict(sku, version, event_id=f"{sku}-v{version}")).encode(),
        )
        for sku in skus
    ]


def _salidas(kafka: KafkaBroker, topics: Topics, version: int) -> dict[str, dict[str, Any]]:
    """The outcome of every SKU at ``version``, by SKU, with the topic it went to."""
    salidas: dict[str, dict[str, Any]] = {}
    for topic in (topics.publicadas, topics.revision):
        for r in asyncio.run(read_all(kafka.bootstrap, topic)):
            if r["value"]["version"] == version:
                salidas[r["value"]["sku"]] = {"topic": topic, **r["value"]}
    return salidas


def _todas(
    kafka: KafkaBroker, topics: Topics, skus: list[str], version: int = 1
) -> dict[str, dict[str, Any]]:
    """The outcomes of ``skus`` at ``version`` once every one has one; empty before."""
    salidas = _salidas(kafka, topics, version)
    return {s: salidas[s] for s in skus} if all(s in salidas for s in skus) else {}


def _estados(kafka: KafkaBroker, topics: Topics) -> dict[str, EstadoPuerta]:
    return asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta, espera_s=30))


def _abiertas(kafka: KafkaBroker, topics: Topics, clave: ClavePuerta) -> list[EstadoPuerta]:
    """The open gates of ``clave`` on the gate topic now."""
    return [e for e in _estados(kafka, topics).values() if e.clave == clave and e.abierta]


def _decidir(revisor: RevisorHttp, event_id: str, aprobar: bool) -> None:
    """Decide one item as soon as the app has it."""
    esperar(lambda: revisor.formulario(event_id, "form-rechazar"), f"{event_id} in the queue")
    estado = revisor.aprobar(event_id) if aprobar else revisor.rechazar(event_id, ["C04"])
    assert estado == 303, (event_id, estado)


def test_la_vida_de_una_puerta(kafka: KafkaBroker, fake_llm: FakeLLM, tmp_path: Path) -> None:
    topics = Topics()
    clave = clave_fake()
    clave_otra = clave_fake(modelo="fake-otro")
    fake_llm.configure(_guion())
    entrada_otra = f"{topics.prefix}.otra.proveedor.cambios"
    for topic in (topics.entrada, entrada_otra):
        asyncio.run(create_input_topic(kafka.bootstrap, topic, partitions=2))

    # The planned decisions must be enough to open under the opener's own rule (a check of
    # the test's data, not of the app): the decisions in the arrival order made below (three
    # batches: the bad fichas the judge rejects, the good ones, the bad one it approves).
    plan = [
        Observacion(
            puntuacion=MALA["puntuacion"] if s in MALAS_BAJAS else BUENA["puntuacion"],
            codigo_ok=True,
            aprobada=not s.startswith("MA"),
        )
        for s in [*MALAS_BAJAS, *BUENAS, MALA_ALTA_SKU]
    ]
    assert certificar_secuencia(plan, OBJETIVO_PUERTA, DELTA_PUERTA).umbral is not None

    decisiones = f"{topics.prefix}.fichas.decisiones"
    app = RevisorProcess(
        revisor_env(
            kafka.bootstrap,
            {**topics.env(), "FICHAS_TOPIC_DECISIONES": decisiones},
            tmp_path / "revisor",
        ),
        free_port(),
        tmp_path / "revisor.log",
        apertura="automatica",
    )
    app.add_user(USUARIO, CLAVE)
    comunes = {"FICHAS_PUERTA": "certificada", "FICHAS_MUESTRA_PROPORCION": "1"}
    worker = WorkerProcess(
        worker_env(kafka, fake_llm, topics, tmp_path / "w", **comunes), tmp_path / "w.log"
    )
    otro = WorkerProcess(
        worker_env(
            kafka,
            fake_llm,
            topics,
            tmp_path / "o",
            FICHAS_LLM_MODELO="fake-otro",
            FICHAS_TOPIC_ENTRADA=entrada_otra,
            FICHAS_GRUPO=f"{topics.prefix}-otro",
            # Its own decisions topic: the app's approvals are published by the main worker.
            FICHAS_TOPIC_DECISIONES=f"{topics.prefix}.otra.fichas.decisiones",
            **comunes,
        ),
        tmp_path / "o.log",
    )
    procesos = [app, worker, otro]
    try:
        for p in procesos:
            p.start()
        for p in procesos:
            p.wait_ready()
        revisor = RevisorHttp(f"http://127.0.0.1:{app.port}")
        revisor.entrar(USUARIO, CLAVE)

        # 1. Another key's evidence opens that key's gate, never the main key's.
        asyncio.run(produce(kafka.bootstrap, entrada_otra, _mensajes(OTRA)))
        for sku in OTRA:
            _decidir(revisor, f"{sku}-v1", aprobar=True)
        otra_abierta = esperar(
            lambda: _abiertas(kafka, topics, clave_otra), "the other key's gate open", 60
        )
        assert {e.abierta_por for e in otra_abierta} == {ABIERTA_POR_AUTOMATICO}
        assert _abiertas(kafka, topics, clave) == []

        # 2. Shadow mode of the main key: good fichas decided first do not open the gate.
        # Arrival order is made known by producing in three batches, each once the one before
        # is on the topics: the bad fichas the judge rejects, the good ones, then the bad one it
        # approves. A reviewer who decides the good ones first leaves the whole sequence
        # undecided from its first ficha on.
        for lote in (MALAS_BAJAS, BUENAS, [MALA_ALTA_SKU]):
            asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes(lote)))
            esperar(lambda lote=lote: _todas(kafka, topics, lote), "a batch's outcomes", 180)
        sombra = esperar(lambda: _todas(kafka, topics, SOMBRA), "shadow outcomes", 180)
        assert {s["topic"] for s in sombra.values()} == {topics.revision}
        for sku in BUENAS:
            _decidir(revisor, f"{sku}-v1", aprobar=True)
        # The good fichas' approvals would open the gate on their own, but the prefix stops at the
        # first ficha that arrived, a bad one still undecided; the certifier has looked at every
        # decision once the app's metrics show that prefix, and no gate opened.
        sola = [Observacion(0.97, True, True)] * len(BUENAS)
        assert certificar_secuencia(sola, OBJETIVO_PUERTA, DELTA_PUERTA).umbral is not None
        llegadas = _llegadas(kafka, decisiones, clave)
        assert len(llegadas) == len(BUENAS)
        primera_mala = min(set(range(len(SOMBRA))) - llegadas)
        assert primera_mala == 0
        esperar(
            lambda: (
                _metrica(app, "fichas_revision_apertura_prefijo_decidido", clave) == primera_mala
            ),
            "the app's certifier at the decided prefix",
            explica=app.log_tail,
        )
        assert _metrica(app, "fichas_revision_apertura_pendientes", clave) == len(MALAS)
        assert _abiertas(kafka, topics, clave) == []
        for sku in MALAS:
            _decidir(revisor, f"{sku}-v1", aprobar=False)
        abiertas = esperar(lambda: _abiertas(kafka, topics, clave), "the main key's gate open", 120)
        for estado in abiertas:
            assert estado.abierta_por == ABIERTA_POR_AUTOMATICO
            assert estado.origen_datos.startswith(ORIGEN_SECUENCIAL_SOMBRA)
            assert estado.umbral is not None and estado.umbral <= 0.97

        # 3. The workers publish; the final fichas are those of shadow mode.
        esperar(
            lambda: worker.metric("fichas_puerta_abierta", family=FAMILIA, key=clave.texto()) == 1,
            "the worker following the open gate",
        )
        asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes(SOMBRA, version=2)))
        abierta = esperar(lambda: _todas(kafka, topics, SOMBRA, 2), "open-gate outcomes", 180)
        for sku in SOMBRA:
            antes, despues = sombra[sku], abierta[sku]
            assert (despues["ficha"], despues["intentos"]) == (antes["ficha"], antes["intentos"])
            publicada = sku in BUENAS or sku == MALA_ALTA_SKU
            assert despues["topic"] == (topics.publicadas if publicada else topics.revision), sku
            modelo = FichaPublicada if publicada else FichaEnRevision
            registro = {k: v for k, v in despues.items() if k != "topic"}
            assert modelo.model_validate(registro).clave == clave

        # 4. The sample of step 3 graded (the good fichas correct, the bad one the judge liked
        # incorrect); then the judge drifts: its bad fichas are published and graded wrong;
        # the closing tests close the gate.
        for sku in [*BUENAS, MALA_ALTA_SKU]:
            esperar(lambda s=sku: revisor.formulario(f"{s}-v2", "form-muestra"), f"{sku} sample")
            correcta = sku != MALA_ALTA_SKU
            criterios = [] if correcta else ["C04"]
            assert revisor.juzgar_muestra(f"{sku}-v2", correcta, criterios) == 303
        asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes(_deriva())))
        deriva = esperar(lambda: _todas(kafka, topics, _deriva()), "drift outcomes", 120)
        assert {s["topic"] for s in deriva.values()} == {topics.publicadas}, {
            sku: (s.get("motivo"), s.get("problemas"), s.get("historial"))
            for sku, s in deriva.items()
        }
        for sku in _deriva():
            esperar(lambda s=sku: revisor.formulario(f"{s}-v1", "form-muestra"), f"{sku} sample")
            assert revisor.juzgar_muestra(f"{sku}-v1", correcta=False, criterios=["C04"]) == 303
        cerradas = esperar(
            lambda: [
                e
                for e in _estados(kafka, topics).values()
                if e.clave == clave and not e.abierta and e.motivo in MOTIVOS_VIGILANCIA
            ],
            "the gate closed by the bound or the detector",
            60,
            # the app's lines say whether it closed and was reopened (812ca31 fixed one such race)
            explica=app.log_tail,
        )
        assert cerradas
        # No old evidence reopens it: the app's certifier runs again and again (its metric
        # moves), and the main key stays closed.
        esperar(
            lambda: worker.metric("fichas_puerta_abierta", family=FAMILIA, key=clave.texto()) == 0,
            "the worker following the closed gate",
        )
        assert puerta_para(FAMILIA, clave, _estados(kafka, topics)) is not None
        assert not puerta_para(FAMILIA, clave, _estados(kafka, topics)).abierta  # type: ignore[union-attr]
    finally:
        for p in procesos:
            p.stop() if isinstance(p, RevisorProcess) else p.terminate()


def _llegadas(kafka: KafkaBroker, topic: str, clave: ClavePuerta) -> set[int]:
    """The arrival positions the decisions on ``topic`` carry as evidence of ``clave``."""
    return {
        r["value"]["evidencia"]["llegada"]
        for r in asyncio.run(read_all(kafka.bootstrap, topic))
        if (r["value"].get("evidencia") or {}).get("clave") == clave.model_dump(mode="json")
        and r["value"]["evidencia"]["familia"] == FAMILIA
    }


def _metrica(app: RevisorProcess, nombre: str, clave: ClavePuerta) -> float | None:
    """One of the app's gate metrics for the family and ``clave``; None while absent."""
    etiquetas = {f'family="{FAMILIA}"', f'key="{clave.texto()}"'}
    for linea in app.metrics().splitlines():
        nombre_etiquetas, _, valor = linea.rpartition(" ")
        metrica, _, resto = nombre_etiquetas.partition("{")
        if metrica == nombre and set(resto.rstrip("}").split(",")) == etiquetas:
            return float(valor)
    return None
