"""uv.lock agrees with pyproject.toml, and everything that installs the project installs from it.

A dependency added to or changed in pyproject.toml without ``make lock`` would leave the lock
saying one thing and pyproject another; ``uv sync --locked`` (scripts/venv.sh, the Dockerfile)
refuses that at install time, and this test says it in CI with the command to run. It reads the
lock as uv writes it: the project's ``[package.metadata] requires-dist`` is pyproject's list,
one entry per requirement, the extra folded into the marker.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

RAIZ = Path(__file__).resolve().parents[2]
ARREGLO = "pyproject.toml and uv.lock disagree: run `make lock` and commit uv.lock"

Entrada = tuple[str, tuple[str, ...], str, str]  # name, extras, specifier, marker


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((RAIZ / "pyproject.toml").read_text(encoding="utf-8"))


def _lock() -> dict[str, Any]:
    return tomllib.loads((RAIZ / "uv.lock").read_text(encoding="utf-8"))


def _entrada(nombre: str, extras: Any, especificador: str, marcador: str | None) -> Entrada:
    """One requirement in a form both files can be compared in (specifier order ignored)."""
    spec = ",".join(sorted(str(s) for s in SpecifierSet(especificador)))
    return (
        canonicalize_name(nombre),
        tuple(sorted(extras or ())),
        spec,
        str(Marker(marcador)) if marcador else "",
    )


def requisitos_de_pyproject(pyproject: dict[str, Any]) -> set[Entrada]:
    """Every requirement of pyproject.toml, an extra's with ``extra == '...'`` in its marker."""
    proyecto = pyproject["project"]
    pares = [(r, None) for r in proyecto.get("dependencies", [])]
    for extra, lista in proyecto.get("optional-dependencies", {}).items():
        pares += [(r, extra) for r in lista]
    res = set()
    for texto, extra in pares:
        r = Requirement(texto)
        marcador = str(r.marker) if r.marker else ""
        if extra is not None:
            marcador = f"({marcador}) and extra == '{extra}'" if marcador else f"extra == '{extra}'"
        res.add(_entrada(r.name, r.extras, str(r.specifier), marcador or None))
    return res


def proyecto_en_el_lock(lock: dict[str, Any]) -> dict[str, Any]:
    """The project's own entry of uv.lock (its source is this folder)."""
    (proyecto,) = [
        p for p in lock["package"] if p["source"].get("editable") == "." or p["name"] == "fichas"
    ]
    return proyecto


def requisitos_del_lock(lock: dict[str, Any]) -> set[Entrada]:
    """What uv recorded of pyproject.toml's requirements when it wrote the lock."""
    requisitos = proyecto_en_el_lock(lock)["metadata"]["requires-dist"]
    return {
        _entrada(r["name"], r.get("extras"), r.get("specifier", ""), r.get("marker"))
        for r in requisitos
    }


def grupos_de_pyproject(pyproject: dict[str, Any]) -> set[tuple[str, Entrada]]:
    """Every requirement of pyproject.toml's ``[dependency-groups]``, with its group."""
    res = set()
    for grupo, lista in pyproject.get("dependency-groups", {}).items():
        for texto in lista:
            r = Requirement(texto)
            marcador = str(r.marker) if r.marker else None
            res.add((grupo, _entrada(r.name, r.extras, str(r.specifier), marcador)))
    return res


def grupos_del_lock(lock: dict[str, Any]) -> set[tuple[str, Entrada]]:
    """What uv recorded of pyproject.toml's dependency groups when it wrote the lock."""
    grupos = proyecto_en_el_lock(lock)["metadata"].get("requires-dev", {})
    return {
        (grupo, _entrada(r["name"], r.get("extras"), r.get("specifier", ""), r.get("marker")))
        for grupo, lista in grupos.items()
        for r in lista
    }


def diferencias(pyproject: dict[str, Any], lock: dict[str, Any]) -> list[str]:
    """Lines saying where the two disagree; empty when the lock is current."""
    quiere, tiene = requisitos_de_pyproject(pyproject), requisitos_del_lock(lock)
    lineas = [f"in pyproject.toml, not in uv.lock: {e}" for e in sorted(quiere - tiene)]
    lineas += [f"in uv.lock, no longer in pyproject.toml: {e}" for e in sorted(tiene - quiere)]
    grupos, bloqueados = grupos_de_pyproject(pyproject), grupos_del_lock(lock)
    lineas += [f"group in pyproject.toml, not in uv.lock: {e}" for e in sorted(grupos - bloqueados)]
    lineas += [f"group in uv.lock, not in pyproject.toml: {e}" for e in sorted(bloqueados - grupos)]
    extras = sorted(pyproject["project"].get("optional-dependencies", {}))
    if sorted(proyecto_en_el_lock(lock)["metadata"].get("provides-extras", [])) != extras:
        lineas.append(f"extras differ: pyproject.toml has {extras}")
    return lineas


def test_el_lock_esta_al_dia_con_pyproject():
    lineas = diferencias(_pyproject(), _lock())
    assert not lineas, ARREGLO + "\n" + "\n".join(lineas)


