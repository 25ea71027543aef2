#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make compare`: the incident replayed against the locks people use
# instead of tenure (docs/COMPARE.md).  Starts every server on free
# loopback ports in a temp dir (Redis x3 with appendfsync always, etcd,
# ZooKeeper, tenured, the Kafka mock cluster and two tenure-materializers,
# PostgreSQL through scripts/with-pg.sh), runs compare/harness.py, then the
# independent reader (compare/reader.py) and the report
# (compare/report.py: COMPARE_REPORT and the SVG chart beside it).
#
# Environment: COMPARE_TRIALS (200 per system), COMPARE_CONCURRENCY (16
# trials at once), COMPARE_TTL_MS (1000), COMPARE_PAUSE (0.5:2.5, the
# pauses' range in TTLs), COMPARE_SEED (29), COMPARE_BENCH_N (200),
# COMPARE_BENCH_ROUNDS (3), COMPARE_ONLY (comma list of systems),
# COMPARE_OUT (build/compare: logs, sinks, results.json), COMPARE_REPORT
# (compare/report.md), COMPARE_PLANT (a planted bug, for the test's red
# runs: fence-off, fence-plain), TN_BIN (build/release/bin).
# A system whose server or client is not installed is left out, and the
# report says so.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${TENURE_TEST_PG_URL:-}" ]; then
    exec "$ROOT/scripts/with-pg.sh" "$0" "$@"
fi
TN_BIN=${TN_BIN:-$ROOT/build/release/bin}
OUT=${COMPARE_OUT:-$ROOT/build/compare}
REPORT=${COMPARE_REPORT:-$ROOT/compare/report.md}
PY=${TN_PYTHON3:-/usr/bin/python3}
export TN_PYTHON3=$PY
export COMPARE_TTL_MS=${COMPARE_TTL_MS:-1000}
export PYTHONPATH="$ROOT/python${PYTHONPATH:+:$PYTHONPATH}"
log() { echo "compare: $*" >&2; }
started=$(date +%s)

rm -rf "$OUT"
mkdir -p "$OUT/sinks"
WORK=$(mktemp -d /tmp/tenure-compare.XXXXXX)
. "$ROOT/bench/lib.sh" # PIDS, free_port, tn_server_start; cleanup at exit
. "$ROOT/bench/servers.sh"

# ---------------------------------------------------- what can run here
only=${COMPARE_ONLY:-all}
systems=()
: >"$OUT/absent.txt"
absent() { log "$1: not run: $2"; echo "$1: $2" >>"$OUT/absent.txt"; }
has_py() { "$PY" -c "import $1" 2>/dev/null; }
for s in redis redlock etcd zookeeper pgadvisory tenure; do
    [ "$only" = all ] || [[ ",$only," == *",$s,"* ]] || continue
    case $s in
    redis | redlock)
        command -v redis-server >/dev/null || { absent "$s" "redis-server is not installed"; continue; }
        has_py redis || { absent "$s" "python3-redis is not installed"; continue; } ;;
    etcd)
        command -v etcd >/dev/null || { absent "$s" "etcd-server is not installed"; continue; } ;;
    zookeeper)
        command -v java >/dev/null && [ -f /usr/share/java/zookeeper.jar ] ||
            { absent "$s" "zookeeper is not installed"; continue; }
        has_py kazoo || { absent "$s" "python3-kazoo is not installed"; continue; } ;;
    tenure)
        for b in tenured tenure-materializer tn-kafka-mock; do
            [ -x "$TN_BIN/$b" ] || { log "no $TN_BIN/$b: build first (make release)"; exit 1; }
        done
        has_py confluent_kafka || { log "python3-confluent-kafka is missing (scripts/deps.sh)"; exit 1; } ;;
    esac
    systems+=("$s")
done
want() { [[ " ${systems[*]} " == *" $1 "* ]]; }
export COMPARE_SYSTEMS=$(IFS=,; echo "${systems[*]}")
log "systems: $COMPARE_SYSTEMS"

# ---------------------------------------------------------- the servers
# on_free_port FN DIR [ARGS...]: FN DIR PORT [ARGS...] on a free port, up
# to three ports (another test may take one between the look and the
# bind); sets PORT.
on_free_port() {
    local fn=$1 dir=$2
    shift 2
    for _ in 1 2 3; do
        PORT=$(free_port)
        rm -rf "$dir"
        "$fn" "$dir" "$PORT" "$@" && return 0
        kill -9 "$SRV_PID" 2>/dev/null || true
    done
    log "$fn did not start: $(tail -5 "$dir/log" 2>/dev/null)"
    exit 1
}
if want redis || want redlock; then
    addrs=()
    for i in 1 2 3; do
        on_free_port start_redis "$WORK/redis$i" --appendonly yes --appendfsync always
        addrs+=("127.0.0.1:$PORT")
    done
    export COMPARE_REDIS=$(IFS=,; echo "${addrs[*]}")
