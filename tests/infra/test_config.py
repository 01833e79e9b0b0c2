"""Settings: the contract's defaults, validation, and agreement with deploy/variables.txt; the
secrets that come as files (``FICHAS_*_ARCHIVO``), read and refused as the commands meet them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness import forkserver
from harness.basedatos import base_nueva
from harness.entorno import entorno
from harness.procesos import REPO
from infra.config import Settings

VARIABLES = Path(__file__).parents[2] / "deploy" / "variables.txt"


def test_valores_por_defecto_del_contrato(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in VARIABLES.read_text().split():
        monkeypatch.delenv(name, raising=False)
    s = Settings()
    assert s.kafka_brokers == "localhost:9092"
    assert s.llm_url == "http://localhost:8000/v1"
    assert s.llm_modelo == "qwen3-30b-a3b"
    assert s.max_intentos == 3
    assert s.concurrencia == 32
    assert s.postgres_dsn is None
    assert s.metricas_puerto == 9100
    assert s.kafka_espera_s == 60.0  # the start-up bound (docs/operacion.md); tests set it short
    assert (s.topic_entrada, s.topic_dlq) == ("proveedor.cambios", "proveedor.cambios.dlq")


def test_variables_del_despliegue_son_las_que_lee_el_codigo() -> None:
    listed = set(VARIABLES.read_text().split())
    fields = {f"FICHAS_{name.upper()}" for name in Settings.model_fields}
    assert listed == fields


def test_valor_vacio_es_no_definido(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FICHAS_LLM_REPEAT_PENALTY", "")
    monkeypatch.setenv("FICHAS_POSTGRES_DSN", "")
    s = Settings()
    assert s.llm_repeat_penalty is None and s.postgres_dsn is None


def test_valor_invalido_falla_al_arrancar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FICHAS_MAX_INTENTOS", "0")
    with pytest.raises(ValidationError):
        Settings()


def test_senal_con_rubrica_falla_al_arrancar(monkeypatch: pytest.MonkeyPatch) -> None:
    """The unsupported-words signal goes with the single-verdict evaluator only."""
    from infra.config import ConfigError, load_settings

    monkeypatch.setenv("FICHAS_EVALUADOR_SENAL", "true")
    assert load_settings().evaluador_senal  # alone it is fine
    monkeypatch.setenv("FICHAS_EVALUADOR_RUBRICA", "true")
    with pytest.raises(ConfigError, match=r"FICHAS_EVALUADOR_SENAL.*FICHAS_EVALUADOR_RUBRICA"):
        load_settings()


@pytest.mark.parametrize(
    ("variables", "modo"),
    [
        ({}, "veredicto"),
        ({"FICHAS_EVALUADOR": "citas"}, "citas"),
        ({"FICHAS_EVALUADOR_RUBRICA": "true"}, "rubrica"),  # the older spelling, a synonym
        ({"FICHAS_EVALUADOR_RUBRICA": "true", "FICHAS_EVALUADOR": "rubrica"}, "rubrica"),
        ({"FICHAS_EVALUADOR_RUBRICA": "true", "FICHAS_EVALUADOR": ""}, "rubrica"),  # empty: unset
        ({"FICHAS_EVALUADOR_RUBRICA": "false", "FICHAS_EVALUADOR": "citas"}, "citas"),
        ({"FICHAS_EVALUADOR": "rubrica"}, "rubrica"),
    ],
)
def test_modo_del_evaluador(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], modo: str
) -> None:
    for nombre, valor in variables.items():
        monkeypatch.setenv(nombre, valor)
    settings = Settings()
    assert settings.evaluador == modo
    assert settings.evaluador_rubrica is (modo == "rubrica")  # both always say the same


@pytest.mark.parametrize(
    ("variables", "mensaje"),
    [
        (
            {"FICHAS_EVALUADOR_RUBRICA": "true", "FICHAS_EVALUADOR": "citas"},
            "FICHAS_EVALUADOR_RUBRICA=true and FICHAS_EVALUADOR=citas disagree",
        ),
        (
            {"FICHAS_EVALUADOR_RUBRICA": "true", "FICHAS_EVALUADOR": "veredicto"},
            "FICHAS_EVALUADOR_RUBRICA=true and FICHAS_EVALUADOR=veredicto disagree",
        ),
        (
            {"FICHAS_EVALUADOR": "citas", "FICHAS_EVALUADOR_SENAL": "true"},
            "FICHAS_EVALUADOR_SENAL='true' is not valid: expected false while FICHAS_EVALUADOR",
        ),
        (
            {"FICHAS_EVALUADOR": "juez"},
            "FICHAS_EVALUADOR='juez' is not valid: "
            "expected 'veredicto', 'rubrica', 'citas' or 'lector'",
        ),
    ],
)
def test_modo_del_evaluador_que_no_vale_falla_al_arrancar_y_dice_por_que(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], mensaje: str
) -> None:
    from infra.config import ConfigError, load_settings

    for nombre, valor in variables.items():
        monkeypatch.setenv(nombre, valor)
    with pytest.raises(ConfigError) as error:
        load_settings()
    assert any(linea.startswith(mensaje) for linea in error.value.lines), error.value.lines


# ------------------------------------------------ secrets as files (FICHAS_*_ARCHIVO, issue 50)


@pytest.fixture
def sin_fichas(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No ``FICHAS_*`` variable of the test process reaches the settings."""
    for name in VARIABLES.read_text().split():
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def _secreto(tmp_path: Path, nombre: str, contenido: str) -> Path:
    """A Secret volume's file: ``contenido`` in ``tmp_path/nombre``, readable by its owner."""
    ruta = tmp_path / nombre
    ruta.write_text(contenido, encoding="utf-8")
    ruta.chmod(0o400)
    return ruta


