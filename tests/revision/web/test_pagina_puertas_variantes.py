"""The Puertas page says how many evaluator variants ``fichas calibrar --recalificar`` tried on a
key's labels (issue 47, item 2), as a reviewer meets it: people's decisions in the app's store,
two runs of the real command (a dry run, then another evaluator prompt published on
``fichas.puerta``) against the fake LLM, the app as a process on the same store and a real
Chromium."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from esquemas.constantes import FAMILIA_TODAS, MOTIVO_SIN_GARANTIA
from esquemas.estado_puerta import ClavePuerta, id_puerta
from harness.estados_puerta import clave_fake, fichas_calibrar
from harness.fake_llm.client import FakeLLM
from harness.revisor import RevisorProcess, ficha_en_revision, revisor_env
from harness.topicos import Topics
from infra.network import free_port
from puerta import auditoria
from revision.almacen import decisiones as dec
from revision.almacen.cola import Almacen, Cierre, ItemNuevo, Llegada
from tests.revision.conftest import CLAVE, USUARIO, entrar, esperar, topics_env

pytestmark = pytest.mark.kafka

# the same generator as the running configuration, an older evaluator: the labels carry over
EVALUADOR_VIEJO = clave_fake().model_copy(update={"prompt_evaluador_sha256": "a" * 64})


async def _decididas(data_dir: Path, clave: ClavePuerta, n: int) -> None:
    """``n`` one-attempt fichas that arrived in shadow mode and a person approved."""
    almacen = await Almacen.abrir(None, data_dir)
    try:
        for i in range(n):
            r = ficha_en_revision(f"VA-{i}", motivo=MOTIVO_SIN_GARANTIA, puntuaciones=(0.9,))
            r |= {"intentos": 1, "clave": clave.model_dump(mode="json")}
            llegada = Llegada(clave, 0.9, True, True)
            nuevo = ItemNuevo.de_registro(r, "revision", r["motivo"], [])
            await almacen.guardar_item(nuevo, float(i), llegada)
            item = await almacen.item(r["event_id"])
            assert item is not None
            registro = dec.decision_de(item, "aprobada", USUARIO, 100.0 + i)
            await almacen.decidir(item, Cierre("aprobada", [], USUARIO, 100.0 + i, registro, None))
    finally:
        await almacen.cerrar()


def test_la_pagina_dice_cuantas_variantes_se_probaron(
    kafka: Any, fake_llm: FakeLLM, navegador: Any, tmp_path: Path
) -> None:
    topics = Topics()
    data_dir = tmp_path / "datos"
    data_dir.mkdir()
    asyncio.run(_decididas(data_dir, EVALUADOR_VIEJO, 3))
    env = revisor_env(kafka.bootstrap, topics_env(topics), data_dir)
    env |= {"FICHAS_LLM_URL": fake_llm.url, "FICHAS_LLM_MODELO": "fake"}
    proc = fichas_calibrar(["--recalificar", "--desde-almacen", "--dry-run"], env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    prompt = tmp_path / "evaluador.md"
    prompt.write_text("Juzga con rigor, VARIANTE-2:\n{criterios}\nSolo el JSON.\n", "utf-8")
    salida = tmp_path / "puerta.json"
    proc = fichas_calibrar(
        [
            "--recalificar",
            "--desde-almacen",
            "--salida",
            str(salida),
            "--publicar",
            kafka.bootstrap,
        ],
        env | {"FICHAS_PROMPT_EVALUADOR_ARCHIVO": str(prompt)},
        tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    estados, _ = auditoria.leer(salida)
    conjunta = id_puerta(FAMILIA_TODAS, estados[0].clave)

    app = RevisorProcess(env, free_port(), data_dir / "revisor.log")
    app.add_user(USUARIO, CLAVE)
    app.start()
    try:
        app.wait_ready()
        entrar(navegador, app)
        selector = f'section[data-puerta="{conjunta}"] .variantes'

        def bloque() -> Any:  # the page afresh: the app may not have read the topic yet
            navegador.get(app.url + "/puertas")
            return navegador.find_elements(By.CSS_SELECTOR, selector)

        variantes = esperar(
            bloque,
            "the pooled gate's variants",
            explica=lambda: navegador.find_element(By.TAG_NAME, "body").text,
        )[0]
        assert variantes.find_element(By.CLASS_NAME, "variantes-n").text == "2"
        assert "en 2 corridas" in variantes.text
        assert "La garantía (δ) es de cada variante" in variantes.text
        assert variantes.find_element(By.CLASS_NAME, "variantes-azar").text == "0.1"
        # the older evaluator's key, never certified by --recalificar, says nothing of it
        viejo = id_puerta(FAMILIA_TODAS, EVALUADOR_VIEJO)
        assert navegador.find_elements(By.CSS_SELECTOR, f'section[data-puerta="{viejo}"]')
        assert not navegador.find_elements(
            By.CSS_SELECTOR, f'section[data-puerta="{viejo}"] .variantes'
        )
    finally:
        app.stop()