def test_un_cambio_en_pyproject_sin_make_lock_se_detecta():
    """The check is not a yes to everything: a new dependency, a changed range, a new extra."""
    lock = _lock()
    nuevo = _pyproject()
    nuevo["project"]["dependencies"].append("paquete-que-nadie-ha-fijado>=1")
    assert any("paquete-que-nadie-ha-fijado" in linea for linea in diferencias(nuevo, lock))
    cambiado = _pyproject()
    cambiado["project"]["dependencies"] = [
        re.sub(r"^aiokafka.*", "aiokafka>=0.14,<0.16", d)
        for d in cambiado["project"]["dependencies"]
    ]
    assert any("aiokafka" in linea for linea in diferencias(cambiado, lock))
    extra = _pyproject()
    extra["project"]["optional-dependencies"]["gpu"] = ["vllm"]
    assert len(diferencias(extra, lock)) == 2  # the requirement and the extra's name


def test_el_backend_de_construccion_esta_en_el_lock():
    """[build-system]'s requires are the `build` group, so uv.lock pins them with hashes (the
    test above: every file by its sha256), and what builds the project builds it with them:
    without build isolation, the group installed first (issue 50: setuptools and wheel were
    whatever PyPI had that day)."""
    pyproject = _pyproject()
    sistema = {
        _entrada(Requirement(t).name, (), str(Requirement(t).specifier), None)
        for t in pyproject["build-system"]["requires"]
    }
    grupo = {e for g, e in grupos_de_pyproject(pyproject) if g == "build"}
    assert sistema == grupo, "[build-system] requires and the `build` group differ"
    versiones = {canonicalize_name(p["name"]): p for p in _lock()["package"]}
    for nombre, _extras, spec, _marcador in sistema:
        assert nombre in versiones, f"{nombre} (the build backend) is not in uv.lock. {ARREGLO}"
        assert SpecifierSet(spec).contains(Version(versiones[nombre]["version"]))
        assert versiones[nombre].get("wheels"), f"{nombre}: no wheel locked"
    for fichero in ("Dockerfile", "scripts/venv.sh"):
        texto = (RAIZ / fichero).read_text(encoding="utf-8")
        assert "--group build" in texto and "--no-build-isolation" in texto, fichero


def test_un_grupo_cambiado_sin_make_lock_se_detecta():
    """The build group is compared too: a changed range of the backend needs `make lock`."""
    cambiado = _pyproject()
    cambiado["dependency-groups"]["build"] = ["setuptools>=99"]
    assert any("group in pyproject.toml" in linea for linea in diferencias(cambiado, _lock()))


def test_cada_requisito_tiene_en_el_lock_una_version_que_lo_cumple():
    """Every requirement of pyproject.toml is locked, at a version its range accepts."""
    versiones = {canonicalize_name(p["name"]): Version(p["version"]) for p in _lock()["package"]}
    entorno = {"sys_platform": "linux", "platform_machine": "x86_64", "python_version": "3.11"}
    for nombre, _extras, spec, marcador in requisitos_de_pyproject(_pyproject()):
        extra = re.search(r"extra == '([^']+)'", marcador)
        if marcador and not Marker(marcador).evaluate(
            {**entorno, "extra": extra.group(1) if extra else ""}
        ):
            continue
        assert nombre in versiones, f"{nombre} is not in uv.lock. {ARREGLO}"
        assert SpecifierSet(spec).contains(versiones[nombre], prereleases=True), (
            f"uv.lock has {nombre} {versiones[nombre]}, pyproject.toml asks {spec}. {ARREGLO}"
        )


def test_el_lock_fija_cada_fichero_por_su_hash():
    """Every locked package from the registry names its files by sha256 (uv checks them)."""
    for paquete in _lock()["package"]:
        if "registry" not in paquete["source"]:
            continue
        ficheros = list(paquete.get("wheels", [])) + (
            [paquete["sdist"]] if "sdist" in paquete else []
        )
        assert ficheros, paquete["name"]
        for f in ficheros:
            assert re.fullmatch(r"sha256:[0-9a-f]{64}", f["hash"]), (paquete["name"], f)


def test_uv_se_instala_con_la_version_y_los_hashes_del_lock():
    """scripts/uv_requirement.py gives pip the uv of the lock, hashes included."""
    (uv,) = [p for p in _lock()["package"] if p["name"] == "uv"]
    salida = subprocess.run(
        [sys.executable, str(RAIZ / "scripts" / "uv_requirement.py")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert salida[0] == f"uv=={uv['version']}"
    assert {s.removeprefix("--hash=") for s in salida[1:]} == {w["hash"] for w in uv["wheels"]}


@pytest.mark.parametrize(
    ("fichero", "orden"),
    [
        ("scripts/test.sh", "bash scripts/venv.sh"),
        ("Makefile", "bash scripts/venv.sh"),
        ("scripts/venv.sh", "sync --locked --all-extras"),
        ("Dockerfile", "uv sync --locked --no-editable"),
        ("Dockerfile", "--require-hashes -r /tmp/uv.txt"),
    ],
)
def test_todo_lo_que_instala_instala_del_lock(fichero: str, orden: str):
    """make test, make demo and the image install from uv.lock, not from pyproject's ranges."""
    texto = (RAIZ / fichero).read_text(encoding="utf-8")
    assert orden in texto, f"{fichero} no longer runs {orden!r}"
    assert not re.search(r"pip install[^\n]*(-e|\s)\s*['\"]?\.[\[\"' ]", texto), (
        f"{fichero} installs the project with pip from pyproject.toml's ranges"
    )
