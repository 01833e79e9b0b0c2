"""The per-file time table read from a JUnit XML report (harness/duraciones.py)."""

from __future__ import annotations

from pathlib import Path

from harness.duraciones import main, por_archivo, tabla

XML = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.stream.test_worker" name="test_a" time="30.5"/>
<testcase classname="tests.stream.test_worker" name="test_b" time="10.0"/>
<testcase classname="tests.revision.web.test_app.TestLogin" name="test_c" time="2.25"/>
<testcase classname="tests.grafo.test_bucle" name="test_d[x]" time="0.25"><skipped/></testcase>
</testsuite></testsuites>
"""


def _report(tmp_path: Path, name: str, text: str = XML) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_suma_por_archivo_tambien_clases(tmp_path: Path) -> None:
    totals = por_archivo(_report(tmp_path, "r.xml"))
    assert totals == {
        "tests/stream/test_worker.py": (2, 40.5),
        "tests/revision/web/test_app.py": (1, 2.25),
        "tests/grafo/test_bucle.py": (1, 0.25),
    }


def test_tabla_de_dos_informes_ordenada_por_el_ultimo(tmp_path: Path) -> None:
    antes = _report(tmp_path, "antes.xml")
    despues = _report(
        tmp_path,
        "despues.xml",
        XML.replace('time="30.5"', 'time="1.5"').replace(
            'name="test_c" time="2.25"', 'name="test_c" time="9"'
        ),
    )
    lines = tabla([antes, despues], top=2).splitlines()
    assert lines[0] == "| file | tests | s (antes.xml) | s (despues.xml) |"
    assert lines[2] == "| `tests/stream/test_worker.py` | 2 | 40 | 12 |"
    assert lines[3] == "| `tests/revision/web/test_app.py` | 1 | 2 | 9 |"
    assert lines[-1] == "| all files | 4 | 43 | 21 |"
    assert len(lines) == 5  # top=2 leaves the third file out


def test_la_orden_imprime_la_tabla(tmp_path: Path, capsys: object) -> None:
    assert main([str(_report(tmp_path, "r.xml"))]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert "| `tests/stream/test_worker.py` | 2 | 40 |" in out


def test_dos_informes_de_una_corrida_separados_por_comas(tmp_path: Path) -> None:
    """``make test`` runs pytest twice (the model's tests alone, then the rest): the two
    reports, joined by a comma, count as one run."""
    modelo = _report(
        tmp_path,
        "modelo.xml",
        '<testsuites><testsuite><testcase classname="tests.herramientas.test_demo_smoke" '
        'name="test_e" time="60"/></testsuite></testsuites>',
    )
    resto = _report(tmp_path, "resto.xml")
    totals = por_archivo(Path(f"{modelo},{resto}"))
    assert totals["tests/herramientas/test_demo_smoke.py"] == (1, 60.0)
    assert totals["tests/stream/test_worker.py"] == (2, 40.5)
    lines = tabla([Path(f"{modelo},{resto}")], top=9).splitlines()
    assert lines[0] == "| file | tests | s (modelo.xml+resto.xml) |"
    assert lines[-1] == "| all files | 5 | 103 |"
