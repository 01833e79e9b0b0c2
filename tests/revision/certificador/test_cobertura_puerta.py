"""Issue 38, "Done when": a gate governs only what it measured, with real processes.

Everything real: the broker, a ``fichas worker`` process with ``FICHAS_PUERTA=certificada``,
the review app as a process with its automatic certifier, the scripted fake LLM (it approves
every ficha at 0.97), and a scripted reviewer deciding over HTTP through the app's forms.

1. zapatillas' approvals open its own gate and the pooled gate ``*``.
2. With ``*`` open (and seen by the app's certifier), four families' first fichas all go to
   review (none has evidence yet). The reviewer decides: botellas ``CUBRE`` approved (its own
   e-process at the pooled λ since the pooled certification crosses 1/δ: v1.6), camisetas 5
   approved and 5 rejected (its exclusion e-process crosses), auriculares 5 approved (not
   certified yet). The app covers botellas alone.
3. New versions: zapatillas (own gate) and botellas (covered, at the pooled λ, naming the
   pooled certification) publish; camisetas (excluded), auriculares (not certified) and
   sartenes (no evidence at all) go to review. The app's metrics say why for each.
"""

from __future__ import annotations

import asyncio
import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from esquemas.constantes import FAMILIA_TODAS, MOTIVO_PUERTA_CUBIERTA
from esquemas.estado_puerta import ClavePuerta, EstadoPuerta, id_puerta
from harness.estados_puerta import clave_fake
from harness.eventos import EJEMPLO_ORIGEN, evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.revisor import RevisorProcess, revisor_env
from harness.revisor_http import RevisorHttp
from harness.secuencia import aprobaciones_para_abrir, aprobaciones_para_cubrir
from harness.topicos import Topics, create_input_topic, produce, read_all, settings_for
from harness.worker import WorkerInProcess, worker_env
from infra.network import free_port
from puerta.topico import leer_estados
from tests.revision.conftest import CLAVE, USUARIO, en_juego, esperar

pytestmark = pytest.mark.kafka

# Supplier pages that give each family's required attributes (criterios/datos/familias_v1.json),
# so the fake generator's ficha passes every code check.
ORIGENES: dict[str, dict[str, Any]] = {
    "zapatillas": {"ficha_proveedor": dict(EJEMPLO_ORIGEN), "cifras": {"peso_g": 280}},
    "botellas": {
        "ficha_proveedor": {
            "titulo": "Botella térmica acero inoxidable 750 ml azul",
            "descripcion": "Doble pared con aislamiento al vacío: agua fría 24 h. Peso 340 g.",
            "atributos": {"capacidad_ml": "750", "material": "acero inoxidable", "color": "azul"},
            "idioma": "es",
        },
        "cifras": {"capacidad_ml": 750, "frio_h": 24, "peso_g": 340},
    },
    "camisetas": {
        "ficha_proveedor": {
            "titulo": "Camiseta básica algodón orgánico blanca talla M unisex",
            "descripcion": "Camiseta de manga corta y cuello redondo. Punto de 160 g/m².",
            "atributos": {
                "talla": "M",
                "color": "blanco",
                "composicion": "100% algodón orgánico",
                "genero": "unisex",
            },
            "idioma": "es",
        },
        "cifras": {"gramaje_g_m2": 160},
    },
    "auriculares": {
        "ficha_proveedor": {
            "titulo": "Auriculares inalámbricos Bluetooth 5.3 negros",
            "descripcion": "Auriculares de diadema plegables con micrófono. Autonomía 30 h.",
            "atributos": {"conectividad": "Bluetooth 5.3", "autonomia_h": "30", "color": "negro"},
            "idioma": "es",
        },
        "cifras": {"autonomia_h": 30},
    },
    "sartenes": {
        "ficha_proveedor": {
            "titulo": "Sartén antiadherente de aluminio 28 cm",
            "descripcion": "Sartén de aluminio con revestimiento antiadherente, para inducción.",
            "atributos": {"diametro_cm": "28", "material": "aluminio", "apta_induccion": "sí"},
            "idioma": "es",
        },
        "cifras": {"diametro_cm": 28},
    },
}
CUBRE = aprobaciones_para_cubrir()  # own approvals at λ_* that cover a family

PREFIJO = {"zapatillas": "ZA", "botellas": "BO", "camisetas": "CA", "auriculares": "AU",
           "sartenes": "SA"}  # fmt: skip


def _skus(familia: str, cuantos: int) -> list[str]:
    return [f"{PREFIJO[familia]}-{i:02d}" for i in range(cuantos)]


