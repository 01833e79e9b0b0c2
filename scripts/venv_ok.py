"""Exit 0 when the running Python already is ``uv.lock``: nothing for scripts/venv.sh to install.

``make test``, ``make demo`` (scripts/venv.sh) ask it before ``uv sync`` so a second run does not
start uv at all. Standard library only: it runs before anything of the project is importable.
Cheap on purpose (one read of the lock, one scan of the installed distributions): the last
``uv sync`` ran on this pyproject.toml and uv.lock (their sha256, stamped in the venv by
``--stamp`` after it), every package ``uv.lock`` lists is installed at the locked version, and
this checkout is installed in editable mode from this folder. A pyproject.toml edited since then
sends scripts/venv.sh to ``uv sync --locked``, which refuses a lock that no longer matches. It
does not check file hashes (``uv sync`` did when it installed them) nor extra packages a person
added by hand (``uv sync`` removes them when it runs).

    .venv/bin/python scripts/venv_ok.py           # 0: nothing to do; 1: run uv sync
    .venv/bin/python scripts/venv_ok.py --stamp   # after a successful uv sync
"""

from __future__ import annotations

import hashlib
import importlib.metadata as metadata
import json
import re
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DIST = "fichas"
STAMP = Path(sys.prefix) / "fichas-lock.sha256"


def _normal(name: str) -> str:
    """PEP 503's normal form, so ``PyYAML`` and ``pyyaml`` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def fingerprint() -> str:
    """The sha256 of pyproject.toml and uv.lock together: what the last sync installed from."""
    digest = hashlib.sha256()
    for name in ("pyproject.toml", "uv.lock"):
        digest.update((REPO / name).read_bytes())
    return digest.hexdigest()


def installed_here() -> tuple[bool, str]:
    """Whether nothing needs installing, and why not when something does."""
    stamp = STAMP.read_text(encoding="utf-8").strip() if STAMP.exists() else None
    if stamp != fingerprint():
        return False, "pyproject.toml or uv.lock changed since the last uv sync"
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
    if argv[:1] == ["--stamp"]:
        STAMP.write_text(fingerprint() + "\n", encoding="utf-8")
        return 0
    ok, why = installed_here()
    if not ok:
        print(f"venv_ok: {why}", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
