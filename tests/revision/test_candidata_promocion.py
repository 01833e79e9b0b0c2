"""Issue 41, "Done when" (first bullet): a candidate prompt certified in shadow and promoted, end
to end, while the live key's publications never stop and nothing of the candidate is published.

Everything real: the broker, the fake LLM as a server (it approves every ficha at 0.97),
``fichas revisor --apertura automatica`` and ``fichas worker`` as processes, a scripted reviewer
over HTTP (``harness.revisor_http``), ``fichas puerta promover`` as a command.

1. The worker's live key L has zapatillas' gate open and publishes; it also runs a candidate,
   another generator prompt (``FICHAS_CANDIDATA_GENERADOR_EJEMPLOS=true``: key K), on the 30 %
   of SKUs the hash routes (``FICHAS_CANDIDATA_PROPORCION=0.3``).
2. Rounds of 30 SKUs; the reviewer approves the candidate's items as they arrive until the
   app's opener opens K's zapatillas gate (``aprobaciones_para_abrir`` approvals in a row at
   least, puerta.secuencial: about 6 rounds). It judges one live sample too: the one decision
   fichas.decisiones gets.
3. The roll: the worker stops, a round arrives while none runs, a worker starts with the
   override moved to the live setting and share 0; then ``fichas puerta promover --de L --a K``.
4. Every SKU of every round published once, under L before the roll and K from it on; nothing
   of the candidate on fichas.publicadas, the sample or fichas.decisiones; L's gate closed,
   motivo ``sustituida``. Not here: several workers rolled one by one (a round split between L
   and K), holds copied (tests/herramientas/test_promover_cli.py), the Puertas page.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from esquemas import FichaEnRevision, FichaPublicada
from esquemas.constantes import ABIERTA_POR_AUTOMATICO, MOTIVO_PUERTA_SUSTITUIDA
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta
from harness.estados_puerta import abrir, clave_fake, fichas_puerta, leer
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.procesos import soltar
from harness.revisor import RevisorProcess, revisor_env
from harness.revisor_http import RevisorHttp
from harness.secuencia import aprobaciones_para_abrir
from harness.topicos import Topics, create_input_topic, produce, settings_for
from harness.worker import WorkerProcess, worker_env
from infra.kafka.read import read_to_end
from infra.network import free_port
from revision.almacen.item import id_item
from stream.candidata.bucle import a_candidata
from tests.revision.conftest import CLAVE, USUARIO, esperar

pytestmark = pytest.mark.kafka

FAMILIA = "zapatillas"  # harness.eventos' family
PROPORCION = 0.3
RONDA = 30  # SKUs per round: about 9 to the candidate, within its budget of 16 runs
MAX_RONDAS = 12  # the hash routes the 44 approvals that open within 6 rounds; a margin


class Escena:
    """The broker's topics, the app, the worker, and what the test reads of them."""

    def __init__(self, kafka: KafkaBroker, fake_llm: FakeLLM, tmp_path: Path) -> None:
        self.kafka = kafka
        self.fake_llm = fake_llm
        self.tmp_path = tmp_path
        self.topics = Topics()
        self.viva: ClavePuerta = clave_fake()
        self.candidata: ClavePuerta = clave_fake(ejemplos=True)
        fake_llm.configure({"default": {"evaluador": [{"accion": "aprobar", "puntuacion": 0.97}]}})
        self.app = RevisorProcess(
            revisor_env(kafka.bootstrap, self.topics.env(), tmp_path / "revisor"),
            free_port(),
            tmp_path / "revisor.log",
            apertura="automatica",
            argumentos=["--ronda-s", "1"],
        )
        self.worker = self.nuevo_worker(
            "w1",
            FICHAS_CANDIDATA_PROPORCION=str(PROPORCION),
            FICHAS_CANDIDATA_GENERADOR_EJEMPLOS="true",
            FICHAS_CANDIDATA_CONCURRENCIA="16",
        )
        # The rolled worker: the candidate's override moved to the live setting, share 0.
        # Started early, it waits at a barrier with its imports done (a pulled image), so the
        # roll's gap is the worker's own start (group join, gate topic), not Python's imports.
        self.relevo = self.nuevo_worker(
            "w2", FICHAS_GENERADOR_EJEMPLOS="true", FICHAS_CANDIDATA_PROPORCION="0"
        )
        self.barrera = tmp_path / "relevo"

    def nuevo_worker(self, nombre: str, **ajustes: str) -> WorkerProcess:
        """A worker with the certified gate, every publication sampled (so the sample topic
        would show a candidate's), and ``ajustes``; one consumer group and data directory
        for all (a rolled pod)."""
        env = worker_env(
            self.kafka,
            self.fake_llm,
            self.topics,
            self.tmp_path / "w",
            FICHAS_PUERTA="certificada",
            FICHAS_MUESTRA_PROPORCION="1",
            **ajustes,
        )
        return WorkerProcess(env, self.tmp_path / f"{nombre}.log")

    def arrancar(self) -> RevisorHttp:
        asyncio.run(create_input_topic(self.kafka.bootstrap, self.topics.entrada, partitions=2))
        asyncio.run(abrir(self.kafka.bootstrap, self.viva, self.topics.puerta, familia=FAMILIA))
        self.worker.start()
        self.app.add_user(USUARIO, CLAVE)
        self.app.start()
        self.app.wait_ready()
        self.worker.wait_ready()
        self.relevo.start(barrera=self.barrera)  # its imports overlap the rounds, not these
        revisor = RevisorHttp(self.app.url)
        revisor.entrar(USUARIO, CLAVE)
        return revisor

    def parar(self) -> None:
        self.app.stop()
        for worker in (self.worker, self.relevo):
            if worker.proc is not None and worker.alive():
                worker.terminate()

    def relevar(self, durante: list[str]) -> None:
        """Roll the worker: stop the candidate's host, produce ``durante`` while no worker
        runs, release the one with the new settings."""
        assert self.worker.terminate() == 0
        self.producir(durante)
        self.worker = self.relevo
        soltar(self.barrera, 1)
        self.worker.wait_ready()

    def producir(self, skus: list[str]) -> None:
        mensajes = [
            (s.encode(), json.dumps(evento_dict(s, 1, event_id=f"{s}-v1")).encode()) for s in skus
        ]
        asyncio.run(produce(self.kafka.bootstrap, self.topics.entrada, mensajes))

    def registros(self, *topics: str) -> list[tuple[str, str, dict[str, Any]]]:
        """Every record of ``topics`` so far, read by one reader: (topic, key, value)."""
        leidos, _ = asyncio.run(read_to_end(settings_for(self.kafka.bootstrap), topics))
        return [(r.topic, (r.key or b"").decode(), json.loads(r.value)) for r in leidos]

    def valores(self, topic: str) -> list[dict[str, Any]]:
        return [valor for _, _, valor in self.registros(topic)]

    def ronda(self, skus: list[str], candidatas: list[str]) -> None:
        """Wait until every SKU has its live outcome and every routed one its candidate item
        (outcomes are keyed by SKU, the DLQ's too); every live outcome must be a publication
        (the live gate never stops publishing)."""
        salidas = (self.topics.publicadas, self.topics.revision, self.topics.dlq)

        def completa() -> list[tuple[str, str]] | None:
            vivas, cand = [], set()
            for topic, sku, valor in self.registros(*salidas):
                if valor.get("candidata"):
                    cand.add(sku)
                elif sku in skus:
                    vivas.append((topic, sku))
            return vivas if len(vivas) >= len(skus) and cand >= set(candidatas) else None

        vivas = esperar(completa, f"the outcomes of {skus[0]}..", 120, self.worker.log_tail)
        assert {topic for topic, _ in vivas} == {self.topics.publicadas}, vivas

    def estado(self, familia: str, clave: ClavePuerta) -> EstadoPuerta | None:
        return leer(self.kafka.bootstrap, self.topics.puerta).get(id_puerta(familia, clave))


