#!/usr/bin/env bash
# The project's test command (README: `make test`; CI: .ci/run calls it).
#
# On a fresh machine it installs what the tests need and starts what they use:
#   - Debian packages: Java 17 and Maven (Kafka jars; the JDK's keytool), openssl (the secured
#     broker's certificates, tests/infra/test_seguridad_kafka.py), PostgreSQL, promtool (alert
#     rules), npm;
#   - the virtualenv from uv.lock: the project and its dev, report and local extras (the small
#     model), every file checked against the lock's hash (scripts/venv.sh);
#   - the AsyncAPI parser and Modelina from npm (contrato/package-lock.json), which
#     contrato/asyncapi.cjs validates the AsyncAPI document and generates client models with;
#   - the Kafka jars from Maven Central (cached in .cache/kafka), kustomize built from its Go
#     module (cached in .cache/kustomize; tests/deploy renders the overlays with it), a
#     PostgreSQL cluster;
#   - podman, crun, uidmap, fuse-overlayfs and mmdebstrap, and the production image built with
#     them (scripts/imagen.sh; its base cached in .cache/imagen), which
#     tests/deploy/test_imagen.py runs as containers.
# Then: ruff and mypy on the packages (beside the first run), and the whole pytest suite in two
# runs, below (Kafka
# tests start their own broker on a free port; the Postgres tests use the cluster started here).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'test.sh: %s\n' "$*" >&2; }

# Python writes its bytecode caches (__pycache__, ignored by git): the suite starts a few hundred
# Python processes (workers, the app, `fichas` commands), and where the environment sets
# PYTHONDONTWRITEBYTECODE (container images often do; this project's machine does) each one
# compiled LangChain, LangGraph and the rest from source again: 5 s of CPU to import the
# worker instead of 2.5 s (README, "Where the suite's time goes").
unset PYTHONDONTWRITEBYTECODE

