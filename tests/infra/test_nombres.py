"""One name per thing: no module or subpackage is named after a top-level package it is not.

A ``puerta.py`` inside ``stream/`` beside the ``puerta/`` package, or an ``esquema.py`` (the
migrations of a store) beside ``esquemas/`` (the contract), made a reader open the wrong file
(issue 49). A name that is a top-level package's, or that name with a final "s" added or
dropped, is kept for that package. The same role in several packages may share a name (each
package's ``metricas``, ``almacen``): that is one thing, as Python projects do
(docs/arquitectura.md, "One concept, one name").
"""

from __future__ import annotations

from pathlib import Path

from tests.infra.test_fronteras import PRODUCTO, REPO

PAQUETES = (*PRODUCTO, "harness")


def _variantes(paquete: str) -> set[str]:
    """The package's name, and the same with a final "s" added or dropped."""
    return {paquete, paquete + "s", paquete[:-1] if paquete.endswith("s") else paquete}


def _homonimos(raiz: Path, paquetes: tuple[str, ...]) -> list[str]:
    """Every module or folder below a package whose name is another top-level package's."""
    reservados = {v: p for p in paquetes for v in _variantes(p)}
    fuera = []
    for paquete in paquetes:
        for ruta in sorted((raiz / paquete).rglob("*")):
            nombre = ruta.stem if ruta.suffix == ".py" else ruta.name
            if ruta.suffix not in (".py", "") or not (
                ruta.suffix or (ruta / "__init__.py").exists()
            ):
                continue
            if nombre in reservados and ruta.relative_to(raiz).parts[0] != nombre:
                fuera.append(f"{ruta.relative_to(raiz)} (the package {reservados[nombre]}/)")
    return fuera


def test_ningun_modulo_lleva_el_nombre_de_otro_paquete() -> None:
    assert _homonimos(REPO, PAQUETES) == []


def test_el_detector_ve_un_homonimo(tmp_path: Path) -> None:
    """``stream/puerta.py`` and ``versiones/esquema.py`` are caught; ``revision/almacen/`` and
    ``stream/metricas/``, roles shared between packages, are not."""
    for archivo in ("stream/puerta.py", "versiones/esquema.py", "stream/metricas/__init__.py"):
        (tmp_path / archivo).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / archivo).write_text("")
    assert _homonimos(tmp_path, ("stream", "versiones", "puerta", "esquemas")) == [
        "stream/puerta.py (the package puerta/)",
        "versiones/esquema.py (the package esquemas/)",
    ]
