"""Print the sha256 of the image's build context: every file `podman build .` would send.

``scripts/imagen.sh build`` labels the image with it (and the base's ID) and skips a build when
neither changed, so a test session that asks for the image after ``make test`` built it waits a
second, not a build; an edit under tests/ or docs/, which .dockerignore leaves out, rebuilds
nothing. The files are the checkout's, selected by .dockerignore as the engines read it
(moby's patternmatcher): patterns relative to the context, ``*`` and ``?`` within one path
segment, ``**`` across segments, a pattern that matches a folder excluding what it holds, the
last matching pattern deciding, ``!`` including again. Standard library only: it runs before
the virtualenv exists.

    python3 scripts/image_context.py           # the digest
    python3 scripts/image_context.py --list    # the files, one a line
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _regex(pattern: str) -> re.Pattern[str]:
    """One .dockerignore pattern as a regular expression over a relative path."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def _lines(text: str) -> list[tuple[bool, str]]:
    """(excludes, cleaned pattern) for each line of a .dockerignore, in order."""
    res = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            cleaned = os.path.normpath(line.lstrip("!").strip()).lstrip("/")
            res.append((not line.startswith("!"), cleaned))
    return res


def patterns(text: str) -> list[tuple[bool, re.Pattern[str]]]:
    """(excludes, pattern) for each line of a .dockerignore, in order."""
    return [(excludes, _regex(p)) for excludes, p in _lines(text)]


def excluded(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether the context leaves ``path`` out: the last pattern that matches it or one of the
    folders above it decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    result = False
    for excludes, rule in rules:
        if any(rule.fullmatch(p) for p in prefixes):
            result = excludes
    return result


def _may_include(folder: str, negations: list[str]) -> bool:
    """Whether a ``!`` pattern may name something inside ``folder`` (its part before the first
    wildcard leads into the folder, or is shorter than it)."""
    for pattern in negations:
        fixed = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        if fixed.startswith(folder + "/") or (folder + "/").startswith(fixed):
            return True
    return False


def files(root: Path = REPO) -> list[str]:
    """Every file of the context, relative, sorted. A folder left out is not walked unless a
    ``!`` pattern may include something inside it again."""
    text = (root / ".dockerignore").read_text(encoding="utf-8")
    rules = patterns(text)
    negations = [p for excludes, p in _lines(text) if not excludes]
    found = []
    for folder, dirs, names in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        rel = "" if rel == "." else rel + "/"
        dirs[:] = [
            d for d in dirs if not excluded(rel + d, rules) or _may_include(rel + d, negations)
        ]
        found += [rel + n for n in names if not excluded(rel + n, rules)]
    return sorted(found)


def digest(root: Path = REPO) -> str:
    """The sha256 of every context file's path, executable bit and content (a link's target)."""
    total = hashlib.sha256()
    for rel in files(root):
        path = root / rel
        if path.is_symlink():
            content = os.readlink(path).encode()
        else:
            content = path.read_bytes()
        mode = "x" if os.access(path, os.X_OK) else "-"
        total.update(f"{rel}\0{mode}\0".encode() + hashlib.sha256(content).digest())
    return total.hexdigest()


def main(argv: list[str]) -> int:
    """Print the digest, or the files with ``--list``."""
    if argv[:1] == ["--list"]:
        print("\n".join(files()))
    else:
        print(digest())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