def _skus(ronda: int) -> list[str]:
    return [f"PR-{ronda:02d}-{i:02d}" for i in range(RONDA)]


def _abierta(estado: EstadoPuerta | None) -> EstadoPuerta | None:
    return estado if estado is not None and estado.abierta else None


def _juzgar_muestra(revisor: RevisorHttp, sku: str) -> str:
    """Judge the sampled publication of ``sku`` correct; its event id."""
    event_id = f"{sku}-v1"
    esperar(lambda: revisor.formulario(event_id, "form-muestra"), f"{event_id}'s sample")
    assert revisor.juzgar_muestra(event_id, correcta=True) == 303
    return event_id


@pytest.fixture
def escena(kafka: KafkaBroker, fake_llm: FakeLLM, tmp_path: Path) -> Any:
    e = Escena(kafka, fake_llm, tmp_path)
    try:
        yield e
    finally:
        e.parar()


def test_candidata_certificada_en_sombra_y_promovida_sin_apagar_lo_vivo(escena: Escena) -> None:
    viva, candidata = escena.viva, escena.candidata
    assert viva != candidata
    revisor = escena.arrancar()

    # 1-2. Rounds under L; the candidate's items approved as they come, until K opens.
    antes: list[str] = []
    aprobadas: list[str] = []
    muestra_juzgada = ""
    abierta: EstadoPuerta | None = None
    ronda = 0
    while abierta is None:
        assert ronda < MAX_RONDAS, f"K not opened after {len(aprobadas)} approvals\n" + (
            escena.app.log_tail()
        )
        skus = _skus(ronda)
        rutadas = [s for s in skus if a_candidata(s, PROPORCION)]
        escena.producir(skus)
        escena.ronda(skus, rutadas)
        for sku in rutadas:
            item = id_item(f"{sku}-v1", True, candidata.texto())
            esperar(lambda i=item: revisor.formulario(i, "form-aprobar"), item, 60)
            assert revisor.aprobar(item) == 303, item
        if ronda == 0:  # a live sample, judged: a decision the app must write
            muestra_juzgada = _juzgar_muestra(revisor, next(s for s in skus if s not in rutadas))
        antes += skus
        aprobadas += rutadas
        ronda += 1
        abierta = _abierta(escena.estado(FAMILIA, candidata))
    assert abierta.abierta_por == ABIERTA_POR_AUTOMATICO
    assert aprobaciones_para_abrir() <= abierta.n <= len(aprobadas) and abierta.k == 0
    assert _abierta(escena.estado(FAMILIA, viva)) is not None  # L still open, publishing

    # 3. The roll: a round arrives while the worker is down; the candidate's setting is live.
    durante = _skus(ronda)
    escena.relevar(durante)
    escena.ronda(durante, [])
    env = {
        **escena.topics.env(),
        "FICHAS_KAFKA_BROKERS": escena.kafka.bootstrap,
        "FICHAS_LLM_URL": escena.fake_llm.url,
    }
    proc = fichas_puerta(["promover", "--de", viva.texto(), "--a", candidata.texto()], env)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    sustituida = escena.estado(FAMILIA, viva)
    assert sustituida is not None and not sustituida.abierta
    assert sustituida.motivo == MOTIVO_PUERTA_SUSTITUIDA
    assert sustituida.origen_datos.startswith(f"promocion:{candidata.texto()}")
    assert _abierta(escena.estado(FAMILIA, candidata)) is not None
    despues = _skus(ronda + 1)
    escena.producir(despues)
    escena.ronda(despues, [])
    abierta_en_worker = escena.worker.metric(
        "fichas_puerta_abierta", family=FAMILIA, key=candidata.texto()
    )
    assert abierta_en_worker == 1

    # 4. What subscribers saw: every SKU once, under L before the roll, under K from it on.
    publicadas = [
        FichaPublicada.model_validate(v) for v in escena.valores(escena.topics.publicadas)
    ]
    assert sorted(p.sku for p in publicadas) == sorted(antes + durante + despues)
    for p in publicadas:
        assert p.clave == (viva if p.sku in antes else candidata), p.sku
        assert p.puerta is not None and p.puerta.clave == p.clave
    crudos = escena.valores(escena.topics.publicadas) + escena.valores(escena.topics.muestra)
    assert not any(r.get("candidata") for r in crudos)
    claves = {(p.sku, p.clave.texto()) for p in publicadas}
    muestra = escena.valores(escena.topics.muestra)
    assert len(muestra) == len(publicadas)
    assert {(m["sku"], ClavePuerta.model_validate(m["clave"]).texto()) for m in muestra} == claves

    # The review topic: the candidate's items only, one per routed SKU before the roll, under K.
    items = [FichaEnRevision.model_validate(v) for v in escena.valores(escena.topics.revision)]
    assert sorted(i.sku for i in items) == sorted(s for s in antes if a_candidata(s, PROPORCION))
    assert all(i.candidata and i.clave == candidata for i in items)

    # fichas.decisiones: the sample's judgement, and nothing for a candidate item.
    decisiones = esperar(
        lambda: escena.valores(escena.topics.decisiones), "the sample's decision", 30
    )
    assert [d["event_id"] for d in decisiones] == [muestra_juzgada]
    assert muestra_juzgada.removesuffix("-v1") not in aprobadas
