#!/usr/bin/env bash
# Optional, not part of CI: kcctl (github.com/kcctl/kcctl, its JVM build) against a sidecar built from this
# checkout in front of each cluster of the local stack, and against the newest worker directly; the outputs,
# normalised for what must differ (the connector's name, worker ids, times, traces), are diffed with the
# direct one: a real client that nobody here wrote, as a drop-in check.
#
#   KCCTL_JAR=/path/to/kcctl/target/quarkus-app/quarkus-run.jar STACK_DIR=/work/stack-shared scripts/kcctl_compare.sh
#
# Building the jar on Java 17 (kcctl's pom asks for 21): in kcctl's checkout set <java.version>17</java.version>
# in pom.xml, write `case UNAUTHORIZED:` for `case Status.UNAUTHORIZED:` in
# src/main/java/org/kcctl/service/ExecutionExceptionHandler.java (a qualified enum case label is Java 21), then
# `mvn -B -Dmaven.test.skip=true package` (its tests need a Java 21 Debezium test jar; Maven Central only).
# Exit status: 0 when every cluster's outputs equal the direct ones, 1 otherwise (the diffs are printed).
set -uo pipefail
cd "$(dirname "$0")/.."

: "${KCCTL_JAR:?KCCTL_JAR: the quarkus-run.jar of a kcctl build}"
: "${STACK_DIR:?STACK_DIR: a running stack (deploy/local/stack.py up)}"
# shellcheck disable=SC1091
source "$STACK_DIR/env"
PY="${VENV:-.venv}/bin"
WORK=$(mktemp -d /tmp/kcctl-compare.XXXXXX)
RUN=$(date +%s)
SIDECARS=()
cleanup() {
    for pid in "${SIDECARS[@]}"; do kill "$pid" 2>/dev/null; done
}
trap cleanup EXIT

free_port() { "$PY/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

sidecar() {  # sidecar NAME PROPERTIES: a sidecar of this checkout, its URL on stdout
    local port
    port=$(free_port)
    CONTROL_PLANE_LOG_FORMAT=json "$PY/control-plane" serve --port "$port" --worker-properties "$2" \
        >"$WORK/sidecar-$1.log" 2>&1 &
    SIDECARS+=($!)
    for _ in $(seq 120); do
        curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
        sleep 1
    done
    echo "http://127.0.0.1:$port"
}

kc() {  # kc HOME ARGS...: kcctl with its own configuration
    HOME="$1" timeout 120 java -jar "$KCCTL_JAR" "${@:2}" 2>&1
}

normalise() {  # the parts that must differ between runs and clusters
    sed -E -e "s/kcctl-[a-z-]+-$RUN/kcctl-NAME/g" -e "s/kcctl\.probe\.[a-z-]+\.$RUN/kcctl.probe.NAME/g" \
        -e "s#$WORK/in-[a-z-]+\.txt#FILE#g" \
        -e 's/[0-9]{1,3}(\.[0-9]{1,3}){3}:[0-9]+/HOST:PORT/g' \
        -e 's/(Worker ID|worker_id)[^,]*/\1 WORKER/g' \
        -e 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z?/TIME/g' \
        -e 's/"last_modified" *: *[0-9]+/"last_modified": TIME/g' \
        -e '/^\s+at /d' -e 's/ +/ /g'  # table columns: as wide as the longest name
}

scenario() {  # scenario LABEL URL: the kcctl commands, their outputs in $WORK/LABEL.out
    local label=$1 url=$2 home="$WORK/home-$1" name="kcctl-$1-$RUN" file="$WORK/in-$1.txt"
    mkdir -p "$home"
    printf 'a\nb\nc\n' >"$file"
    kc "$home" config set-context "$label" --cluster="$url" >/dev/null
    cat >"$WORK/$label.json" <<EOF
{"name": "$name", "config": {"connector.class": "org.apache.kafka.connect.file.FileStreamSourceConnector",
 "tasks.max": "1", "file": "$file", "topic": "$name"}}
EOF
    {
        echo "## apply"; kc "$home" apply -f "$WORK/$label.json"
        for _ in $(seq 60); do
            curl -s "$url/connectors/$name/status" | grep -q '"tasks":\[{"id":0,"state":"RUNNING"' && break
            sleep 1
        done
        echo "## describe"; kc "$home" describe connector "$name" | grep -v -i 'worker\|trace'
        echo "## get connectors"; kc "$home" get connectors | grep -E "^NAME|$name"
        echo "## pause"; kc "$home" pause connector "$name"
        sleep 3
        echo "## describe paused"; kc "$home" describe connector "$name" | grep -i 'state'
        echo "## resume"; kc "$home" resume connector "$name"
        echo "## stop"; kc "$home" stop connector "$name"
        for _ in $(seq 60); do
            curl -s "$url/connectors/$name/status" | grep -q '"state":"STOPPED"' && break
            sleep 1
        done
        echo "## describe stopped"; kc "$home" describe connector "$name" | grep -i 'state'
        echo "## get offsets"; kc "$home" get offsets "$name"
        echo "## delete offsets"; kc "$home" delete offsets "$name"
        echo "## patch logger (cluster scope from 3.7 as kcctl sees the version)"
        kc "$home" patch logger "kcctl.probe.$label.$RUN" -l DEBUG
        echo "## get logger"; kc "$home" get logger "kcctl.probe.$label.$RUN"
        echo "## info (version)"; kc "$home" info | grep -i 'version'
        echo "## delete"; kc "$home" delete connector "$name"
    } 2>&1 | normalise >"$WORK/$label.out"
}

declare -A URLS=([direct-new]="$CONNECT_URL")
URLS[via-new]=$(sidecar new "$CONNECT_PROPERTIES")
[ -n "${CONNECT_PROPERTIES_OLD:-}" ] && URLS[via-old]=$(sidecar old "$CONNECT_PROPERTIES_OLD")
[ -n "${CONNECT_PROPERTIES_OLDEST:-}" ] && URLS[via-oldest]=$(sidecar oldest "$CONNECT_PROPERTIES_OLDEST")

status=0
for label in "${!URLS[@]}"; do scenario "$label" "${URLS[$label]}" & done
wait
for label in "${!URLS[@]}"; do
    [ "$label" = direct-new ] && continue
    if diff -u "$WORK/direct-new.out" "$WORK/$label.out" >"$WORK/$label.diff"; then
        echo "kcctl: $label: same as direct-new"
    else
        echo "kcctl: $label: DIFFERENT from direct-new"; cat "$WORK/$label.diff"; status=1
    fi
done
echo "kcctl: outputs in $WORK"
exit $status
