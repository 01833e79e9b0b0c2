"""Settings: the contract's defaults, validation, and agreement with deploy/variables.txt."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

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