fi
if want etcd; then
    # etcd's shortest lease is 1.5 election timeouts (rounded up to whole
    # seconds): a 100 ms election timeout (heartbeat 10 ms) allows 1 s.
    on_free_port start_etcd "$WORK/etcd" "$(free_port)" --heartbeat-interval 10 \
        --election-timeout 100
    export COMPARE_ETCD="http://127.0.0.1:$PORT"
fi
if want zookeeper; then
    # Session timeouts are bounded by 2 and 20 ticks: 100 ms ticks allow a
    # session (the lock's TTL) of 1 s.
    on_free_port start_zookeeper "$WORK/zk" 100
    export COMPARE_ZOOKEEPER="127.0.0.1:$PORT"
fi
export COMPARE_PG=$TENURE_TEST_PG_URL
MATS=()
if want tenure; then
    tn_server_start -i tenure -d "$WORK/tenured" -l "$WORK/tenured.log" ||
        { log "tenured did not start: $TN_SERVER_ERR"; exit 1; }
    export COMPARE_TENURE=${TN_SRV_URL[tenure]}
    "$TN_BIN/tn-kafka-mock" compare:4 >"$WORK/mock.out" 2>"$WORK/mock.err" &
    PIDS+=($!)
    for _ in $(seq 1 200); do [ -s "$WORK/mock.out" ] && break; sleep 0.05; done
    export COMPARE_KAFKA=$(head -1 "$WORK/mock.out")
    [ -n "$COMPARE_KAFKA" ] || { log "the Kafka mock did not start"; cat "$WORK/mock.err" >&2; exit 1; }
    for variant in fenced plain; do
        flag=()
        [ "$variant" = plain ] && flag=(--no-fence)
        case ${COMPARE_PLANT:-}:$variant in
        fence-off:fenced) flag=(--no-fence) ;;
        fence-plain:plain) flag=() ;;
        esac
        "$TN_BIN/tenure-materializer" --brokers "$COMPARE_KAFKA" --topic compare \
            --sink "sqlite:$OUT/sinks/kafka-$variant.db" --batch-wait-ms 10 "${flag[@]}" \
            2>"$WORK/materializer-$variant.log" &
        PIDS+=($!)
        MATS+=($!)
    done
fi

# ------------------------------------------------------------ the trials
log "$(date -u +%H:%M:%S) harness: ${COMPARE_TRIALS:-200} trials per system"
"$PY" "$ROOT/compare/harness.py" "$OUT"

# The materializers have passed every record the workers sent.
if want tenure; then
    sent=$(grep -o '"sink":"kafka","label":"[A-Z0-9]*","result":"ok"' "$OUT/events.jsonl" | wc -l)
    for db in "$OUT/sinks/kafka-fenced.db" "$OUT/sinks/kafka-plain.db"; do
        n=0
        for _ in $(seq 1 1200); do
            n=$(sqlite3 "$db" 'SELECT COALESCE(SUM(next_offset), 0) FROM tenure_offsets' 2>/dev/null || echo 0)
            [ "${n:-0}" -ge "$sent" ] && break
            sleep 0.1
        done
        [ "${n:-0}" -ge "$sent" ] || { log "$db: $n of $sent records committed"; exit 1; }
    done
    for p in "${MATS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${MATS[@]}"; do
        rc=0
        wait "$p" || rc=$?
        [ "$rc" = 0 ] || { log "tenure-materializer exited $rc on SIGTERM"; cat "$WORK"/materializer-*.log >&2; exit 1; }
    done
fi

# ------------------------------------------------- reader, report, chart
{
    echo "tenure $(git -C "$ROOT" describe --always --dirty 2>/dev/null || echo unknown)"
    for p in redis-server etcd-server zookeeper postgresql-15 python3-redis python3-kazoo \
        python3-psycopg2 python3-confluent-kafka; do
        echo "$p $(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo absent)"
    done
    echo "machine $(nproc) cores, $(uname -sr), load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
} >"$OUT/versions.txt"
"$PY" "$ROOT/compare/reader.py" "$OUT"
"$PY" "$ROOT/compare/report.py" "$OUT" "$REPORT"
log "$(date -u +%H:%M:%S) done in $(($(date +%s) - started)) s: $REPORT"
