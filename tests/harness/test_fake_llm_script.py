"""The fake LLM's script models: what a test may write, and what it is refused (no process)."""

from __future__ import annotations

import pytest

from harness.fake_llm.script import ConfigError, parse_config


@pytest.mark.parametrize(
    ("config", "mensaje"),
    [
        ({"lantency_ms": 5}, "lantency_ms: Extra inputs"),
        ({"rules": [{"sku": "A", "evaluadr": ["aprobar"]}]}, "rules.0.evaluadr: Extra inputs"),
        ({"latency_ms": True}, "latency_ms"),
        ({"max_parallel": 1.5}, "max_parallel"),
        ({"rules": [{"sku": "("}]}, "rules.0.sku: not a valid regex"),
        ({"default": {"generador": ["aprobar"]}}, "unknown action 'aprobar' for generador"),
        ({"default": {"evaluador": []}}, "default.evaluador"),
        ({"default": {"evaluador": ["error:200"]}}, "needs an HTTP status 400-599"),
        ({"default": {"evaluador": [{"accion": "aprobar"}]}}, '"puntuacion"'),
        ({"default": {"generador": [{"accion": "valida", "puntuacion": 0.5}]}}, "evaluador's"),
        ({"default": {"evaluador": [{"accion": "aprobar", "puntuacion": 2}]}}, "puntuacion"),
        ([], "config must be a JSON object"),
    ],
)
def test_un_guion_mal_escrito_se_rechaza_diciendo_donde(config, mensaje) -> None:
    with pytest.raises(ConfigError, match=mensaje.replace("(", r"\(")):
        parse_config(config)


def test_las_reglas_sustituyen_al_guion_por_defecto_solo_donde_coinciden() -> None:
    config = parse_config(
        {
            "latency_ms": 5,
            "rules": [
                {"sku": "A-.*", "evaluador": "rechazar", "latency_ms": 0},
                {"sku": "A-1", "generador": ["json_roto"]},  # never reached: the first rule wins
                {"sku": "B", "evaluador": [{"accion": "aprobar", "puntuacion": None}]},
            ],
        }
    )
    guiones, latencia = config.scripts_for("A-1")
    assert [p.accion for p in guiones["evaluador"]] == ["rechazar"]
    assert [p.accion for p in guiones["generador"]] == ["valida"]
    assert latencia == 0
    guiones, latencia = config.scripts_for("B")
    (paso,) = guiones["evaluador"]
    assert (paso.accion, paso.scored, paso.puntuacion, latencia) == ("aprobar", True, None, 5)
    guiones, _ = config.scripts_for("XA-1")  # fullmatch, not search
    assert [p.accion for p in guiones["evaluador"]] == ["aprobar"]
    assert not guiones["evaluador"][0].scored
    assert config.raw["default"] == {"generador": ["valida"], "evaluador": ["aprobar"]}
