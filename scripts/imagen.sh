#!/usr/bin/env bash
# The production image (./Dockerfile, unchanged), built and run on this kind of machine
# (docs/despliegue.md, "The image"; tests/deploy/test_imagen.py runs it as real containers).
#
#   scripts/imagen.sh install       podman, crun, uidmap, fuse-overlayfs, mmdebstrap (Debian's)
#   scripts/imagen.sh build         the image; prints its reference (localhost/fichas:VERSION)
#   scripts/imagen.sh ref           that reference, nothing built
#   scripts/imagen.sh motor         the engine it uses: podman or docker
#   scripts/imagen.sh base          the base only: prints what the Dockerfile's FROM gets
#   scripts/imagen.sh run ARGS...   `podman run ARGS...` the way these machines run containers
#   scripts/imagen.sh podman ARGS   any podman command on this checkout's image store
#
# The base. The Dockerfile pins python:3.11-slim by digest (ARG PYTHON_IMAGE). Where its
# registry answers, that digest is pulled. Where it does not (these machines reach PyPI, npm,
# Maven Central, Debian and the Go proxy, not Docker Hub), the base is made from Debian's own
# packages with the same layout (bookworm's python3.11 at /usr/local/bin/python and python3,
# pip beside it, ca-certificates, passwd), imported as localhost/fichas-base:<recipe hash> and
# handed to the build as PYTHON_IMAGE. Its root filesystem is cached as
# .cache/imagen/base-<hash>.tar: a second build, or a new image store, imports it in seconds.
#
# The machine's CA bundle (SSL_CERT_FILE, else Debian's) goes to the build as the secret `ca`,
# with a marker line the tests look for in every layer: behind a proxy that re-signs TLS, pip
# and uv need it, and no layer may keep it.
#
# Where containers run here (hybrid cgroups v1/v2, no systemd): podman with crun, cgroups
# disabled, `default_ulimits = []`, each `run` in a private mount namespace where
# /sys/fs/cgroup/unified is unmounted (crun refuses hybrid cgroups). The settings and the image
# store are this checkout's (.cache/imagen/: containers.conf, storage.conf, storage/); nothing
# of the machine's podman is changed. Builds use `--isolation chroot`.
#
# Environment: FICHAS_IMAGEN_MOTOR (podman or docker; default podman if installed, else docker
# if its daemon answers), FICHAS_IMAGEN_BASE (a base reference to use as is), FICHAS_CACHE_DIR.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_ROOT="$(realpath -m "${FICHAS_CACHE_DIR:-$REPO_DIR/.cache}")"
DIR="$CACHE_ROOT/imagen"
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' "$REPO_DIR/pyproject.toml" | head -n1)"
REF="localhost/fichas:$VERSION"
# The line that marks the build secret; tests/deploy/test_imagen.py looks for it in every layer.
MARCA="# fichas build secret: the machine's CA bundle; no image layer may hold this line"
# Short and outside the checkout: conmon's sockets live under it (a Unix socket path is at most
# 107 bytes); one per image store, so two checkouts never share one.
RUN_DIR="/run/fichas-imagen-$(printf '%s' "$DIR" | sha256sum | cut -c1-12)"

say() { echo "imagen.sh: $*" >&2; }
die() {
    say "$*"
    exit 1
}

motor() {
    if [[ -n "${FICHAS_IMAGEN_MOTOR:-}" ]]; then
        echo "$FICHAS_IMAGEN_MOTOR"
    elif command -v podman >/dev/null; then
        echo podman
    elif command -v docker >/dev/null && docker info >/dev/null 2>&1; then
        echo docker
    else
        die "no container engine: run 'scripts/imagen.sh install' (podman), or start docker"
    fi
}

