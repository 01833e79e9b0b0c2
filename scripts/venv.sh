#!/usr/bin/env bash
# The project's virtualenv from its lock file: what `make test`, `make demo` and `make lock` run.
#
#   scripts/venv.sh              build .venv, or bring it to exactly uv.lock (base + every extra)
#   scripts/venv.sh lock [ARGS]  uv lock ARGS: rewrite uv.lock after pyproject.toml changed;
#                                `lock --upgrade` takes the newest versions the ranges allow,
#                                `lock --upgrade-package NAME` one package (README, "The lock")
#
# uv.lock is one resolution, with the sha256 of every file, of the base dependencies and the
# dev, report and local extras on linux x86_64, CPython 3.11 (pyproject.toml, [tool.uv]). uv
# comes first, by pip, at the version and hashes the lock gives it (scripts/uv_requirement.py);
# then `uv sync --locked` installs every locked file, checking its hash, removes what the lock
# does not list, and refuses a lock that pyproject.toml no longer matches; the project itself
# is built with the locked setuptools (the `build` group, `--no-build-isolation`). A .venv that
# already is the lock, synced from this pyproject.toml and uv.lock (scripts/venv_ok.py,
# ~0.1 s), is left alone.
#
# Environment: VENV (default .venv), PYTHON (the interpreter that creates it, default python3).
set -euo pipefail
cd "$(dirname "$0")/.."

VENV="${VENV:-.venv}"
PYTHON="${PYTHON:-python3}"
# uv never downloads an interpreter: the machine's CPython 3.11 is the one the lock is for.
export UV_PYTHON_DOWNLOADS=never

say() { printf 'venv.sh: %s\n' "$*" >&2; }

ensure_python() {
    if [[ ! -x "$VENV/bin/python" ]]; then
        say "creating $VENV"
        "$PYTHON" -m venv "$VENV"
    fi
}

# The uv of uv.lock in .venv, installed by pip with the lock's hashes when it is not there yet.
ensure_uv() {
    local wanted have requirement
    wanted="$("$VENV/bin/python" scripts/uv_requirement.py --version)"
    have="$("$VENV/bin/uv" --version 2>/dev/null | cut -d' ' -f2 || true)"
    if [[ "$have" != "$wanted" ]]; then
        say "installing uv $wanted (hashes from uv.lock)"
        requirement="$(mktemp)"
        "$VENV/bin/python" scripts/uv_requirement.py >"$requirement"
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-deps \
            --require-hashes -r "$requirement"
        rm -f "$requirement"
    fi
}

sync_venv() {
    ensure_python
    if "$VENV/bin/python" scripts/venv_ok.py; then
        return 0
    fi
    ensure_uv
    say "uv sync --locked --all-extras --group build"
    # Two steps, so the project is built with the setuptools of uv.lock (the `build` group, what
    # [build-system] asks for) rather than the newest one on PyPI: everything locked first
    # (--inexact keeps the installed project), then the project without build isolation.
    if ! UV_PROJECT_ENVIRONMENT="$VENV" "$VENV/bin/uv" sync --locked --all-extras --group build \
        --no-install-project --inexact -q --python "$VENV/bin/python" ||
        ! UV_PROJECT_ENVIRONMENT="$VENV" "$VENV/bin/uv" sync --locked --all-extras --group build \
            --no-build-isolation -q --python "$VENV/bin/python"; then
        say "failed; if uv says the lockfile needs to be updated: run 'make lock' and commit uv.lock"
        exit 1
    fi
    "$VENV/bin/python" scripts/venv_ok.py --stamp
}

case "${1:-}" in
"") sync_venv ;;
lock)
    shift
    ensure_python
    ensure_uv
    UV_PROJECT_ENVIRONMENT="$VENV" "$VENV/bin/uv" lock --python "$VENV/bin/python" "$@"
    ;;
*)
    say "usage: scripts/venv.sh [lock [uv lock options]]"
    exit 2
    ;;
esac
