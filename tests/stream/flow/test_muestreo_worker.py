"""The blind shadow share and the sample's daily minimum (v1.6) in a real worker.

A real broker, the fake LLM over HTTP, the worker in process (``WorkerInProcess``: the same
``serve`` ``fichas worker`` runs). Two families with their gates open at λ = 0 (every final ficha
would publish): the events whose id falls in the share (``FICHAS_SOMBRA_PROPORCION`` 0.3,
``grafo.fuente_puerta.en_muestra_sombra``) go to review marked ``muestra_sombra`` and are
published nowhere; the rest are published. The hash sample is off (``FICHAS_MUESTRA_PROPORCION``
0), so the sample topic holds exactly the daily minimum: the first 3 published fichas of each
family per UTC day, each marked ``muestreo: minimo_diario``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

from esquemas import FichaEnRevision
from esquemas.sombra import en_muestra_sombra
from harness.contrato import validar_registros
from harness.estados_puerta import abrir, clave_fake
from harness.eventos import evento_dict
from harness.fake_llm.client import FakeLLM
from harness.kafka_broker import KafkaBroker
from harness.topicos import Topics, create_input_topic, produce, read_all
from harness.worker import WorkerInProcess, worker_env
from stream.flow.muestreo import dia_utc

BOTELLA = {
    "titulo": "Botella termo acero inoxidable",
    "descripcion": "Botella de acero inoxidable que mantiene la bebida fría.",
    "atributos": {"capacidad_ml": "750", "material": "acero", "color": "azul"},
    "idioma": "es",
}
MINIMO = 3
PROPORCION = 0.3


def _eventos() -> list[dict[str, object]]:
    zapatillas = [evento_dict(f"SOM-Z{i:02d}", event_id=f"som-z{i:02d}") for i in range(30)]
    botellas = [
        evento_dict(
            f"SOM-B{i:02d}",
            event_id=f"som-b{i:02d}",
            familia="botellas",
            ficha_proveedor=BOTELLA,
            cifras={},
        )
        for i in range(12)
    ]
    return zapatillas + botellas


async def test_la_parte_ciega_va_a_revision_y_el_minimo_diario_a_la_muestra(
    kafka: KafkaBroker, fake_llm: FakeLLM, topics: Topics, data_dir: Path, tmp_path: Path
) -> None:
    clave = clave_fake()
    for familia in ("zapatillas", "botellas"):
        await abrir(kafka.bootstrap, clave, topics.puerta, umbral=0.0, familia=familia)
    await create_input_topic(kafka.bootstrap, topics.entrada, partitions=2)
    eventos = _eventos()
    sombra = {
        str(e["event_id"]) for e in eventos if en_muestra_sombra(str(e["event_id"]), PROPORCION)
    }
    assert 6 <= len(sombra) <= 20  # 12.6 expected of 42; the ids are fixed, so is the draw
    env = worker_env(
        kafka,
        fake_llm,
        topics,
        data_dir,
        FICHAS_PUERTA="certificada",
        FICHAS_SOMBRA_PROPORCION=str(PROPORCION),
        FICHAS_MUESTRA_PROPORCION="0",
        FICHAS_MUESTRA_MINIMA_DIA=str(MINIMO),
    )
    worker = WorkerInProcess(env, tmp_path / "w.log")
    worker.start()
    worker.wait_ready()
    try:
        await produce(
            kafka.bootstrap,
            topics.entrada,
            [(str(e["sku"]).encode(), json.dumps(e).encode()) for e in eventos],
        )
        deadline = time.monotonic() + 180
        while True:
            publicadas = await read_all(kafka.bootstrap, topics.publicadas)
            revision = await read_all(kafka.bootstrap, topics.revision)
            if len(publicadas) + len(revision) >= len(eventos):
                break
            assert time.monotonic() < deadline, worker.log_tail()
            await asyncio.sleep(0.5)
        metricas = {
            (familia, nombre): worker.metric(nombre, **etiquetas)
            for familia in ("zapatillas", "botellas")
            for nombre, etiquetas in (
                ("fichas_sombra_total", {"family": familia, "key": clave.texto()}),
                ("fichas_muestra_minima_total", {"family": familia}),
            )
        }
        muestras_total = worker.metric("fichas_sample_total")
    finally:
        worker.terminate()
    muestra = await read_all(kafka.bootstrap, topics.muestra)

    # The share: exactly the hashed ids, to review, marked, code checks passed, never published.
    validar_registros(revision, "FichaEnRevision")
    assert {r["value"]["event_id"] for r in revision} == sombra
    for r in revision:
        item = FichaEnRevision.model_validate(r["value"])
        assert (item.muestra_sombra, item.motivo, item.clave) == (True, "sin_garantia", clave)
    publicadas_ids = {p["value"]["event_id"] for p in publicadas}
    assert publicadas_ids == {str(e["event_id"]) for e in eventos} - sombra
    assert not publicadas_ids & sombra and all(
        "muestra_sombra" not in p["value"] for p in publicadas
    )
    por_familia = Counter(r["value"]["familia"] for r in revision)
    for familia in ("zapatillas", "botellas"):
        assert metricas[(familia, "fichas_sombra_total")] == por_familia[familia]

    # The daily minimum: the first 3 published of each family and UTC day, nothing else.
    validar_registros(muestra, "FichaPublicada")
    assert all(m["value"]["muestreo"] == "minimo_diario" for m in muestra)
    assert {m["value"]["event_id"] for m in muestra} <= publicadas_ids
    dias = Counter((p["value"]["familia"], dia_utc(p["value"]["publicada_en"])) for p in publicadas)
    vistas = Counter((m["value"]["familia"], dia_utc(m["value"]["publicada_en"])) for m in muestra)
    assert vistas == {k: min(MINIMO, n) for k, n in dias.items()}
    assert all("muestreo" not in p["value"] and "origen" not in p["value"] for p in publicadas)
    for familia in ("zapatillas", "botellas"):
        assert metricas[(familia, "fichas_muestra_minima_total")] == sum(
            n for (f, _), n in vistas.items() if f == familia
        )
    assert muestras_total == len(muestra)
