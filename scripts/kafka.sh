#!/usr/bin/env bash
# A real, local, single-node Apache Kafka broker (KRaft, broker+controller in one
# JVM) for tests, the demo and CI. No Docker and no tarball downloads: the broker
# jars come from Maven Central through the machine's own Maven.
#
#   scripts/kafka.sh fetch    put Kafka + runtime deps in the cache (idempotent)
#   scripts/kafka.sh start    fetch if needed, format storage once, start, wait ready
#   scripts/kafka.sh stop     SIGTERM, then SIGKILL after 20 s
#   scripts/kafka.sh kill     SIGKILL at once (failure tests)
#   scripts/kafka.sh status   exit 0 if running
#   scripts/kafka.sh wait     wait until the broker answers (60 s)
#   scripts/kafka.sh topics ARGS...   run the kafka-topics tool against the broker
#   scripts/kafka.sh acls ARGS...     run the kafka-acls tool against the broker (secured mode)
#   scripts/kafka.sh dump-log ARGS... run DumpLogSegments on segment files (failed tests' accounts)
#   scripts/kafka.sh bin NAME.sh ARGS... a tool of Kafka's bin/ by its name (kafka-consumer-groups.sh, ...)
#
# Environment:
#   FICHAS_KAFKA_VERSION  Kafka version (default below)
#   FICHAS_CACHE_DIR      jar cache root (default <repo>/.cache)
#   FICHAS_KAFKA_PORT     client (PLAINTEXT) port (default 9092)
#   FICHAS_KAFKA_CONTROLLER_PORT  controller port (default client port + 1000)
#   FICHAS_KAFKA_DATA     data/log/pid folder (default <repo>/.cache/kafka-data);
#                         one folder per broker, so tests give each port its own
#   FICHAS_KAFKA_HEAP     JVM heap options (default "-Xms256m -Xmx512m")
#   FICHAS_KAFKA_JVM      the broker's other JVM options (default "-XX:+UseSerialGC
#                         -XX:TieredStopAtLevel=1": below, where the broker starts)
#   FICHAS_KAFKA_TIMEOUT  seconds start/wait allow (default 60)
#   FICHAS_KAFKA_EXTRA_CONF  more server.properties lines (a test's broker unlike the others)
#   FICHAS_KAFKA_TLS_DIR  secured mode (below) when set: a folder with ca.crt (the CA that
#                         signs client certificates) and broker.pem (the broker's unencrypted
#                         PKCS#8 key, then its certificate: Kafka's PEM keystore)
#   FICHAS_KAFKA_SASL_SSL_PORT  SASL_SSL port of the secured mode (default client port + 1)
#   FICHAS_KAFKA_SSL_PORT       SSL port with mutual TLS (default client port + 2)
#   FICHAS_KAFKA_SCRAM_FILE     lines "user password": SCRAM-SHA-512 and SCRAM-SHA-256
#                         credentials written when the storage is formatted (first start)
#   FICHAS_KAFKA_PRINCIPAL_RULES  ssl.principal.mapping.rules of the secured mode (default
#                         DEFAULT: a client certificate's principal is its whole subject)
#   FICHAS_M2_REPO        Maven local repo (default: Maven's own, ~/.m2/repository,
#                         shared by every clone on the machine: a fresh CI clone
#                         then copies the jars in seconds instead of downloading)
#
# Secured mode (FICHAS_KAFKA_TLS_DIR): two more listeners beside the PLAINTEXT one, SASL_SSL
# (SCRAM-SHA-512 and SCRAM-SHA-256 logins over TLS) and SSL with client certificates (mutual
# TLS: the principal is the certificate's subject, User:CN=<name>), and the standard authorizer
# with no access without an ACL. The PLAINTEXT listener (127.0.0.1 only) stays the admin door:
# its principal, User:ANONYMOUS, is the super user, which the controller, this script's tools
# and the tests' harness use; product clients under test use the secured ports.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# 4.4.0 is the newest 4.x Maven Central serves (checked with mvn dependency:get);
# its broker classes are Java 17 bytecode, which is the machine's default Java.
KAFKA_VERSION="${FICHAS_KAFKA_VERSION:-4.4.0}"
SCALA_VERSION="2.13"
# log4j2 backend as in Kafka's own distribution (kafka-server pulls log4j-core);
# the binding must match Kafka's slf4j-api 1.7.x, hence log4j-slf4j-impl, not -slf4j2-.
LOG4J_VERSION="2.25.5"

