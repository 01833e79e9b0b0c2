"""Exit 0 when the running Python already is ``uv.lock``: nothing for scripts/venv.sh to install.

``make test``, ``make demo`` (scripts/venv.sh) ask it before ``uv sync`` so a second run does not
start uv at all. Standard library only: it runs before anything of the project is importable.
Cheap on purpose (one read of the lock, one scan of the installed distributions): every
package ``uv.lock`` lists is installed at the locked version, and this checkout is installed
in editable mode from this folder at the version pyproject.toml gives. It does not check file
hashes (``uv sync`` did when it installed them) nor extra packages a person added by hand
(``uv sync`` removes them when it runs).

    .venv/bin/python scripts/venv_ok.py
"""

from __future__ import annotations

import importlib.metadata as metadata
import json
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DIST = "fichas"


def _normal(name: str) -> str:
    """PEP 503's normal form, so ``PyYAML`` and ``pyyaml`` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_here() -> tuple[bool, str]:
    """Whether nothing needs installing, and why not when something does."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    lock = tomllib.loads((REPO / "uv.lock").read_text(encoding="utf-8"))
    installed = {_normal(d.metadata["Name"]): d for d in metadata.distributions()}
    dist = installed.get(DIST)
    if dist is None:
        return False, f"{DIST} is not installed"
    wanted = pyproject["project"]["version"]
    if dist.version != wanted:
        return False, f"{DIST} {dist.version} is installed, pyproject.toml says {wanted}"
    direct_url = dist.read_text("direct_url.json")
    url = json.loads(direct_url).get("url") if direct_url else None
    if url != REPO.as_uri():
        return False, f"{DIST} is installed from {url}, not from {REPO.as_uri()}"
    for package in lock.get("package", []):
        name = _normal(package["name"])
        if name == DIST:
            continue
        have = installed.get(name)
        if have is None:
            return False, f"{name} {package['version']} (uv.lock) is not installed"
        if have.version != package["version"]:
            return False, f"{name} {have.version} is installed, uv.lock says {package['version']}"
    return True, "up to date"


def main(argv: list[str]) -> int:
    """0: nothing to install; 1: run ``uv sync`` (the reason goes to stderr)."""
    del argv  # every extra is in the one .venv; the lock says what that is
    ok, why = installed_here()
    if not ok:
        print(f"venv_ok: {why}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