install_system_packages() {
    local missing=()
    command -v java >/dev/null 2>&1 || missing+=(openjdk-17-jre-headless)
    command -v mvn >/dev/null 2>&1 || missing+=(maven)
    command -v openssl >/dev/null 2>&1 || missing+=(openssl)
    compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || missing+=(postgresql)
    command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
    # The reviewer app's browser tests (tests/revision): Debian's Chromium and its driver.
    command -v chromium >/dev/null 2>&1 || missing+=(chromium)
    command -v chromedriver >/dev/null 2>&1 || missing+=(chromium-driver)
    command -v npm >/dev/null 2>&1 || missing+=(nodejs npm)
    # The image and its containers (scripts/imagen.sh; docs/despliegue.md, "The image").
    command -v podman >/dev/null 2>&1 || missing+=(podman)
    command -v crun >/dev/null 2>&1 || missing+=(crun)
    command -v newuidmap >/dev/null 2>&1 || missing+=(uidmap)
    command -v fuse-overlayfs >/dev/null 2>&1 || missing+=(fuse-overlayfs)
    command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
    if ((${#missing[@]})); then
        say "installing ${missing[*]}"
        export DEBIAN_FRONTEND=noninteractive
        # Keep the packaged services from starting their own servers (no init system here).
        printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        rm -f /usr/sbin/policy-rc.d
    fi
}

install_python() {
    # .venv exactly as uv.lock says, hashes checked; nothing to do when it already is
    # (scripts/venv.sh). A pyproject.toml changed without `make lock` stops here.
    bash scripts/venv.sh
}

install_node_tools() {
    # The AsyncAPI parser and Modelina, which contrato/asyncapi.cjs validates
    # contrato/asyncapi.yaml and generates client models with (tests/contrato), pinned by
    # contrato/package-lock.json; installed again only when the lock file changed.
    if [[ ! -d contrato/node_modules/@asyncapi/modelina ||
        contrato/package-lock.json -nt contrato/node_modules/.package-lock.json ]]; then
        say "installing the AsyncAPI parser and Modelina (npm ci in contrato/)"
        npm ci --prefix contrato --no-audit --no-fund --ignore-scripts --loglevel=error
    fi
}

# Installs overlap where they do not depend on each other (issue 40: the suite under 15 min on
# a fresh machine): the virtualenv and kustomize need nothing from apt, so they run beside it;
# the AsyncAPI tools are needed only by the second pytest run, so npm runs beside ruff, mypy
# and the model's tests. The image builds from the end of apt on at the lowest priority
# (`lowest`): llama.cpp wants both cores (its tests took twice as long beside a build at equal
# priority), and beside the second run a build at equal priority slowed the tests that start
# first (the quick bench 101 -> 150 s, the kill test 170 -> 194 s); at the lowest it takes the
# cycles they leave. Its container tests come
# late in the second run's order and wait for the build (scripts/imagen.sh builds one at a
# time). A run with arguments builds the image only if a test asks for it. Each step's log
# goes to .cache/test-logs/ and is printed if it fails.
# Every phase's wall time is printed at the end ("test.sh: phases: ..."): the README's
# per-phase table comes from those lines.
LOGS=.cache/test-logs
mkdir -p "$LOGS"
SECONDS=0
phases=()
phase_start=0
phase() { # name: close the previous phase, start the next
    local now=$SECONDS
    if [[ -n "${phase_name:-}" ]]; then
        phases+=("$phase_name $((now - phase_start)) s")
    fi
    phase_name=$1
    phase_start=$now
}
report_phases() {
    phase ""
    say "phases: ${phases[*]}; total $SECONDS s"
}
trap report_phases EXIT
# shellcheck disable=SC2034 # pid_<name> is read back by await, through eval
background() { # name command...: run in the background, log to $LOGS/name.log
    local name=$1
    shift
    "$@" >"$LOGS/$name.log" 2>&1 &
    eval "pid_$name=$!"
}
lowest() { # command...: run it in a session of its own at the lowest CPU priority. The kernel
    # schedules each session as one group (autogroup), so `nice` alone ranks a process only
    # against its own session; the group's nice is set too.
    setsid -w bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null || true; exec nice -n 19 "$@"' \
        lowest "$@"
}
await() { # name: wait for a background step; print its log and stop if it failed
    local name=$1 pid
    pid="$(eval "echo \$pid_$name")"
    if ! wait "$pid"; then
        cat "$LOGS/$name.log" >&2
        say "$name failed (log above: $LOGS/$name.log)"
        exit 1
    fi
    cat "$LOGS/$name.log" >&2
}

phase "installs"
background venv install_python
background kustomize bash scripts/kustomize.sh fetch
install_system_packages
background npm install_node_tools
(($#)) || background imagen lowest bash scripts/imagen.sh build
bash scripts/kafka.sh fetch
bash scripts/postgres.sh start
await venv
await kustomize
FICHAS_TEST_POSTGRES_DSN="$(bash scripts/postgres.sh dsn)"
export FICHAS_TEST_POSTGRES_DSN
trap 'report_phases; bash scripts/postgres.sh stop >/dev/null 2>&1 || true' EXIT

lint() { # ruff, mypy and the JSON Schemas' check; its wall time goes in its own log
    local start=$SECONDS
    say "ruff"
    .venv/bin/ruff check .
    say "mypy"
    .venv/bin/mypy
    say "contract: the committed JSON Schemas are the models'"
    .venv/bin/python -m esquemas.json_schema --comprobar
    say "lint took $((SECONDS - start)) s"
}
# With arguments (`make test ARGS="-k kafka"`): one serial pytest run of what they select.
# Without (the README's command, CI): two runs. First the real small model's tests (marker
# llm_local), alone: llama.cpp keeps both cores busy, and beside other tests its calls took 4 to
# 6 times longer (test_evaluar_local 55 s alone, 330 s beside one other pytest-xdist worker).
# Then everything else on FICHAS_TEST_JOBS pytest-xdist workers (default 3): most of those tests
# wait on a broker, a process or a timer, and each worker has its own broker and database
# (tests/conftest.py). README, "Where the suite's time goes", has the figures.
# FICHAS_TEST_JUNIT_DIR: write each run's JUnit XML there (python -m harness.duraciones).
pytest_run() {
    local name=$1 rc=0
    shift
    local junit=()
    [[ -n "${FICHAS_TEST_JUNIT_DIR:-}" ]] && junit=(--junitxml="$FICHAS_TEST_JUNIT_DIR/$name.xml")
    .venv/bin/python -m pytest -q -p no:cacheprovider "${junit[@]}" "$@" || rc=$?
    return "$rc"
}
if (($#)); then
    phase "ruff+mypy"
    lint
    await npm
    phase "pytest"
    say "pytest $*"
    pytest_run args "$@"
else
    # ruff and mypy (one core, ~40 s) run beside the model's tests, whose llama.cpp server
    # waits between calls while brokers and workers start; a lint failure is reported when
    # the model's tests end, and stops the run there.
    background lint lint
    phase "pytest model"
    say "pytest: the real small model's tests (marker llm_local), beside ruff and mypy"
    pytest_run modelo -m llm_local
    phase "lint+npm wait"
    await lint
    await npm
    jobs="${FICHAS_TEST_JOBS:-3}"
    phase "pytest rest"
    say "pytest: the rest on $jobs pytest-xdist workers (the image builds beside them if not done)"
    rc=0
    pytest_run resto -n "$jobs" --dist loadgroup -m "not llm_local" || rc=$?
    await imagen
    exit "$rc"
fi