def _mensajes(familia: str, skus: list[str], version: int = 1) -> list[tuple[bytes, bytes]]:
    return [
        (
            sku.encode(),
            json.dumps(
                evento_dict(
                    sku, version, event_id=f"{sku}-v{version}", familia=familia, **ORIGENES[familia]
                ),
                ensure_ascii=False,
            ).encode(),
        )
        for sku in skus
    ]


def _salidas(kafka: KafkaBroker, topics: Topics, version: int) -> dict[str, dict[str, Any]]:
    """The outcome of every SKU at ``version``, by SKU, with the topic it went to."""
    salidas: dict[str, dict[str, Any]] = {}
    for topic in (topics.publicadas, topics.revision, topics.dlq):
        for r in asyncio.run(read_all(kafka.bootstrap, topic)):
            valor = r["value"]
            if valor.get("version") == version and "sku" in valor:
                salidas[valor["sku"]] = {"topic": topic, **valor}
    return salidas


def _todas(kafka: KafkaBroker, topics: Topics, skus: list[str], version: int = 1):
    salidas = _salidas(kafka, topics, version)
    return {s: salidas[s] for s in skus} if all(s in salidas for s in skus) else {}


def _estados(kafka: KafkaBroker, topics: Topics) -> dict[str, EstadoPuerta]:
    return asyncio.run(leer_estados(settings_for(kafka.bootstrap), topics.puerta, espera_s=30))


def _decidir(revisor: RevisorHttp, skus: list[str], aprobar: bool) -> None:
    for sku in skus:
        event_id = f"{sku}-v1"
        esperar(lambda e=event_id: revisor.formulario(e, "form-rechazar"), f"{event_id} queued")
        estado = revisor.aprobar(event_id) if aprobar else revisor.rechazar(event_id, ["C04"])
        assert estado == 303, (event_id, estado)


def _gobierno(app: RevisorProcess, clave: ClavePuerta) -> dict[str, tuple[str, str]]:
    """family -> (gate, reason) from the app's ``fichas_revision_familia_gobierno``."""
    rige = {}
    for linea in app.metrics().splitlines():
        if not linea.startswith("fichas_revision_familia_gobierno{"):
            continue
        etiquetas = dict(
            par.split("=", 1) for par in linea[linea.index("{") + 1 : linea.index("}")].split(",")
        )
        if etiquetas["key"].strip('"') == clave.texto():
            rige[etiquetas["family"].strip('"')] = (
                etiquetas["gate"].strip('"'),
                etiquetas["reason"].strip('"'),
            )
    return rige


