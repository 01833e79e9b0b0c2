"""Print the pip requirement that installs the uv that ``uv.lock`` pins, with its hashes.

uv installs everything else from the lock, so uv itself has to come first, by pip: this reads
the ``uv`` entry of ``uv.lock`` (the ``dev`` extra pins it, so ``make lock`` upgrades it like
any package) and prints ``uv==VERSION --hash=sha256:...`` with the hash of every wheel the lock
knows, for ``pip install --require-hashes --no-deps -r``. Standard library only: it runs before
anything is installed (scripts/venv.sh, the Dockerfile's builder stage).

    python scripts/uv_requirement.py            # the requirement line
    python scripts/uv_requirement.py --version  # the version alone
"""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

LOCK = Path(__file__).resolve().parent.parent / "uv.lock"


def locked_uv(lock_text: str) -> tuple[str, list[str]]:
    """The version of uv in the lock and the sha256 hashes of its wheels."""
    for package in tomllib.loads(lock_text).get("package", []):
        if package.get("name") == "uv":
            hashes = [wheel["hash"] for wheel in package.get("wheels", [])]
            if not hashes:
                raise SystemExit("uv_requirement: uv.lock lists no wheel of uv")
            return package["version"], hashes
    raise SystemExit("uv_requirement: uv.lock has no uv (the dev extra pins it): run make lock")


def main(argv: list[str]) -> int:
    """Print the requirement (or the version with ``--version``)."""
    version, hashes = locked_uv(LOCK.read_text(encoding="utf-8"))
    if argv[:1] == ["--version"]:
        print(version)
    else:
        print(f"uv=={version} " + " ".join(f"--hash={h}" for h in hashes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
