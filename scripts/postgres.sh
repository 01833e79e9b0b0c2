#!/usr/bin/env bash
# A real, local PostgreSQL for tests, the demo and CI: a private cluster of the
# Debian packages' server, on 127.0.0.1 only, trust auth, database `fichas`.
#
#   scripts/postgres.sh start    install if missing, initdb once, start, create db
#   scripts/postgres.sh stop     fast shutdown
#   scripts/postgres.sh kill     SIGKILL the postmaster (failure tests)
#   scripts/postgres.sh status   exit 0 if running
#   scripts/postgres.sh dsn      print the connection string
#   scripts/postgres.sh datadir  print the data folder actually used
#
# Environment:
#   FICHAS_PG_PORT   TCP port (default 55432, away from a system cluster's 5432)
#   FICHAS_PG_DATA   data folder (default <repo>/.cache/pgdata, see below)
#   FICHAS_PG_DB     database name (default fichas)
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PORT="${FICHAS_PG_PORT:-55432}"
DB="${FICHAS_PG_DB:-fichas}"
PG_USER="postgres"

say() { echo "postgres.sh: $*" >&2; }
die() { say "$*"; exit 1; }

is_root() { [[ "$(id -u)" == 0 ]]; }

# ----------------------------------------------------------------- binaries
find_bin() {
    # Debian keeps the server tools off PATH, one folder per major version;
    # take the newest installed.
    local d
    # shellcheck disable=SC2012  # fixed, plain names: /usr/lib/postgresql/<major>/bin
    d="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)"
    if [[ -n "$d" && -x "$d/initdb" && -x "$d/pg_ctl" ]]; then
        echo "$d"
    fi
}

install_postgres() {
    is_root || die "PostgreSQL is not installed and we are not root to apt-get it"
    say "installing PostgreSQL from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    # ucf manages that file; keep ours if it asks (it would ask nobody: no stdin).
    export UCF_FORCE_CONFFOLD=1
    # Don't let the package create and start its own `main` cluster on 5432: we
    # run a private one, and a stray server would only use memory and a port.
    if [[ ! -e /etc/postgresql-common/createcluster.conf ]]; then
        mkdir -p /etc/postgresql-common
        echo "create_main_cluster = false" >/etc/postgresql-common/createcluster.conf
    fi
    apt-get update -qq </dev/null
    # confold: keep the createcluster.conf written above without a prompt.
    apt-get install -y -qq --no-install-recommends \
        -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
        postgresql </dev/null >/dev/null
}

PG_BIN="$(find_bin)"
ensure_bin() {
    if [[ -z "$PG_BIN" ]]; then
        install_postgres
        PG_BIN="$(find_bin)"
        [[ -n "$PG_BIN" ]] || die "PostgreSQL installed but initdb/pg_ctl not found"
    fi
}

# ------------------------------------------------------------ data folder
# initdb and the server refuse to run as root, so they run as the `postgres`
# OS user, who must own the data folder and be able to walk down to it. A
# clone under /root (mode 700) is not walkable: then the data goes to
# /var/tmp under a name derived from the repo path, stable across runs.
as_pg() {
    if is_root; then
        # cd /: the user may not be allowed into the caller's folder.
        (cd / && runuser -u "$PG_USER" -- "$@")
    else
        "$@"
    fi
}

parent_walkable_by_pg() {
    local dir="$1" p
    is_root || return 0
    # The nearest existing ancestor must be enterable by postgres; folders we
    # create below it are given to postgres anyway.
    p="$dir"
    while [[ ! -d "$p" ]]; do p="$(dirname "$p")"; done
    runuser -u "$PG_USER" -- test -x "$p" 2>/dev/null
}

choose_datadir() {
    if [[ -n "${FICHAS_PG_DATA:-}" ]]; then
        realpath -m "$FICHAS_PG_DATA"  # absolute: the server runs from /
        return
    fi
    local want="$REPO_DIR/.cache/pgdata"
    if parent_walkable_by_pg "$want"; then
        echo "$want"
    else
        echo "/var/tmp/fichas-pgdata-$(printf '%s' "$REPO_DIR" | md5sum | cut -c1-10)"
    fi
}

PGDATA="$(choose_datadir)"
LOGFILE="$PGDATA/server.log"