def test_la_conjunta_solo_publica_lo_que_midio(
    kafka: KafkaBroker, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    topics = Topics()
    clave = clave_fake()
    fake_llm.configure(
        {"rules": [{"sku": ".*", "evaluador": [{"accion": "aprobar", "puntuacion": 0.97}]}]}
    )
    asyncio.run(create_input_topic(kafka.bootstrap, topics.entrada, partitions=2))
    app = RevisorProcess(
        revisor_env(
            kafka.bootstrap,
            {**topics.env(), "FICHAS_TOPIC_DECISIONES": f"{topics.prefix}.fichas.decisiones"},
            tmp_path / "revisor",
        ),
        free_port(),
        tmp_path / "revisor.log",
        apertura="automatica",
        argumentos=["--ronda-s", "1"],
    )
    app.add_user(USUARIO, CLAVE)
    worker = WorkerInProcess(
        worker_env(kafka, fake_llm, topics, tmp_path / "w", FICHAS_PUERTA="certificada"),
        tmp_path / "w.log",
    )
    procesos = [app, worker]
    try:
        for p in procesos:
            p.start()
        for p in procesos:
            p.wait_ready()
        revisor = RevisorHttp(app.url)
        revisor.entrar(USUARIO, CLAVE)

        def abierta_en_worker(familia: str) -> bool:
            return worker.metric("fichas_puerta_abierta", family=familia, key=clave.texto()) == 1

        # 1. zapatillas' approvals open its own gate and the pooled one.
        zapatillas = _skus("zapatillas", aprobaciones_para_abrir() + 1)
        asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes("zapatillas", zapatillas)))
        sombra = esperar(lambda: _todas(kafka, topics, zapatillas), "zapatillas' outcomes", 180)
        assert {s["topic"] for s in sombra.values()} == {topics.revision}
        _decidir(revisor, zapatillas, aprobar=True)
        conjunta_id = id_puerta(FAMILIA_TODAS, clave)
        estados = esperar(
            lambda: (
                (e := _estados(kafka, topics)).get(conjunta_id)
                and e.get(id_puerta("zapatillas", clave))
                and e
            ),
            "zapatillas' gate and the pooled gate open",
            60,
            explica=app.log_tail,
        )
        conjunta = estados[conjunta_id]
        assert conjunta.abierta and conjunta.umbral is not None
        esperar(lambda: abierta_en_worker("zapatillas"), "the worker following zapatillas' gate")
        # The app's certifier saw * (coverage counts only what arrives after it did).
        esperar(
            lambda: en_juego(app, "cobertura") >= 1, "the app's certifier seeing the pooled gate"
        )

        # 2. With * open, families with no evidence of their own all go to review.
        lotes = {
            "botellas": _skus("botellas", CUBRE),
            "camisetas": _skus("camisetas", 10),
            "auriculares": _skus("auriculares", 5),
        }
        for familia, skus in lotes.items():
            asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes(familia, skus)))
        todas = [s for skus in lotes.values() for s in skus]
        primeras = esperar(lambda: _todas(kafka, topics, todas), "the new families' outcomes", 180)
        assert {s["topic"] for s in primeras.values()} == {topics.revision}, {
            sku: (s["topic"], s.get("motivo")) for sku, s in primeras.items()
        }
        _decidir(revisor, lotes["botellas"], aprobar=True)
        _decidir(revisor, lotes["camisetas"][:5], aprobar=True)
        _decidir(revisor, lotes["camisetas"][5:], aprobar=False)
        _decidir(revisor, lotes["auriculares"], aprobar=True)
        cubierta = esperar(
            lambda: _estados(kafka, topics).get(id_puerta("botellas", clave)),
            "botellas covered by the pooled gate",
            60,
            explica=app.log_tail,
        )
        assert cubierta.motivo == MOTIVO_PUERTA_CUBIERTA and cubierta.abierta
        assert cubierta.umbral == conjunta.umbral
        assert cubierta.conjunta_actualizada_en == conjunta.actualizada_en
        assert (cubierta.n, cubierta.k) == (CUBRE, 0)
        esperar(lambda: abierta_en_worker("botellas"), "the worker following botellas' coverage")
        estados = _estados(kafka, topics)
        for familia in ("camisetas", "auriculares", "sartenes"):
            assert id_puerta(familia, clave) not in estados, familia

        # 3. New versions: the measured families publish, the others go to review.
        segunda = {
            "zapatillas": zapatillas[:3],
            "botellas": lotes["botellas"][:3],
            "camisetas": lotes["camisetas"][:3],
            "auriculares": lotes["auriculares"][:3],
        }
        for familia, skus in segunda.items():
            asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes(familia, skus, 2)))
        sartenes = _skus("sartenes", 2)
        asyncio.run(produce(kafka.bootstrap, topics.entrada, _mensajes("sartenes", sartenes)))
        todas = [s for skus in segunda.values() for s in skus]
        salidas = esperar(lambda: _todas(kafka, topics, todas, 2), "second outcomes", 180)
        salidas |= esperar(lambda: _todas(kafka, topics, sartenes), "sartenes' outcomes", 180)
        for familia in ("zapatillas", "botellas"):
            for sku in segunda[familia]:
                assert salidas[sku]["topic"] == topics.publicadas, (sku, salidas[sku].get("motivo"))
                puerta = salidas[sku]["puerta"]
                assert puerta["familia"] == familia and puerta["umbral"] == conjunta.umbral
        for sku in segunda["botellas"]:
            puerta = salidas[sku]["puerta"]
            leido = datetime.fromisoformat
            assert leido(puerta["certificada_en"]) == cubierta.actualizada_en
            assert leido(puerta["conjunta_certificada_en"]) == conjunta.actualizada_en
        for sku in segunda["zapatillas"]:
            assert salidas[sku]["puerta"]["conjunta_certificada_en"] is None
        for sku in segunda["camisetas"] + segunda["auriculares"] + sartenes:
            assert salidas[sku]["topic"] == topics.revision, sku

        rige = esperar(
            lambda: (r := _gobierno(app, clave)).get("sartenes") and r,
            "the app's view of sartenes",
        )
        assert rige == {
            "zapatillas": ("propia", "propia"),
            "botellas": ("conjunta", "conjunta"),
            "camisetas": ("ninguna", "excluida"),
            "auriculares": ("ninguna", "sin_certificar"),
            "sartenes": ("ninguna", "sin_evidencia"),
        }
    finally:
        for p in procesos:
            p.stop() if isinstance(p, RevisorProcess) else p.terminate()