CACHE_ROOT="$(realpath -m "${FICHAS_CACHE_DIR:-$REPO_DIR/.cache}")"
KAFKA_HOME="$CACHE_ROOT/kafka/$KAFKA_VERSION"
LIBS="$KAFKA_HOME/libs"
PORT="${FICHAS_KAFKA_PORT:-9092}"
CONTROLLER_PORT="${FICHAS_KAFKA_CONTROLLER_PORT:-$((PORT + 1000))}"
# Absolute, so a relative FICHAS_KAFKA_DATA means the same thing to every command.
DATA="$(realpath -m "${FICHAS_KAFKA_DATA:-$REPO_DIR/.cache/kafka-data}")"
HEAP="${FICHAS_KAFKA_HEAP:--Xms256m -Xmx512m}"
JVM_OPTS="${FICHAS_KAFKA_JVM:--XX:+UseSerialGC -XX:TieredStopAtLevel=1}"
TIMEOUT="${FICHAS_KAFKA_TIMEOUT:-60}"
JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"
TLS_DIR="${FICHAS_KAFKA_TLS_DIR:+$(realpath -m "$FICHAS_KAFKA_TLS_DIR")}"
SASL_SSL_PORT="${FICHAS_KAFKA_SASL_SSL_PORT:-$((PORT + 1))}"
SSL_PORT="${FICHAS_KAFKA_SSL_PORT:-$((PORT + 2))}"
SCRAM_FILE="${FICHAS_KAFKA_SCRAM_FILE:-}"

CONF="$DATA/server.properties"
LOG4J_CONF="$DATA/log4j2.properties"
TOOLS_LOG4J_CONF="$DATA/log4j2-tools.properties"
LOGS="$DATA/logs"
LOGFILE="$DATA/kafka.out"
PIDFILE="$DATA/kafka.pid"
META="$DATA/kraft"