def _lineas(entorno: pytest.MonkeyPatch, **variables: str) -> list[str]:
    """``load_settings``' lines for these variables (empty when they are accepted)."""
    from infra.config import ConfigError, load_settings

    for nombre, valor in variables.items():
        entorno.setenv(nombre, valor)
    try:
        load_settings()
    except ConfigError as exc:
        return exc.lines
    return []


def test_los_secretos_se_leen_de_su_fichero(sin_fichas, tmp_path: Path) -> None:
    """The file's content less one trailing line break (``echo`` adds it, CRLF included) is the
    setting, as the variable would give it; the log masks it as today and shows the path."""
    from infra.config import effective, load_settings

    dsn = _secreto(tmp_path, "postgres-dsn", "postgresql://fichas:s3cr3t@pg:5432/fichas\n")
    clave = _secreto(tmp_path, "llm-api-key", "sk-clave con espacio \r\n")
    sin_fichas.setenv("FICHAS_POSTGRES_DSN_ARCHIVO", str(dsn))
    sin_fichas.setenv("FICHAS_LLM_API_KEY_ARCHIVO", str(clave))
    settings = load_settings()
    assert settings.postgres_dsn == "postgresql://fichas:s3cr3t@pg:5432/fichas"
    assert settings.llm_api_key == "sk-clave con espacio "
    registro = effective(settings)
    assert registro["FICHAS_POSTGRES_DSN"] == "postgresql://fichas:***@pg:5432/fichas"
    assert registro["FICHAS_LLM_API_KEY"] == "***"
    assert registro["FICHAS_POSTGRES_DSN_ARCHIVO"] == str(dsn)
    assert "s3cr3t" not in str(registro) and "sk-clave" not in str(registro)


def test_sin_fichero_todo_sigue_como_antes(sin_fichas) -> None:
    """Unset or empty (manifests set every variable): the variables as before."""
    from infra.config import load_settings

    sin_fichas.setenv("FICHAS_POSTGRES_DSN_ARCHIVO", "")
    sin_fichas.setenv("FICHAS_LLM_API_KEY_ARCHIVO", "")
    sin_fichas.setenv("FICHAS_POSTGRES_DSN", "postgresql://otra@pg/fichas")
    settings = load_settings()
    assert settings.postgres_dsn == "postgresql://otra@pg/fichas"
    assert settings.llm_api_key == "EMPTY"
    assert settings.postgres_dsn_archivo is None and settings.llm_api_key_archivo is None


@pytest.mark.parametrize(
    ("variable", "valor"),
    [
        ("FICHAS_POSTGRES_DSN", "postgresql://fichas:s3cr3t@pg:5432/fichas"),
        ("FICHAS_LLM_API_KEY", "s3cr3t"),
    ],
)
def test_la_variable_y_su_fichero_a_la_vez_se_rechazan(
    sin_fichas, tmp_path: Path, variable: str, valor: str
) -> None:
    """One line naming both, and never the secret itself (the line goes to the pod's log)."""
    archivo = _secreto(tmp_path, "secreto", "otro\n")
    lineas = _lineas(sin_fichas, **{variable: valor, f"{variable}_ARCHIVO": str(archivo)})
    assert lineas == [
        f"{variable}_ARCHIVO='{archivo}' is not valid: expected unset while {variable} is set "
        "(give the secret one way: the file, or the variable)"
    ]
    assert "s3cr3t" not in "\n".join(lineas)


def test_la_clave_por_defecto_no_cuenta_como_puesta(sin_fichas, tmp_path: Path) -> None:
    """``EMPTY`` (the default, "no key") beside the file is not a second source."""
    archivo = _secreto(tmp_path, "llm-api-key", "sk-1\n")
    assert not _lineas(
        sin_fichas, FICHAS_LLM_API_KEY="EMPTY", FICHAS_LLM_API_KEY_ARCHIVO=str(archivo)
    )


