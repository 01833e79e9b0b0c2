"""Fault-injection points: inert by default, armed only by the switch, declared and documented."""

from __future__ import annotations

import ast
import re
import signal
import subprocess
import sys

import pytest

from infra import fault_points
from infra.fault_points import (
    ALLOWANCE,
    FAULT_POINTS,
    REVISOR_CAIDA_TRAS_DECISION,
    SWITCH,
    armed,
    fault_point,
)
from tests.infra.test_fronteras import PRODUCTO, REPO


def _llamar_en_proceso(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    codigo = (
        "from infra.fault_points import fault_point, REVISOR_CAIDA_TRAS_DECISION\n"
        "fault_point(REVISOR_CAIDA_TRAS_DECISION)\nprint('vivo')\n"
    )
    return subprocess.run(
        [sys.executable, "-c", codigo],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_inerte_sin_el_interruptor() -> None:
    resultado = _llamar_en_proceso({})
    assert (resultado.returncode, resultado.stdout.strip()) == (0, "vivo")


def test_armado_mata_el_proceso_con_sigkill() -> None:
    resultado = _llamar_en_proceso({SWITCH: f" {REVISOR_CAIDA_TRAS_DECISION} ,"})
    assert resultado.returncode == -signal.SIGKILL, resultado.stderr
    assert "vivo" not in resultado.stdout


def test_nombres_desconocidos_fallan_en_vez_de_quedar_inertes() -> None:
    with pytest.raises(ValueError, match="unknown fault points"):
        armed({SWITCH: "revisor.caida_tras_decisoin"})
    with pytest.raises(KeyError):
        fault_point("no.declarado")
    assert armed({}) == frozenset()


def _llamadas_en_el_producto() -> list[str]:
    """The constant each ``fault_point(...)`` call of the product passes, resolved to its value."""
    valores = {
        nombre: valor
        for nombre, valor in vars(fault_points).items()
        if isinstance(valor, str) and valor in FAULT_POINTS
    }
    puntos: list[str] = []
    for paquete in PRODUCTO:
        for archivo in sorted((REPO / paquete).rglob("*.py")):
            if archivo == REPO / "infra" / "fault_points.py":
                continue
            for nodo in ast.walk(ast.parse(archivo.read_text(encoding="utf-8"))):
                if (
                    isinstance(nodo, ast.Call)
                    and isinstance(nodo.func, ast.Name)
                    and nodo.func.id == "fault_point"
                ):
                    argumento = nodo.args[0]
                    assert isinstance(argumento, ast.Name), f"{archivo}: name the point's constant"
                    puntos.append(valores[argumento.id])
    return puntos


def test_cada_punto_declarado_se_usa_y_esta_documentado() -> None:
    assert sorted(_llamadas_en_el_producto()) == sorted(FAULT_POINTS)
    doc = (REPO / "docs" / "operacion.md").read_text(encoding="utf-8")
    seccion = doc.split("## Fault-injection points", 1)[1].split("\n## ", 1)[0]
    assert SWITCH in seccion
    assert sorted(re.findall(r"^\| `([a-z_.]+)` \|", seccion, re.M)) == sorted(FAULT_POINTS)


def test_sin_el_permiso_de_la_suite_ningun_proceso_arranca_con_el_interruptor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A deployment that copied the switch from a test refuses to start: one line, naming it."""
    from infra.config import ConfigError, load_settings

    monkeypatch.setenv(SWITCH, REVISOR_CAIDA_TRAS_DECISION)
    monkeypatch.delenv(ALLOWANCE, raising=False)
    with pytest.raises(ConfigError) as error:
        load_settings()
    (linea,) = error.value.lines
    assert linea.startswith(f"{SWITCH}='{REVISOR_CAIDA_TRAS_DECISION}' is not valid"), linea
    assert ALLOWANCE in linea
    monkeypatch.setenv(ALLOWANCE, "1")
    load_settings()
    monkeypatch.delenv(SWITCH)
    monkeypatch.delenv(ALLOWANCE)
    load_settings()