say() { echo "kafka.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# --------------------------------------------------------------------- fetch
fetch() {
    # The marker is written last, so a fetch cut short is redone, not trusted.
    if [[ -f "$KAFKA_HOME/.complete" ]]; then
        return 0
    fi
    command -v mvn >/dev/null || die "mvn not found (apt-get install -y maven)"
    mkdir -p "$KAFKA_HOME"
    # A throwaway pom: Maven resolves the whole runtime tree of the broker and
    # copies it flat into libs/, exactly the shape of Kafka's own libs/ folder.
    # kafka-server's published pom leaks test-only deps (junit, mockito,
    # apacheds kerberos test servers) as runtime: excluded, the broker never
    # loads them.
    local test_only_exclusions
    test_only_exclusions='      <exclusions>'
    local group
    for group in org.junit.jupiter org.junit.platform org.mockito \
        org.apache.directory.api org.apache.directory.server; do
        test_only_exclusions+=$'\n'"        <exclusion><groupId>$group</groupId><artifactId>*</artifactId></exclusion>"
    done
    test_only_exclusions+=$'\n''      </exclusions>'
    cat >"$KAFKA_HOME/pom.xml" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <!-- generated by scripts/kafka.sh fetch; only used to resolve jars -->
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.fichas</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_$SCALA_VERSION</artifactId>
      <version>$KAFKA_VERSION</version>
$test_only_exclusions
    </dependency>
    <dependency>
      <!-- kafka-topics & co. (org.apache.kafka.tools.*): readiness check and topic creation -->
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka-tools</artifactId>
      <version>$KAFKA_VERSION</version>
$test_only_exclusions
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
  </dependencies>
</project>
EOF
    local mvn_args=(-q -B -Dstyle.color=never -f "$KAFKA_HOME/pom.xml")
    if [[ -n "${FICHAS_M2_REPO:-}" ]]; then
        mvn_args+=("-Dmaven.repo.local=$FICHAS_M2_REPO")
    fi
    say "fetching Kafka $KAFKA_VERSION (Scala $SCALA_VERSION) with Maven into $LIBS"
    rm -rf "$LIBS"
    # Pinned plugin version: the default one of Maven 3.8.7 predates some options.
    mvn "${mvn_args[@]}" \
        org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies \
        -DincludeScope=runtime -DoutputDirectory="$LIBS" \
        </dev/null >"$KAFKA_HOME/fetch.log" 2>&1 || {
        tail -n 40 "$KAFKA_HOME/fetch.log" >&2
        die "Maven could not fetch Kafka $KAFKA_VERSION (log: $KAFKA_HOME/fetch.log)"
    }
    [[ -n "$(ls "$LIBS"/kafka_"$SCALA_VERSION"-*.jar 2>/dev/null)" ]] \
        || die "fetch finished but no kafka_$SCALA_VERSION jar in $LIBS"
    touch "$KAFKA_HOME/.complete"
    say "fetched $(find "$LIBS" -name '*.jar' | wc -l) jars, $(du -sh "$LIBS" | cut -f1)"
}

# ------------------------------------------------------------------- helpers
pid_alive() {
    [[ -f "$PIDFILE" ]] || return 1
    local pid
    pid="$(cat "$PIDFILE" 2>/dev/null)" || return 1
    [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
    # After a reboot or a crash the pid may belong to someone else now.
    local cmdline
    cmdline="$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" || return 1
    [[ "$cmdline" == *"kafka.Kafka $CONF"* ]]
}

port_open() {
    # bash's /dev/tcp: no nc/ss needed on a bare machine.
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

run_tool() {
    # Kafka's CLI tools, the same main classes bin/kafka-*.sh run. Small heap and
    # quick JIT start: they are short-lived.
    "$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
        -Dlog4j2.configurationFile="$TOOLS_LOG4J_CONF" \
        -cp "$LIBS/*" "$@"
}

write_config() {
    mkdir -p "$DATA" "$LOGS"
    local secured_listeners=""
    if [[ -n "$TLS_DIR" ]]; then
        secured_listeners=",SASL_SSL://127.0.0.1:$SASL_SSL_PORT,SSL://127.0.0.1:$SSL_PORT"
    fi
    # 127.0.0.1 only: nothing outside this machine should reach the test broker.
    # Replication factors of 1 because there is one broker; no auto-created
    # topics so a misspelt topic name fails loudly instead of appearing empty.
    cat >"$CONF" <<EOF
# generated by scripts/kafka.sh start; edit the script, not this file
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$CONTROLLER_PORT
listeners=PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CONTROLLER_PORT$secured_listeners
advertised.listeners=PLAINTEXT://127.0.0.1:$PORT$secured_listeners
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL,SSL:SSL
log.dirs=$META
num.partitions=4
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=4
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
# small segments/retention checks: a test broker, not a production one
log.retention.check.interval.ms=60000
log.segment.bytes=67108864
# No no-op record every 500 ms into the metadata log (the default keeps a multi-node quorum's
# high watermark moving; one node needs none): an idle broker took 2.2 s of CPU a minute with
# them and 1.1 without, measured here, and the suite keeps four brokers up for its whole run.
metadata.max.idle.interval.ms=0
EOF
    # More broker settings, one per line, for a test that needs a broker unlike the others.
    if [[ -n "${FICHAS_KAFKA_EXTRA_CONF:-}" ]]; then
        printf '%s\n' "$FICHAS_KAFKA_EXTRA_CONF" >>"$CONF"
    fi
    if [[ -n "$TLS_DIR" ]]; then
        write_secured_config
    fi
    cat >"$LOG4J_CONF" <<EOF
# generated by scripts/kafka.sh: INFO for Kafka itself, quieter for chatty internals
status = warn
appender.out.type = Console
appender.out.name = OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = OUT
logger.kafka.name = kafka
logger.kafka.level = INFO
logger.raft.name = org.apache.kafka.raft
logger.raft.level = WARN
logger.controller.name = org.apache.kafka.controller
logger.controller.level = INFO
logger.statechange.name = state.change.logger
logger.statechange.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
    # The CLI tools print their results on stdout: their logs go to stderr and
    # only from WARN up, so `kafka.sh topics --list` prints just topic names.
    cat >"$TOOLS_LOG4J_CONF" <<EOF
status = warn
appender.err.type = Console
appender.err.name = ERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = ERR
EOF
}

write_secured_config() {
    [[ -f "$TLS_DIR/ca.crt" && -f "$TLS_DIR/broker.pem" ]] \
        || die "FICHAS_KAFKA_TLS_DIR=$TLS_DIR needs ca.crt and broker.pem"
    cat >>"$CONF" <<EOF
# secured mode (FICHAS_KAFKA_TLS_DIR): SCRAM over TLS, mutual TLS, the standard authorizer
ssl.keystore.type=PEM
ssl.keystore.location=$TLS_DIR/broker.pem
ssl.truststore.type=PEM
ssl.truststore.location=$TLS_DIR/ca.crt
listener.name.ssl.ssl.client.auth=required
sasl.enabled.mechanisms=SCRAM-SHA-512,SCRAM-SHA-256
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
allow.everyone.if.no.acl.found=false
super.users=User:ANONYMOUS
ssl.principal.mapping.rules=${FICHAS_KAFKA_PRINCIPAL_RULES:-DEFAULT}
EOF
}

scram_arguments() {
    # --add-scram for each "user password" line of FICHAS_KAFKA_SCRAM_FILE, both mechanisms,
    # NUL-separated for mapfile.
    [[ -n "$SCRAM_FILE" ]] || return 0
    local user password mechanism
    while read -r user password; do
        [[ -n "$user" ]] || continue
        for mechanism in SCRAM-SHA-512 SCRAM-SHA-256; do
            printf '%s\0%s\0' --add-scram "$mechanism=[name=$user,password=$password]"
        done
    done <"$SCRAM_FILE"
}

format_storage() {
    # Formatting is once per data folder: reformatting would wipe the topics.
    if [[ -f "$META/meta.properties" ]]; then
        return 0
    fi
    # A random cluster id the way Kafka's Uuid prints it (16 random bytes,
    # URL-safe base64, no padding, not starting with '-'); done here rather than
    # with `StorageTool random-uuid` to save a JVM start.
    local cluster_id="-"
    while [[ "$cluster_id" == -* ]]; do
        cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    done
    say "formatting KRaft storage in $META (cluster $cluster_id)"
    local scram=()
    mapfile -d '' -t scram < <(scram_arguments)
    run_tool kafka.tools.StorageTool format --standalone "${scram[@]}" \
        -t "$cluster_id" -c "$CONF" >>"$LOGFILE" 2>&1 \
        || { tail -n 30 "$LOGFILE" >&2; die "storage format failed"; }
}

# A Metadata request (v4, no topics) over the client protocol; exits 0 when the answer lists a
# broker. Python's standard library rather than the topics tool: a JVM start costs about 2 s of
# CPU, and a test suite starts brokers a few dozen times.
METADATA_PROBE='
import socket, struct, sys
body = struct.pack(">hhih", 3, 4, 1, 5) + b"probe" + struct.pack(">i?", 0, False)
with socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5) as s:
    s.sendall(struct.pack(">i", len(body)) + body)
    data = b""
    while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
        chunk = s.recv(65536)
        if not chunk:
            sys.exit(1)
        data += chunk
# size, correlation id, throttle time, then the brokers array
correlation, _, brokers = struct.unpack(">iii", data[4:16])
sys.exit(0 if correlation == 1 and brokers > 0 else 1)
'

broker_answers() {
    # A real round trip through the client protocol: a metadata request that lists the
    # broker only once it is unfenced and serving.
    python3 -c "$METADATA_PROBE" "$PORT" >/dev/null 2>&1
}

wait_ready() {
    local deadline=$((SECONDS + TIMEOUT))
    # Cheap checks first (process alive, port open, "started" in the log) so the
    # JVM-based check below runs once, not in a tight loop.
    while ((SECONDS < deadline)); do
        # kill -0, not pid_alive: right after the fork the child may still be this script's
        # bash (not yet exec'd into setsid/java), so its command line is not the broker's
        # yet; on a loaded machine that window is long enough to be seen (a CI run did).
        if ! kill -0 "$(cat "$PIDFILE" 2>/dev/null)" 2>/dev/null; then
            say "broker process exited during start-up; log tail:"
            tail -n 40 "$LOGFILE" >&2 || true
            return 1
        fi
        if port_open "$PORT" && grep -q "Kafka Server started" "$LOGFILE" 2>/dev/null; then
            if broker_answers; then
                return 0
            fi
        fi
        sleep 0.3
    done
    say "broker on 127.0.0.1:$PORT not ready after ${TIMEOUT}s; log tail:"
    tail -n 40 "$LOGFILE" >&2 || true
    return 1
}

# ------------------------------------------------------------------ commands
start() {
    if pid_alive; then
        say "already running (pid $(cat "$PIDFILE")) on 127.0.0.1:$PORT"
        return 0
    fi
    fetch
    command -v "$JAVA" >/dev/null || die "java not found"
    if port_open "$PORT"; then
        die "port $PORT is taken by another process (set FICHAS_KAFKA_PORT)"
    fi
    if [[ -n "$TLS_DIR" ]] && { port_open "$SASL_SSL_PORT" || port_open "$SSL_PORT"; }; then
        die "port $SASL_SSL_PORT or $SSL_PORT is taken (FICHAS_KAFKA_SASL_SSL_PORT, FICHAS_KAFKA_SSL_PORT)"
    fi
    write_config
    # Keep the previous run's log (e.g. of a killed broker) for diagnosis; the
    # readiness check below reads only this run's.
    if [[ -s "$LOGFILE" ]]; then
        mv -f "$LOGFILE" "$LOGFILE.prev"
    fi
    : >"$LOGFILE"
    format_storage
    say "starting Kafka $KAFKA_VERSION on 127.0.0.1:$PORT (data in $DATA)"
    # setsid: the broker gets its own session, so it survives the shell that
    # started it and a Ctrl-C there; nohup-like output to the log file.
    # A modest heap, the serial collector and the C1 compiler only (FICHAS_KAFKA_JVM): this
    # broker serves one machine's tests and demo, a few hundred records, and a test suite
    # starts a few dozen of them. bin/kafka-run-class.sh's G1 and full tiered compilation are
    # for a long-lived server: here they cost 5.5 s of CPU to reach ready against 2.4 s (and
    # 9 s against 6 s of wall time), measured on a 2-core machine (README, "Where the suite's
    # time goes"). A broker meant to run for long can set FICHAS_KAFKA_JVM to the G1 flags.
    local heap_opts jvm_opts
    read -r -a heap_opts <<<"$HEAP"
    read -r -a jvm_opts <<<"$JVM_OPTS"
    setsid "$JAVA" "${heap_opts[@]}" "${jvm_opts[@]}" \
        -Djava.awt.headless=true \
        -Dlog4j2.configurationFile="$LOG4J_CONF" -Dkafka.logs.dir="$LOGS" \
        -cp "$LIBS/*" kafka.Kafka "$CONF" \
        >>"$LOGFILE" 2>&1 </dev/null &
    echo $! >"$PIDFILE"
    if ! wait_ready; then
        stop >/dev/null 2>&1 || true
        exit 1
    fi
    say "ready on 127.0.0.1:$PORT (pid $(cat "$PIDFILE"))"
}

stop() {
    if ! pid_alive; then
        rm -f "$PIDFILE"
        say "not running"
        return 0
    fi
    local pid
    pid="$(cat "$PIDFILE")"
    kill -TERM "$pid" 2>/dev/null || true
    # A clean shutdown lets the next start skip log recovery; 20 s is plenty
    # for a test broker, after that we stop waiting.
    local i
    for ((i = 0; i < 200; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "no exit after 20 s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    fi
    rm -f "$PIDFILE"
    say "stopped"
}

kill_now() {
    # For failure tests: the broker dies as in a crash, no clean shutdown.
    if pid_alive; then
        local pid
        pid="$(cat "$PIDFILE")"
        kill -KILL "$pid" 2>/dev/null || true
        while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
    fi
    rm -f "$PIDFILE"
}

status() {
    if pid_alive; then
        echo "running (pid $(cat "$PIDFILE")) on 127.0.0.1:$PORT"
        return 0
    fi
    echo "not running"
    return 1
}

wait_cmd() {
    pid_alive || die "not running"
    wait_ready
}

case "${1:-}" in
    fetch) fetch ;;
    start) start ;;
    stop) stop ;;
    kill) kill_now ;;
    status) status ;;
    wait) wait_cmd ;;
    topics)
        shift
        fetch
        [[ -f "$TOOLS_LOG4J_CONF" ]] || write_config
        run_tool org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$PORT" "$@"
        ;;
    acls)
        shift
        fetch
        [[ -f "$TOOLS_LOG4J_CONF" ]] || write_config
        run_tool org.apache.kafka.tools.AclCommand --bootstrap-server "127.0.0.1:$PORT" "$@"
        ;;
    bin)
        # A tool of Kafka's bin/ by its script's name, as an operator runs it from a Kafka
        # image (/opt/kafka/bin/NAME.sh ARGS): the same main class, these jars. The runbook's
        # test (tests/deploy/test_runbook.py) runs the documented commands through it.
        shift
        fetch
        [[ -f "$TOOLS_LOG4J_CONF" ]] || write_config
        tool="$1"
        shift
        case "$tool" in
            kafka-consumer-groups.sh) class=org.apache.kafka.tools.consumer.group.ConsumerGroupCommand ;;
            kafka-topics.sh) class=org.apache.kafka.tools.TopicCommand ;;
            kafka-console-consumer.sh) class=org.apache.kafka.tools.consumer.ConsoleConsumer ;;
            kafka-acls.sh) class=org.apache.kafka.tools.AclCommand ;;
            *) echo "kafka.sh bin: no main class known for $tool" >&2; exit 2 ;;
        esac
        run_tool "$class" "$@"
        ;;
    dump-log)
        # Kafka's DumpLogSegments over segment files (a failed test's account of its broker:
        # harness.kafka_dump); it reads files, not the broker.
        shift
        fetch
        [[ -f "$TOOLS_LOG4J_CONF" ]] || write_config
        run_tool org.apache.kafka.tools.DumpLogSegments "$@"
        ;;
    *)
        echo "usage: $0 {fetch|start|stop|kill|status|wait|topics ARGS...|acls ARGS...|dump-log ARGS...|bin NAME.sh ARGS...}" >&2
        exit 2
        ;;
esac
