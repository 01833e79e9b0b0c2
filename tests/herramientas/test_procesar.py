"""``fichas procesar`` as a user runs it: a real process, a JSONL file, the fake LLM."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from harness import forkserver
from harness.contrato import validar_salidas_procesar
from harness.entorno import entorno
from harness.estados_puerta import clave_fake, estado
from harness.eventos import evento_dict, evento_json
from harness.fake_llm.client import FakeLLM

pytestmark = pytest.mark.lento  # every test runs `fichas procesar` as a process

REPO = Path(__file__).parents[2]


def _env(llm: FakeLLM, data_dir: Path, **extra: str) -> dict[str, str]:
    variables = {
        "FICHAS_LLM_TIMEOUT_S": "60",
        "FICHAS_CONCURRENCIA": "8",
        "FICHAS_PUERTA": "veredicto",  # the command's plumbing; the gate has tests of its own
        "FICHAS_SOMBRA_PROPORCION": "0",  # an open gate publishes every ficha above λ (random ids)
    }
    return entorno(llm=llm, data_dir=data_dir, **variables | extra)


def _procesar(entrada: Path, env: dict[str, str]) -> tuple[int, list[dict[str, Any]], str]:
    proc = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "procesar", str(entrada)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    salidas = [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return proc.returncode, salidas, proc.stderr


def test_procesar_20_validas_y_5_invalidas(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"rules": [{"sku": "OFF-0[0-4]", "evaluador": ["rechazar"]}]})
    lineas = [evento_json(f"OFF-{n:02d}") for n in range(20)]
    lineas[3:3] = ["{esto no es json"]
    lineas[7:7] = [json.dumps(evento_dict("OFF-X1", familia="tostadoras"))]
    lineas[11:11] = [json.dumps(evento_dict("OFF-X2", version="siete"))]
    lineas[15:15] = ['"a' + "x" * 70_000 + '"']
    lineas[20:20] = ["[1, 2, 3]"]
    entrada = tmp_path / "entrada.jsonl"
    entrada.write_text("\n".join(lineas) + "\n\n", encoding="utf-8")

    code, salidas, stderr = _procesar(entrada, _env(fake_llm, data_dir))

    assert code == 0, stderr
    assert validar_salidas_procesar(salidas) == 25  # each against its schema
    destinos = [s["destino"] for s in salidas]
    assert destinos.count("dlq") == 5
    assert destinos.count("fichas.revision_manual") == 5
    assert destinos.count("fichas.publicadas") == 15
    codigos = [s["evento"]["error"]["codigo"] for s in salidas if s["destino"] == "dlq"]
    assert codigos == [
        "json_invalido",
        "familia_desconocida",
        "esquema_invalido",
        "demasiado_grande",
        "esquema_invalido",
    ]
    esquema = [s["evento"] for s in salidas if s["destino"] == "dlq"][2]
    assert esquema["error"]["campo"] == "version"
    assert esquema["origen"] == {"topic": str(entrada), "particion": 0, "offset": 11}
    # Outcomes come in input order.
    validas = [s["evento"]["sku"] for s in salidas if s["destino"] != "dlq"]
    assert validas == [f"OFF-{n:02d}" for n in range(20)]


def test_proceso_matado_tras_el_generador_no_repite_el_generador(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"rules": [{"sku": "RES-1", "evaluador": ["colgar", "aprobar"]}]})
    entrada = tmp_path / "uno.jsonl"
    entrada.write_text(evento_json("RES-1") + "\n", encoding="utf-8")
    env = _env(fake_llm, data_dir)
    proc = forkserver.popen(
        [sys.executable, "-m", "herramientas.cli", "procesar", str(entrada)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
    )
    try:
        deadline = time.monotonic() + 60
        while not fake_llm.requests(agent="evaluador", bodies=False):
            assert time.monotonic() < deadline, "the evaluator was never called"
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the generator has answered; the evaluator hangs
    finally:
        proc.wait(timeout=30)
    assert len(fake_llm.requests(agent="generador")) == 1

    code, salidas, stderr = _procesar(entrada, env)
    assert code == 0, stderr
    assert [s["destino"] for s in salidas] == ["fichas.publicadas"]
    validar_salidas_procesar(salidas)
    assert salidas[0]["evento"]["intentos"] == 1
    assert len(fake_llm.requests(agent="generador")) == 1  # not called again
    assert len(fake_llm.requests(agent="evaluador")) == 2

    # Redelivery of a finished event: the identical outcome, no LLM call at all.
    code, again, stderr = _procesar(entrada, env)
    assert code == 0, stderr
    assert again == salidas
    assert len(fake_llm.requests()) == 3


def test_llm_caido_procesar_se_rinde_con_codigo_3(tmp_path: Path, data_dir: Path) -> None:
    entrada = tmp_path / "uno.jsonl"
    entrada.write_text(evento_json("DOWN-1") + "\n", encoding="utf-8")
    env = entorno()
    env.update(FICHAS_LLM_URL="http://127.0.0.1:9/v1", FICHAS_DATA_DIR=str(data_dir))
    proc = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "procesar", "--espera-llm", "2", str(entrada)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )
    assert proc.returncode == 3
    assert "LLM at http://127.0.0.1:9/v1 unavailable after" in proc.stderr
    assert proc.stderr.rstrip().endswith("connection refused")
    assert proc.stdout == ""


def test_fichero_inexistente(tmp_path: Path) -> None:
    proc = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "procesar", str(tmp_path / "no.jsonl")],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert proc.returncode == 2
    assert "cannot read" in proc.stderr and "No such file or directory" in proc.stderr


def test_help_lista_los_comandos() -> None:
    proc = forkserver.run(
        [sys.executable, "-m", "herramientas.cli", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
    )
    assert proc.returncode == 0
    for comando in ("procesar", "worker", "llm-local"):
        assert comando in proc.stdout


def test_procesar_aplica_la_puerta_del_archivo_y_sin_archivo_esta_cerrada(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    def paso(puntuacion: float) -> dict[str, Any]:
        return {"accion": "aprobar", "puntuacion": puntuacion}

    fake_llm.configure(
        {
            "rules": [
                {"sku": "G-1", "evaluador": [paso(0.9)]},
                {"sku": "G-2", "evaluador": [paso(0.3)]},
            ]
        }
    )
    entrada = tmp_path / "entrada.jsonl"
    entrada.write_text(evento_json("G-1") + "\n" + evento_json("G-2") + "\n", encoding="utf-8")
    archivo = tmp_path / "puerta.json"
    abierta = estado(clave_fake(), umbral=0.8, familia="zapatillas")
    archivo.write_text(json.dumps([abierta.model_dump(mode="json")]), encoding="utf-8")
    env = _env(fake_llm, data_dir / "con", FICHAS_PUERTA="certificada")

    proc = forkserver.run(
        [
            sys.executable,
            "-m",
            "herramientas.cli",
            "procesar",
            str(entrada),
            "--puerta",
            str(archivo),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr
    salidas = {s["evento"]["sku"]: s for s in map(json.loads, proc.stdout.splitlines())}
    validar_salidas_procesar(list(salidas.values()))
    assert salidas["G-1"]["destino"] == "fichas.publicadas", (proc.stderr, salidas["G-1"])
    assert salidas["G-1"]["evento"]["puerta"]["umbral"] == 0.8
    assert salidas["G-2"]["destino"] == "fichas.revision_manual"
    assert salidas["G-2"]["evento"]["motivo"] == "sin_garantia"
    # the judge approved (at 0.3): the loop is done, whatever the gate; it only holds it back
    assert salidas["G-2"]["evento"]["intentos"] == 1
    assert "gate of zapatillas open" in proc.stderr

    code, sin_archivo, stderr = _procesar(
        entrada, _env(fake_llm, data_dir / "sin", FICHAS_PUERTA="certificada")
    )
    assert code == 0, stderr
    assert [
        (s["destino"], s["evento"]["motivo"], s["evento"]["intentos"]) for s in sin_archivo
    ] == [("fichas.revision_manual", "sin_garantia", 1)] * 2
    assert "no gate file" in stderr and "gate of zapatillas closed: no gate record at all" in stderr
