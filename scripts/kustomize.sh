#!/usr/bin/env bash
# kustomize, pinned, for the manifest tests (tests/deploy): built from its Go module by the
# machine's Go, cached in .cache/kustomize/<version>/ like the Kafka jars.
#
#   scripts/kustomize.sh fetch       build it if the cache does not have it (idempotent)
#   scripts/kustomize.sh path        print the binary's path (fetch first)
#   scripts/kustomize.sh build DIR   kustomize build DIR (fetch first)
#
# Why built and not downloaded: the registries this project reaches are PyPI, npm, Maven
# Central, crates.io, Debian and the Go module proxy; kustomize is a Go module. v5.8.2 is the
# newest whose go.mod the machine's Go 1.26 accepts (v5.8.3 asks for 1.27). Measured on the
# 2-core machine: 60 s of CPU on a new machine (Go's module and build caches empty), 5 s in a
# fresh clone once Go's own caches (~/go, ~/.cache/go-build) have it. `kubectl apply -k` uses
# the kustomize compiled into kubectl; tests/deploy also renders with it when kubectl is there.
#
# Environment: FICHAS_KUSTOMIZE_VERSION (default below), FICHAS_CACHE_DIR (default <repo>/.cache).
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VERSION="${FICHAS_KUSTOMIZE_VERSION:-v5.8.2}"
CACHE_ROOT="$(realpath -m "${FICHAS_CACHE_DIR:-$REPO_DIR/.cache}")"
DIR="$CACHE_ROOT/kustomize/$VERSION"
BIN="$DIR/kustomize"

say() { echo "kustomize.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

fetch() {
    [[ -x "$BIN" ]] && return 0
    command -v go >/dev/null || die "go not found: kustomize is built from its Go module"
    mkdir -p "$DIR"
    # pytest-xdist workers may ask at once: one builds, the others wait and find it built.
    exec 9>"$DIR/.lock"
    flock 9
    if [[ ! -x "$BIN" ]]; then
        say "building kustomize $VERSION from the Go module proxy (once per machine: ~1 min)"
        local tmp
        tmp="$(mktemp -d "$DIR/.build.XXXXXX")"
        # GOTOOLCHAIN=local: never fetch another Go; the pinned version needs none.
        GOTOOLCHAIN=local GOFLAGS=-mod=mod GOBIN="$tmp" \
            go install "sigs.k8s.io/kustomize/kustomize/v5@$VERSION"
        mv "$tmp/kustomize" "$BIN"
        rm -rf "$tmp"
    fi
    flock -u 9
}

case "${1:-}" in
fetch) fetch ;;
path)
    fetch
    echo "$BIN"
    ;;
build)
    [[ $# -eq 2 ]] || die "usage: scripts/kustomize.sh build DIR"
    fetch
    exec "$BIN" build "$2"
    ;;
*) die "usage: scripts/kustomize.sh fetch|path|build DIR" ;;
esac