@pytest.mark.parametrize(
    ("contenido", "esperado"),
    [
        (None, "a readable file (No such file or directory)"),
        ("", "a file holding {} (this one is empty)"),
        ("\n", "a file holding {} (this one is empty)"),
        (b"\xff\xfe\x00", "a text file (PEM or a secret), not binary"),
        ("carpeta", "a readable file (Is a directory)"),
    ],
)
def test_un_fichero_vacio_o_ilegible_una_linea_con_la_variable_y_la_ruta(
    sin_fichas, tmp_path: Path, contenido: str | bytes | None, esperado: str
) -> None:
    ruta = tmp_path / "secreto"
    if isinstance(contenido, bytes):
        ruta.write_bytes(contenido)
    elif contenido == "carpeta":
        ruta.mkdir()
    elif contenido is not None:
        ruta.write_text(contenido)
    for variable, que in (
        ("FICHAS_POSTGRES_DSN_ARCHIVO", "the PostgreSQL DSN"),
        ("FICHAS_LLM_API_KEY_ARCHIVO", "the LLM API key"),
    ):
        lineas = _lineas(sin_fichas, **{variable: str(ruta)})
        sin_fichas.delenv(variable)
        assert lineas == [f"{variable}='{ruta}' is not valid: expected {esperado.format(que)}"]


def _fichas(*args: str, **variables: str) -> subprocess.CompletedProcess[str]:
    """``fichas ARGS`` through its entry point, with only these ``FICHAS_*`` variables."""
    return forkserver.run(
        [sys.executable, "-m", "herramientas.cli", *args],
        env=entorno(**variables),
        cwd=REPO,
        input="",
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    "orden",
    [
        ["migrar"],
        ["worker"],
        ["revisor"],
        ["informe", "--revision"],
        ["evaluar", "--modo", "evaluador"],
        ["demo", "--sin-revisor"],
    ],
    ids=" ".join,
)
def test_una_orden_con_un_fichero_malo_dice_una_linea_y_sale_con_2(
    orden: list[str], tmp_path: Path
) -> None:
    """What a pod whose Secret lacks the key meets: one line naming the variable and the
    path, exit 2, no traceback, nothing started."""
    falta = tmp_path / "secretos" / "postgres-dsn"
    resultado = _fichas(
        *orden, FICHAS_POSTGRES_DSN_ARCHIVO=str(falta), FICHAS_DATA_DIR=str(tmp_path)
    )
    assert resultado.returncode == 2, resultado.stderr[-2000:]
    assert resultado.stderr.splitlines() == [
        f"fichas {orden[0]}: FICHAS_POSTGRES_DSN_ARCHIVO='{falta}' is not valid: expected a "
        "readable file (No such file or directory)"
    ]


@pytest.mark.postgres
def test_migrar_usa_el_postgresql_del_fichero(postgres_dsn: str, tmp_path: Path) -> None:
    """``fichas migrar`` as the init containers run it, the DSN from the Secret's file (with
    the line break ``echo`` leaves): the schema lands in that database, none in SQLite."""
    import psycopg

    with base_nueva(postgres_dsn, prefijo="fichas_archivo") as dsn:
        archivo = _secreto(tmp_path, "postgres-dsn", dsn + "\n")
        resultado = _fichas(
            "migrar", FICHAS_POSTGRES_DSN_ARCHIVO=str(archivo), FICHAS_DATA_DIR=str(tmp_path)
        )
        assert resultado.returncode == 0, resultado.stderr[-3000:]
        assert "versiones (postgres): schema version none -> 1 (migrated)" in resultado.stdout, (
            resultado.stdout
        )
        with psycopg.connect(dsn) as conn:
            tablas = {
                fila[0]
                for fila in conn.execute(
                    "select tablename from pg_tables where schemaname = 'public'"
                ).fetchall()
            }
    assert {"fichas_versiones", "checkpoints"} <= tablas, tablas
    assert not list(tmp_path.glob("*.sqlite"))


@pytest.mark.parametrize(
    "variable",
    [
        "FICHAS_PROMPT_GENERADOR_ARCHIVO",
        "FICHAS_PROMPT_EVALUADOR_ARCHIVO",
        "FICHAS_CANDIDATA_PROMPT_GENERADOR_ARCHIVO",
        "FICHAS_CANDIDATA_PROMPT_EVALUADOR_ARCHIVO",
    ],
)
def test_un_archivo_de_prompt_solo_se_abre_aqui(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, variable: str
) -> None:
    """The settings refuse a prompt path they cannot open, on its own line; a file that opens
    passes whatever its text (the text is the graph's check, ``grafo.prompt_archivo``, which
    every command runs: tests/herramientas/test_arranque.py)."""
    from infra.config import ConfigError, load_settings

    falta = tmp_path / "falta.md"
    monkeypatch.setenv(variable, str(falta))
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert info.value.lines == [
        f"{variable}={str(falta)!r} is not valid: expected a readable file "
        "(No such file or directory)"
    ]
    malo = tmp_path / "malo.md"
    malo.write_text("Escribe la ficha de {producto}.\n", encoding="utf-8")
    monkeypatch.setenv(variable, str(malo))
    assert malo in load_settings().model_dump().values()