# ---------------------------------------------------------------- commands
init_cluster() {
    if [[ -f "$PGDATA/PG_VERSION" ]]; then
        return 0
    fi
    mkdir -p "$PGDATA"
    if is_root; then
        chown "$PG_USER:" "$PGDATA"
        chmod 700 "$PGDATA"
        if ! parent_walkable_by_pg "$PGDATA" || ! runuser -u "$PG_USER" -- test -w "$PGDATA"; then
            die "user $PG_USER cannot reach $PGDATA; set FICHAS_PG_DATA to a folder under /var/tmp"
        fi
    fi
    say "initdb in $PGDATA"
    # trust: a throwaway test server reachable only from this machine.
    as_pg "$PG_BIN/initdb" -D "$PGDATA" -U "$PG_USER" --auth=trust \
        --encoding=UTF8 --no-locale >/dev/null
    # Our settings live in their own file, rewritten on every start (so a new
    # FICHAS_PG_PORT takes effect), included from postgresql.conf.
    echo "include_if_exists = 'fichas.conf'" >>"$PGDATA/postgresql.conf"
}

write_conf() {
    # listen on loopback only; no unix socket (its default folder /run/postgresql
    # may not exist on a bare machine, and clients here use TCP);
    # fsync off: speed for tests. It only risks data on an OS crash, not when
    # the server process is killed, so failure tests still see real recovery.
    as_pg tee "$PGDATA/fichas.conf" >/dev/null <<EOF
# generated by scripts/postgres.sh; edit the script, not this file
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = ''
fsync = off
max_connections = 100
shared_buffers = 128MB
logging_collector = off
log_min_messages = warning
EOF
}

running() {
    [[ -n "$PG_BIN" && -f "$PGDATA/PG_VERSION" ]] || return 1
    as_pg "$PG_BIN/pg_ctl" status -D "$PGDATA" >/dev/null 2>&1
}

psql_() {
    # As root over TCP with -U postgres: trust auth, no OS user switch needed.
    "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$PORT" -U "$PG_USER" "$@"
}

start() {
    ensure_bin
    if running; then
        say "already running on 127.0.0.1:$PORT (data $PGDATA)"
    else
        init_cluster
        write_conf
        say "starting PostgreSQL ($("$PG_BIN/postgres" --version | awk '{print $3}')) on 127.0.0.1:$PORT (data $PGDATA)"
        # -w waits until it accepts connections; -t bounds that wait.
        if ! as_pg "$PG_BIN/pg_ctl" start -D "$PGDATA" -l "$LOGFILE" -w -t 60 >/dev/null; then
            tail -n 30 "$LOGFILE" >&2 || true
            die "PostgreSQL did not start"
        fi
    fi
    if [[ "$(psql_ -d postgres -tAc "select 1 from pg_database where datname = '$DB'")" != 1 ]]; then
        psql_ -d postgres -c "create database \"$DB\""
        say "created database $DB"
    fi
}

stop() {
    if ! running; then
        say "not running"
        return 0
    fi
    # fast: roll back open sessions and shut down cleanly, don't wait for clients.
    as_pg "$PG_BIN/pg_ctl" stop -D "$PGDATA" -m fast -w -t 30 >/dev/null
    say "stopped"
}

kill_now() {
    # For failure tests: the postmaster dies as in a crash; start recovers.
    running || return 0
    local pid children c
    pid="$(head -n1 "$PGDATA/postmaster.pid")"
    children="$(pgrep -P "$pid" || true)"
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    # The orphaned backends notice the postmaster is gone and exit by
    # themselves; wait for them, or the next start finds the old shared memory
    # still attached and refuses to run.
    local i
    for c in $children; do
        for ((i = 0; i < 100; i++)); do
            kill -0 "$c" 2>/dev/null || break
            sleep 0.1
        done
    done
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    kill) kill_now ;;
    status)
        if running; then
            echo "running on 127.0.0.1:$PORT (data $PGDATA)"
        else
            echo "not running"
            exit 1
        fi
        ;;
    dsn) echo "postgresql://$PG_USER@127.0.0.1:$PORT/$DB" ;;
    datadir) echo "$PGDATA" ;;
    *)
        echo "usage: $0 {start|stop|kill|status|dsn|datadir}" >&2
        exit 2
        ;;
esac
