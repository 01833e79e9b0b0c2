"""scripts/image_context.py: the image's build context as .dockerignore selects it, and its
digest, which ``scripts/imagen.sh build`` compares to skip a build that would change nothing.

A file it missed would leave a stale image in the tests; a file it added only costs a build.
So the rules are checked both ways on a small tree, and on the checkout itself.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

RAIZ = Path(__file__).resolve().parents[2]
SCRIPT = RAIZ / "scripts" / "image_context.py"

DOCKERIGNORE = """\
# a comment
.cache
tests
scripts
!scripts/keep.py
**/__pycache__
*.egg-info
"""


def _ejecutar(raiz: Path, *args: str) -> str:
    """The script, run from a copy inside ``raiz`` (it reads the tree it sits in)."""
    salida = subprocess.run(
        [sys.executable, str(raiz / "scripts" / "image_context.py"), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return salida.stdout


def _arbol(raiz: Path) -> None:
    (raiz / "scripts").mkdir(parents=True)
    shutil.copy(SCRIPT, raiz / "scripts" / "image_context.py")
    (raiz / ".dockerignore").write_text(DOCKERIGNORE, encoding="utf-8")
    for ruta in (
        "README.md",
        "pkg/a.py",
        "pkg/__pycache__/a.cpython-311.pyc",
        "__pycache__/x.pyc",
        "pkg/sub.egg-info/PKG-INFO",
        "top.egg-info/PKG-INFO",
        "tests/test_a.py",
        "scripts/keep.py",
        "scripts/other.sh",
        ".cache/grande/capa",
    ):
        (raiz / ruta).parent.mkdir(parents=True, exist_ok=True)
        (raiz / ruta).write_text(ruta, encoding="utf-8")


def test_la_seleccion_sigue_las_reglas_de_dockerignore(tmp_path: Path) -> None:
    """A folder pattern leaves out what it holds, ``*`` stays within one segment (a nested
    egg-info is sent), ``**/`` matches at any depth, ``!`` brings one file back."""
    _arbol(tmp_path)
    assert _ejecutar(tmp_path, "--list").split() == [
        ".dockerignore",
        "README.md",
        "pkg/a.py",
        "pkg/sub.egg-info/PKG-INFO",
        "scripts/keep.py",
    ]


def test_la_huella_cambia_con_el_contexto_y_solo_con_el(tmp_path: Path) -> None:
    _arbol(tmp_path)
    antes = _ejecutar(tmp_path)
    (tmp_path / "tests" / "test_a.py").write_text("otro", encoding="utf-8")
    (tmp_path / "scripts" / "other.sh").write_text("otro", encoding="utf-8")
    assert _ejecutar(tmp_path) == antes, "what the context leaves out changes nothing"
    (tmp_path / "pkg" / "a.py").write_text("otro", encoding="utf-8")
    cambiada = _ejecutar(tmp_path)
    assert cambiada != antes
    (tmp_path / "pkg" / "a.py").chmod(0o755)
    assert _ejecutar(tmp_path) != cambiada, "the executable bit is part of a file"


def test_el_contexto_de_este_repositorio_lleva_lo_que_instala_la_imagen() -> None:
    """The checkout's context: every package the wheel ships, the lock, uv's requirement
    script and the labelled set; none of tests/, docs/, k8s/ or the caches."""
    archivos = _ejecutar(RAIZ, "--list").split()
    primeros = {a.split("/")[0] for a in archivos}
    pyproject = tomllib.loads((RAIZ / "pyproject.toml").read_text(encoding="utf-8"))
    paquetes = {
        p.rstrip("*") for p in pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    }
    assert paquetes <= primeros
    assert {"pyproject.toml", "uv.lock", "README.md", "scripts/uv_requirement.py"} <= set(archivos)
    assert "ejemplos/evaluacion/casos.jsonl" in archivos
    assert not primeros & {"tests", "docs", "k8s", ".venv", ".cache", ".git", "bench"}
    assert not [a for a in archivos if "__pycache__" in a or a.endswith(".pyc")]
    assert [a for a in archivos if a.startswith("scripts/")] == ["scripts/uv_requirement.py"]