install() {
    local missing=() p
    for p in podman crun newuidmap fuse-overlayfs mmdebstrap; do
        command -v "$p" >/dev/null || missing+=("$p")
    done
    ((${#missing[@]})) || return 0
    [[ "$(id -u)" == 0 ]] || die "missing ${missing[*]}: run as root, or apt-get install them"
    say "installing podman crun uidmap fuse-overlayfs mmdebstrap"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends podman crun uidmap fuse-overlayfs mmdebstrap \
        >/dev/null || {
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends podman crun uidmap fuse-overlayfs \
            mmdebstrap >/dev/null
    }
}

# Write stdin to a file by renaming a full copy over it: the suite's processes run this script
# at the same time, and podman reading a file another one is rewriting saw it empty ("runroot
# must be set", a container that never started).
write_atomically() { # file
    local tmp
    tmp="$(mktemp "$1.XXXXXX")"
    cat >"$tmp"
    chmod 0644 "$tmp"
    mv -f "$tmp" "$1"
}

# This checkout's podman settings: its own image store under .cache/imagen, crun without
# cgroups, no default ulimits (a container may not raise them here).
configure() {
    mkdir -p "$DIR" "$RUN_DIR"
    write_atomically "$DIR/containers.conf" <<EOF
# Written by scripts/imagen.sh: how containers run on these machines (docs/despliegue.md).
[containers]
cgroups = "disabled"
default_ulimits = []
[engine]
runtime = "crun"
cgroup_manager = "cgroupfs"
events_logger = "file"
tmp_dir = "$RUN_DIR/libpod"
EOF
    write_atomically "$DIR/storage.conf" <<EOF
# Written by scripts/imagen.sh: this checkout's image store.
[storage]
driver = "overlay"
graphroot = "$DIR/storage"
runroot = "$RUN_DIR/storage"
EOF
    export CONTAINERS_CONF="$DIR/containers.conf" CONTAINERS_STORAGE_CONF="$DIR/storage.conf"
}

# The machine's CA bundle with the marker line on top, mode 0600, for `--secret id=ca`.
ca_secreto() {
    local bundle="${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}"
    [[ -s "$bundle" ]] || die "no CA bundle at $bundle (set SSL_CERT_FILE)"
    (
        umask 077
        {
            echo "$MARCA"
            cat "$bundle"
        } >"$DIR/ca-secreto.pem"
    )
    echo "$DIR/ca-secreto.pem"
}

# The digest the Dockerfile pins (ARG PYTHON_IMAGE's default).
base_fijada() {
    sed -n 's/^ARG PYTHON_IMAGE=\(.*\)$/\1/p' "$REPO_DIR/Dockerfile" | head -n1
}

# The base from Debian's packages, as a root filesystem tarball (the recipe: its hash names
# the cache). python:3.11-slim's layout: python, python3 and pip in /usr/local/bin; no
# EXTERNALLY-MANAGED marker, so `python -m pip install` works as it does there.
base_debian() { # tar
    local hook
    hook='rm -f "$1/usr/lib/python3.11/EXTERNALLY-MANAGED"
ln -sf /usr/bin/python3.11 "$1/usr/local/bin/python"
ln -sf /usr/bin/python3.11 "$1/usr/local/bin/python3"
for w in "$1"/usr/share/python-wheels/pip-*.whl; do
    w="/usr/share/python-wheels/${w##*/}"
    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/root /usr/sbin/chroot "$1" \
        python "$w/pip" install -q --no-index --no-warn-script-location "$w"
done'
    mmdebstrap --quiet --mode=root --variant=minbase --format=tar \
        --include=passwd,python3.11,python3.11-venv,ca-certificates \
        --dpkgopt=force-unsafe-io \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --customize-hook="$hook" \
        bookworm "$1" \
        "deb http://deb.debian.org/debian bookworm main" \
        "deb http://deb.debian.org/debian bookworm-updates main" \
        "deb http://deb.debian.org/debian-security bookworm-security main"
}

# What the Dockerfile's FROM gets: the pinned digest if its registry answers, else the base
# made from Debian (imported from the cache, or made first). Prints the reference.
base() {
    local m fijada clave tar ref
    m="$(motor)"
    if [[ -n "${FICHAS_IMAGEN_BASE:-}" ]]; then
        echo "$FICHAS_IMAGEN_BASE"
        return 0
    fi
    fijada="$(base_fijada)"
    if "$m" image inspect "$fijada" >/dev/null 2>&1 ||
        timeout 120 "$m" pull -q "$fijada" >/dev/null 2>"$DIR/pull.log"; then
        echo "$fijada"
        return 0
    fi
    say "$fijada cannot be pulled ($(tail -n1 "$DIR/pull.log")): a base from Debian's packages"
    clave="$(declare -f base_debian | sha256sum | cut -c1-12)"
    ref="localhost/fichas-base:bookworm-$clave"
    tar="$DIR/base-$clave.tar"
    if ! "$m" image inspect "$ref" >/dev/null 2>&1; then
        if [[ ! -s "$tar" ]]; then
            command -v mmdebstrap >/dev/null || die "mmdebstrap missing: scripts/imagen.sh install"
            say "making the base from Debian bookworm (mmdebstrap; cached as $tar)"
            rm -f "$DIR"/base-*.tar
            base_debian "$tar.tmp" >&2
            mv "$tar.tmp" "$tar"
        fi
        say "importing $tar as $ref"
        "$m" images --format '{{.Repository}}:{{.Tag}}' | grep '^localhost/fichas-base:' |
            xargs -r "$m" rmi >/dev/null 2>&1 || true
        "$m" import -q \
            --change 'ENV PATH=/usr/local/bin:/usr/local/sbin:/usr/sbin:/usr/bin:/sbin:/bin' \
            --change 'ENV LANG=C.UTF-8' --change 'CMD ["python3"]' \
            "$tar" "$ref" >/dev/null
    fi
    echo "$ref"
}

# What a build reads: the Dockerfile, the context as .dockerignore selects it
# (scripts/image_context.py; the Dockerfile and .dockerignore are not in it) and the base's ID.
huella() { # base
    {
        echo "$1 $("$(motor)" image inspect --format '{{.Id}}' "$1")"
        sha256sum "$REPO_DIR/Dockerfile" "$REPO_DIR/.dockerignore"
        python3 "$REPO_DIR/scripts/image_context.py"
    } | sha256sum | cut -c1-16
}

build() {
    local m desde secreto h antes
    m="$(motor)"
    desde="$(base)"
    h="$(huella "$desde")"
    if [[ -n "$h" && "$("$m" image inspect --format '{{index .Labels "fichas.huella"}}' "$REF" \
        2>/dev/null)" == "$h" ]]; then
        say "$REF is up to date (nothing it is built from changed)"
        echo "$REF"
        return 0
    fi
    antes="$("$m" image inspect --format '{{.Id}}' "$REF" 2>/dev/null || true)"
    secreto="$(ca_secreto)"
    trap 'rm -f "$DIR/ca-secreto.pem"' EXIT
    say "building $REF from $desde"
    if [[ "$m" == podman ]]; then
        # docker format: OCI images have no HEALTHCHECK, and the Dockerfile has one.
        podman build --isolation chroot --layers --format docker --secret "id=ca,src=$secreto" \
            --build-arg "PYTHON_IMAGE=$desde" --label "fichas.huella=$h" -t "$REF" \
            -f "$REPO_DIR/Dockerfile" "$REPO_DIR" >&2
    else
        DOCKER_BUILDKIT=1 docker build --secret "id=ca,src=$secreto" \
            --build-arg "PYTHON_IMAGE=$desde" --label "fichas.huella=$h" -t "$REF" \
            -f "$REPO_DIR/Dockerfile" "$REPO_DIR" >&2
    fi
    # The image this build replaced, untagged now: ~0.5 GB each that nothing uses (the layers
    # a next build reuses are the intermediate images, kept).
    if [[ -n "$antes" && "$antes" != "$("$m" image inspect --format '{{.Id}}' "$REF")" ]]; then
        "$m" rmi "$antes" >/dev/null 2>&1 || true
    fi
    echo "$REF"
}

# `podman run` in a private mount namespace without the cgroup v2 hierarchy of a hybrid
# machine (crun refuses it; with cgroups disabled nothing else needs it). exec all the way
# down: the caller's process is podman itself, so a signal sent to it reaches the container
# (podman run proxies signals), as the kubelet's SIGTERM does.
run() {
    if [[ "$(motor)" == docker ]]; then
        exec docker run "$@"
    fi
    if [[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" == tmpfs ]] &&
        mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then
        exec unshare --mount --propagation private sh -c \
            'umount /sys/fs/cgroup/unified && exec podman run "$@"' sh "$@"
    fi
    exec podman run "$@"
}

main() {
    mkdir -p "$DIR"
    case "${1:-}" in
    install) install ;;
    ref) echo "$REF" ;;
    motor) motor ;;
    base)
        configure
        base
        ;;
    build)
        configure
        # One build at a time per checkout: the suite starts one in the background and the
        # container tests ask for the image while it may still run; the second waits for the
        # first, then finds the image up to date.
        exec 9>"$DIR/build.lock"
        flock 9
        build
        ;;
    run)
        shift
        configure
        run "$@"
        ;;
    podman)
        shift
        configure
        exec "$(motor)" "$@"
        ;;
    *)
        say "usage: scripts/imagen.sh install|build|ref|motor|base|run ARGS...|podman ARGS..."
        exit 2
        ;;
    esac
}

# One line, read whole before it runs: a build that takes minutes is not thrown off by an edit
# of this file meanwhile (bash reads a script as it goes).
main "$@"; exit
