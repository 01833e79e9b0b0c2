"""Exit 0 when the running Python already has this checkout installed with the given extras.

``make venv`` / ``make demo`` call it before ``pip install -e '.[EXTRAS]'`` so a second run does
not spend half a minute asking pip to confirm what is already there. Standard library only: it
runs before anything of the project is importable. Cheap on purpose, not exhaustive: it checks
the project version, that the install is the editable one of this folder, and that every
requirement pyproject.toml lists (base and the given extras) is installed; it does not compare
their versions, so after changing a pin run the pip command by hand.

    .venv/bin/python scripts/venv_ok.py local,report
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


def installed_here(extras: list[str]) -> tuple[bool, str]:
    """Whether nothing needs installing, and why not when something does."""
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    wanted = pyproject["project"]["version"]
    try:
        dist = metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        return False, f"{DIST} is not installed"
    if dist.version != wanted:
        return False, f"{DIST} {dist.version} is installed, pyproject.toml says {wanted}"
    direct_url = dist.read_text("direct_url.json")
    url = json.loads(direct_url).get("url") if direct_url else None
    if url != REPO.as_uri():
        return False, f"{DIST} is installed from {url}, not from {REPO.as_uri()}"
    optional = pyproject["project"].get("optional-dependencies", {})
    unknown = [extra for extra in extras if extra not in optional]
    if unknown:
        return False, f"pyproject.toml has no extra {unknown[0]!r}"
    requirements = list(pyproject["project"].get("dependencies", []))
    for extra in extras:
        requirements += optional[extra]
    for requirement in requirements:
        name = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
        if name is None:
            continue
        try:
            metadata.version(name.group(0))
        except metadata.PackageNotFoundError:
            return False, f"{name.group(0)} is not installed"
    return True, "up to date"


def main(argv: list[str]) -> int:
    """0: nothing to install; 1: run pip (the reason goes to stderr)."""
    extras = [e for e in (argv[0] if argv else "").split(",") if e]
    ok, why = installed_here(extras)
    if not ok:
        print(f"venv_ok: {why}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
