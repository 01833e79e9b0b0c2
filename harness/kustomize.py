"""The Kubernetes manifests as ``kubectl apply -k`` would send them, for tests/deploy.

``renderizar(DIR)`` runs the pinned kustomize (``scripts/kustomize.sh``: built once from its Go
module and cached in ``.cache/kustomize/``) and returns the objects, one dict each. Cached per
folder: the manifests do not change while a test run reads them (a test that edits a copy
renders that copy's folder). ``sin_hash`` is a generated ConfigMap's name without the content
hash kustomize adds (``fichas-config-f72745t46k`` -> ``fichas-config``).
"""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "kustomize.sh"


def binario() -> Path:
    """The pinned kustomize, built first if this machine does not have it yet."""
    salida = subprocess.run(
        ["bash", str(SCRIPT), "path"], capture_output=True, text=True, timeout=900
    )
    if salida.returncode != 0:
        raise RuntimeError(f"scripts/kustomize.sh path failed:\n{salida.stderr}")
    return Path(salida.stdout.strip())


@functools.cache
def _renderizado(directorio: Path) -> str:
    salida = subprocess.run(
        [str(binario()), "build", str(directorio)], capture_output=True, text=True, timeout=120
    )
    if salida.returncode != 0:
        raise RuntimeError(f"kustomize build {directorio} failed:\n{salida.stderr}")
    return salida.stdout


def renderizar(directorio: Path) -> list[dict[str, Any]]:
    """The objects ``kustomize build DIR`` gives, in its order (a fresh copy each call)."""
    texto = _renderizado(directorio.resolve())
    return [d for d in yaml.safe_load_all(texto) if d is not None]


# The suffix kustomize's generators add: a dash and ten characters of the content's hash.
_HASH = re.compile(r"-[a-z0-9]{10}$")
GENERADOS = ("fichas-config", "fichas-prompts")


def sin_hash(nombre: str) -> str:
    """The name a generator was given, for the project's generated ConfigMaps; others as is."""
    base = _HASH.sub("", nombre)
    return base if base in GENERADOS else nombre
