#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The full benchmark of issue 8 (`make bench`): tenured and every peer,
# one after the other, on 127.0.0.1, RUNS times; prints one table of
# medians with the ratios against each peer measured in the same run.
#
#  - builds the release flavour (-O2 -g) into build/bench, and bench/zk-load.c
#  - per run: tenured acquire / renew / acquire->release at 50 and 200
#    connections, without and with HTTP pipelining (wrk, bench/tenured.lua,
#    server CPU per request from /proc/PID/stat); Redis default and with
#    appendfsync always (redis-benchmark SET NX PX; for the cycle, SET NX
#    PX then DEL as two commands (bench/redis-cycle.c), and an EVAL of
#    both); ZooKeeper ephemeral create and
#    create+delete (bench/zk-load.c); etcd lock transactions (wrk,
#    bench/etcd-txn.lua, through etcd's HTTP/JSON gateway)
#  - then: tenured over PostgreSQL against pgbench (scripts/pg-bench.sh
#    under scripts/with-pg.sh), p99 at half of peak, memory per live lease
#    and restart time with one million leases, materializer records/s.
#
# Environment: RUNS (3), DURATION (wrk seconds, 5), LEASES (1000000),
# MAT_PARTITIONS (8), MAT_RECORDS (90000 per partition: the librdkafka mock
# cluster drops the oldest records of a partition beyond about 110000),
# MAT_NAMES (64 lease names), BENCH_ONLY (comma list of sections: tenured, redis,
# zk, etcd, pg, latency, memory, mat; default all), BENCH_BUILD, TENURED
# (use this binary, build nothing), BENCH_OUT (also write the table here),
# BENCH_RESULTS (keep the raw "key value" results in this file),
# BENCH_TABLE (only print the table of this raw results file).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BENCH_BUILD:-$ROOT/build/bench}
RUNS=${RUNS:-3}
DUR=${DURATION:-5}
LEASES=${LEASES:-1000000}
MAT_PARTITIONS=${MAT_PARTITIONS:-8}
MAT_RECORDS=${MAT_RECORDS:-90000}
MAT_NAMES=${MAT_NAMES:-64}
ONLY=${BENCH_ONLY:-all}
LUA=$ROOT/bench/tenured.lua

for tool in wrk redis-server redis-benchmark redis-cli curl ss awk; do
    command -v "$tool" >/dev/null || { echo "bench: $tool is not installed (bench/deps.sh)" >&2; exit 1; }
done

WORK=$(mktemp -d /tmp/tenure-bench.XXXXXX)
if [ -n "${BENCH_TABLE:-}" ]; then
    RES=$BENCH_TABLE
else
    mkdir -p "$BUILD"
    RES=${BENCH_RESULTS:-$BUILD/bench-results.txt}
    : >"$RES"
fi
. "$(dirname "$0")/lib.sh" # PIDS, cleanup at exit
. "$(dirname "$0")/servers.sh" # start_redis, start_zookeeper, start_etcd

want() { [ "$ONLY" = all ] || [[ ",$ONLY," == *",$1,"* ]]; }
log() { echo "$*" >&2; }
record() { echo "$1 $2" >>"$RES"; } # KEY VALUE


# thread_ticks PID: "name ticks" per thread.
thread_ticks() {
    local t
    for t in /proc/"$1"/task/*; do
        awk -v p="$1" -v t="${t##*/}" '{ n = $0; sub(/^[^(]*\(/, "", n); sub(/\).*$/, "", n);
               sub(/^.*\) /, ""); gsub(/ /, "_", n); print n "[" (t == p ? "main" : "tid-" t) "]", $12 + $13 }' \
            "$t/stat" 2>/dev/null || true
    done | sort
}
TCK=$(getconf CLK_TCK)

# ---------------------------------------------------------------- building
if [ -n "${BENCH_TABLE:-}" ]; then
    BIN=$BUILD/bin
    TENURED=$BIN/tenured
elif [ -n "${TENURED:-}" ]; then
    log "== using $TENURED as is (TENURED set, nothing built)"
    BIN=$(dirname "$TENURED")
else
    log "== building the release flavour in $BUILD"
    cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="-O2 -g" >/dev/null
    cmake --build "$BUILD" -j2 --target tenured tn-pg-sql tn-kafka-mock tn-produce \
        tenure-materializer >/dev/null
    BIN=$BUILD/bin
    TENURED=$BIN/tenured
fi
REDISCYCLE=
if [ -z "${BENCH_TABLE:-}" ]; then
    REDISCYCLE=$WORK/redis-cycle
    cc -O2 -o "$REDISCYCLE" "$ROOT/bench/redis-cycle.c"
fi
ZKLOAD=
if [ -z "${BENCH_TABLE:-}" ] && [ -f /usr/include/zookeeper/zookeeper.h ]; then
    ZKLOAD=$WORK/zk-load
    cc -O2 -o "$ZKLOAD" "$ROOT/bench/zk-load.c" -lzookeeper_mt -lpthread
fi

# ----------------------------------------------------------------- tenured
# start_tenured DATA_DIR [ARGS...]: the tests' launcher (bench/lib.sh),
# looking every 5 ms while it starts (restarts are timed); sets TPORT, TPID.
TN_SERVER_POLL=0.005
start_tenured() {
    local data=$1
    shift
    TN_SERVER_BIN=$TENURED tn_server_start -i t -d "$data" -l "$data.log" -- \
        --max-connections 1024 "$@" || { log "bench: $TN_SERVER_ERR"; exit 1; }
    TPORT=${TN_SRV_PORT[t]} TPID=${TN_SRV_PID[t]}
}
stop_tenured() { tn_server_stop t TERM; }

# to_ms "2.10ms" -> 2.10
to_ms() {
    awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n;
        else if (v ~ /s$/) n *= 1000; printf "%.3f\n", n }'
}

# wrk_stats OUT: "rps requests p99_ms"
wrk_stats() {
    local rps reqs p99
    rps=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1")
    reqs=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$1")
    p99=$(awk '$1 == "99%" { print $2 }' "$1")
    echo "${rps:-0} ${reqs:-0} $(to_ms "${p99:-0}")"
}

# tenured_one RUN MODE CONNS DEPTH: one fresh server, one wrk run.
tenured_one() {
    local run=$1 mode=$2 conns=$3 depth=$4 key out c0 c1 rps reqs p99 threads
    key="tenured.$mode.c$conns.p$depth"
    out="$WORK/wrk.$key.$run"
    start_tenured "$WORK/data.$key.$run"
    c0=$(ticks "$TPID")
    [ "$run" = 1 ] && [ "$mode" = acquire ] && thread_ticks "$TPID" >"$WORK/th0"
    threads=2
    timeout $((DUR + 60)) wrk -c "$conns" -t "$threads" -d "${DUR}s" --timeout 5s --latency \
        -s "$LUA" "http://127.0.0.1:$TPORT" -- "$mode" "$depth" "r$run" >"$out" 2>&1 || true
    c1=$(ticks "$TPID")
    if [ "$run" = 1 ] && [ "$mode" = acquire ]; then
        thread_ticks "$TPID" >"$WORK/th1"
        read -r _ reqs _ < <(wrk_stats "$out")
        log "   server CPU per thread (µs per request), $key:"
        join "$WORK/th0" "$WORK/th1" | awk -v r="$reqs" -v t="$TCK" \
            '{ d = $3 - $2; if (d > 0 && r > 0) printf "     %-16s %6.2f\n", $1, d * 1e6 / t / r }' >&2
    fi
    stop_tenured
    read -r rps reqs p99 < <(wrk_stats "$out")
    if grep -qE 'Non-2xx|Socket errors' "$out" || ! grep -q 'other=0' "$out"; then
        log "   WARNING $key run $run: errors or unexpected answers:"
        grep -E 'Non-2xx|Socket errors|lua:' "$out" | sed 's/^/     /' >&2
    fi
    record "$key.rps" "$rps"
    # wrk's percentiles are wrong when it pipelines (it records one latency
    # per batch but counts every request), so p99 only without pipelining.
    [ "$depth" = 1 ] && record "$key.p99" "$p99"
    [ "$reqs" -gt 0 ] && record "$key.cpu" "$(awk -v d=$((c1 - c0)) -v r="$reqs" -v t="$TCK" \
        'BEGIN { printf "%.2f", d * 1e6 / t / r }')"
    log "   $key: $rps req/s, p99 ${p99} ms, $(grep lua: "$out")"
}

section_tenured() { # RUN
    local mode conns depth
    for conns in 50 200; do
        for depth in 1 8; do
            for mode in acquire renew cycle; do
                tenured_one "$1" "$mode" "$conns" "$depth"
            done
        done
    done
}

# ------------------------------------------------------------------- Redis
# redis_one RUN FLAVOUR(default|always) KIND(set|cycle|cycle2) CONNS
# cycle: SET NX PX and DEL in one EVAL (one round trip, one fsync);
# cycle2: SET NX PX, then DEL, two commands (bench/redis-cycle.c).
redis_one() {
    local run=$1 flavour=$2 kind=$3 conns=$4 port dir rpid out n c0 c1 rps key
    key="redis.$flavour.$kind.c$conns"
    port=$(free_port)
    dir="$WORK/redis.$key.$run"
    if [ "$flavour" = always ]; then
        start_redis "$dir" "$port" --appendonly yes --appendfsync always || true
        n=150000
    else
        start_redis "$dir" "$port" --appendonly no || true
        n=400000
    fi
    rpid=$SRV_PID
    c0=$(ticks "$rpid")
    if [ "$kind" = cycle2 ]; then
        out=$(timeout $((DUR + 30)) "$REDISCYCLE" 127.0.0.1 "$port" "$conns" "$DUR" 2>&1)
        c1=$(ticks "$rpid")
        kill -9 "$rpid" 2>/dev/null || true
        wait "$rpid" 2>/dev/null || true
        rps=$(sed -n 's/^cycles \([0-9]*\) per_s \([0-9.]*\) errors 0$/\2/p' <<<"$out")
        n=$(sed -n 's/^cycles \([0-9]*\) .*/\1/p' <<<"$out")
        [ -n "$rps" ] || { log "   WARNING $key run $run: $out"; return 0; }
        record "$key.rps" "$rps"
        # CPU per command; the warm-up second's commands are not counted,
        # so this slightly overstates it.
        record "$key.cpu" "$(awk -v d=$((c1 - c0)) -v r="$((2 * n * (DUR + 1) / DUR))" -v t="$TCK" 'BEGIN { printf "%.2f", d * 1e6 / t / r }')"
        log "   $key: $out"
        return 0
    fi
    if [ "$kind" = set ]; then
        out=$(timeout 120 redis-benchmark -h 127.0.0.1 -p "$port" -c "$conns" -n "$n" \
            -r 1000000000 -q SET key:__rand_int__ val NX PX 60000 2>&1 |
            tr '\r' '\n' | grep 'requests per second' | tail -1)
    else
        out=$(timeout 120 redis-benchmark -h 127.0.0.1 -p "$port" -c "$conns" -n "$n" \
            -r 1000000000 -q EVAL \
            "redis.call('SET',KEYS[1],'v','NX','PX',60000) return redis.call('DEL',KEYS[1])" \
            1 key:__rand_int__ 2>&1 | tr '\r' '\n' | grep 'requests per second' | tail -1)
    fi
    c1=$(ticks "$rpid")
    kill -9 "$rpid" 2>/dev/null || true
    wait "$rpid" 2>/dev/null || true
    rps=$(sed -n 's/.*: *\([0-9.]*\) requests per second.*/\1/p' <<<"$out")
    [ -n "$rps" ] || { log "   WARNING $key run $run: no result from redis-benchmark"; return 0; }
    record "$key.rps" "$rps"
    record "$key.cpu" "$(awk -v d=$((c1 - c0)) -v r="$n" -v t="$TCK" 'BEGIN { printf "%.2f", d * 1e6 / t / r }')"
    log "   $key: $out"
}

section_redis() { # RUN
    redis_one "$1" default set 50
    redis_one "$1" default set 200
    redis_one "$1" always set 50
    redis_one "$1" always set 200
    redis_one "$1" always cycle 50
    redis_one "$1" default cycle 50
    redis_one "$1" always cycle2 50
    redis_one "$1" default cycle2 50
}

# --------------------------------------------------------------- ZooKeeper
section_zk() { # RUN
    [ -n "$ZKLOAD" ] || { log "   zk: libzookeeper-mt-dev missing, skipped"; return 0; }
    command -v java >/dev/null && [ -f /usr/share/java/zookeeper.jar ] ||
        { log "   zk: zookeeper package missing, skipped"; return 0; }
    local run=$1 dir port zpid kind out rate
    for kind in create cycle; do
        dir="$WORK/zk.$kind.$run"
        port=$(free_port)
        start_zookeeper "$dir" "$port" 2000 || true
        zpid=$SRV_PID
        out=$(timeout $((DUR + 60)) "$ZKLOAD" "127.0.0.1:$port" "$kind" "$DUR" 10 5 2>"$dir/load.err" || true)
        kill -9 "$zpid" 2>/dev/null || true
        wait "$zpid" 2>/dev/null || true
        log "   zk.$kind: $out"
        rate=$(awk '$1 == "ops" && $6 == 0 { print $4 }' <<<"$out")
        [ -n "$rate" ] && record "zk.$kind.rps" "$rate"
    done
}

# -------------------------------------------------------------------- etcd
section_etcd() { # RUN
    command -v etcd >/dev/null || { log "   etcd: etcd-server missing, skipped"; return 0; }
    local run=$1 dir cport pport epid out rps
    dir="$WORK/etcd.$run"
    cport=$(free_port)
    pport=$(free_port)
    start_etcd "$dir" "$cport" "$pport" || true
    epid=$SRV_PID
    out="$dir/wrk.out"
    timeout $((DUR + 60)) wrk -c 50 -t 2 -d "${DUR}s" --latency -s "$ROOT/bench/etcd-txn.lua" \
        "http://127.0.0.1:$cport" -- "r$run" >"$out" 2>&1 || true
    kill -9 "$epid" 2>/dev/null || true
    wait "$epid" 2>/dev/null || true
    read -r rps _ _ < <(wrk_stats "$out")
    grep -q 'failed=0' "$out" || log "   WARNING etcd: failed transactions: $(grep lua: "$out")"
    record etcd.txn.rps "$rps"
    log "   etcd.txn: $rps txn/s, $(grep lua: "$out")"
}

# -------------------------------------------------------------- PostgreSQL
section_pg() {
    [ -x "$BIN/tn-pg-sql" ] || { log "   pg: tn-pg-sql not built, skipped"; return 0; }
    local out="$WORK/pg.out"
    log "== PostgreSQL: scripts/pg-bench.sh $BIN $DUR 50 $RUNS (under scripts/with-pg.sh)"
    if ! "$ROOT/scripts/with-pg.sh" "$ROOT/scripts/pg-bench.sh" "$BIN" "$DUR" 50 "$RUNS" >"$out" 2>&1; then
        log "   WARNING pg: pg-bench.sh failed:"
        tail -5 "$out" >&2
        return 0
    fi
    sed 's/^/   /' "$out" >&2
    sed -n 's/^run [0-9]*: pgbench \([0-9.]*\) statements.*/\1/p' "$out" |
        while read -r v; do record pg.pgbench.rps "$v"; done
    sed -n 's/.*tenured \([0-9.]*\) requests\/s.*/\1/p' "$out" |
        while read -r v; do record pg.tenured.rps "$v"; done
    sed -n 's/.*ratio \([0-9.]*\)$/\1/p' "$out" |
        while read -r v; do record pg.ratio "$v"; done
}

median() { # KEY: the median of the recorded values, or empty
    awk -v k="$1" '$1 == k { print $2 }' "$RES" | sort -g |
        awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)] }'
}
count() { awk -v k="$1" '$1 == k' "$RES" | wc -l; }

# ---------------------------------------------- p99 at half of peak (c50)
section_latency() {
    local peak half delay run out rps p99
    peak=$(median tenured.acquire.c50.p1.rps)
    [ -n "$peak" ] || { log "   latency: no peak measured (run the tenured section)"; return 0; }
    half=$(awk -v p="$peak" 'BEGIN { printf "%d", p / 2 }')
    # 50 connections, each waiting DELAY ms after every answer: about
    # 50 / (DELAY + latency) requests per ms.
    delay=$(awk -v h="$half" 'BEGIN { d = int(50000 / h + 0.5) - 1; if (d < 1) d = 1; print d }')
    log "== p99 at half of peak: peak $peak/s, aiming at $half/s with 50 connections, delay $delay ms"
    for run in $(seq 1 "$RUNS"); do
        out="$WORK/wrk.half.$run"
        start_tenured "$WORK/data.half.$run"
        timeout $((DUR + 60)) wrk -c 50 -t 2 -d "${DUR}s" --timeout 5s --latency -s "$LUA" \
            "http://127.0.0.1:$TPORT" -- acquire 1 "h$run" 0 "$delay" >"$out" 2>&1 || true
        stop_tenured
        read -r rps _ p99 < <(wrk_stats "$out")
        record half.rps "$rps"
        record half.p99 "$p99"
        log "   run $run: $rps req/s, p99 $p99 ms"
    done
}

# --------------------------------- memory and restart, one million leases
rss_kb() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
section_memory() {
    local data="$WORK/data.mem" r0 r1 made=0 bytes=0 chunk=0 out per left t0 t1 ms
    start_tenured "$data" --expected-leases "$LEASES"
    r0=$(rss_kb "$TPID")
    log "== memory: filling $LEASES live leases (ttl 1 h), RSS before ${r0} kB"
    # wrk calls request() once more than it sends, so a chunk can fall a
    # few leases short: 99.9 % of LEASES is enough.
    while [ "$made" -lt $((LEASES - LEASES / 1000)) ] && [ "$chunk" -lt 40 ]; do
        chunk=$((chunk + 1))
        left=$((LEASES - made))
        per=$(((left + 1) / 2))
        out="$WORK/wrk.fill.$chunk"
        timeout 120 wrk -c 50 -t 2 -d 5s --timeout 5s -s "$LUA" "http://127.0.0.1:$TPORT" \
            -- acquire 16 "m$chunk" "$per" >"$out" 2>&1 || true
        made=$((made + $(sed -n 's/.* created=\([0-9]*\).*/\1/p' "$out")))
        bytes=$((bytes + $(sed -n 's/.* strbytes=\([0-9]*\).*/\1/p' "$out")))
        log "   chunk $chunk: $made live leases"
    done
    sleep 1
    r1=$(rss_kb "$TPID")
    record mem.leases "$made"
    record mem.rss_before_kb "$r0"
    record mem.rss_after_kb "$r1"
    record mem.per_lease "$(awk -v a="$r0" -v b="$r1" -v n="$made" -v s="$bytes" \
        'BEGIN { printf "%.0f", ((b - a) * 1024 - s) / n }')"
    record mem.str_per_lease "$(awk -v n="$made" -v s="$bytes" 'BEGIN { printf "%.1f", s / n }')"
    log "   RSS after ${r1} kB; name+owner bytes $bytes"
    log "== restart with $made live leases: kill -9, start, time to /readyz 200"
    for run in $(seq 1 "$RUNS"); do
        tn_server_stop t KILL
        t0=$(date +%s%N)
        tn_server_restart t KILL || { log "   WARNING restart: not ready"; break; }
        TPID=${TN_SRV_PID[t]}
        t1=$(date +%s%N)
        ms=$(((t1 - t0) / 1000000))
        record restart.ms "$ms"
        log "   run $run: ready after $ms ms; GET bm1-2-1 -> $(curl -s -o /dev/null -w '%{http_code}' \
            "http://127.0.0.1:$TPORT/v1/leases/bm1-2-1")"
    done
    stop_tenured
}

# ------------------------------------------------------------ materializer
# log_ns FILE MSG: the ts= of the materializer's log line msg="MSG", in ns.
log_ns() {
    local ts
    ts=$(sed -n "s/^ts=\([^ ]*\) .*msg=\"$2\".*/\1/p" "$1" | head -1)
    if [ -n "$ts" ]; then date -d "$ts" +%s%N; fi
}

# One topic of MAT_PARTITIONS partitions, each filled with MAT_RECORDS
# records (tn-produce --gen over MAT_NAMES names, name i in partition i mod
# P, so that every partition gets the same share and stays under the mock
# cluster's limit); then per --batch and run a fresh sink, and three
# figures: records / wall time from exec to exit (start-up included),
# records / time from the "started" log line (sink open, metadata, assign
# done) to the "stopped" one (steady state), and CPU (user + system of the
# materializer, all its threads) per record.
section_mat() {
    local mpid bro run db out t0 t1 adm n s e cpu
    for tool in tn-kafka-mock tn-produce tenure-materializer; do
        [ -x "$BIN/$tool" ] || { log "   mat: $tool not built, skipped"; return 0; }
    done
    "$BIN/tn-kafka-mock" "bench:$MAT_PARTITIONS" >"$WORK/mock.out" 2>"$WORK/mock.err" &
    mpid=$!
    PIDS+=("$mpid")
    for _ in $(seq 1 100); do [ -s "$WORK/mock.out" ] && break; sleep 0.05; done
    bro=$(head -1 "$WORK/mock.out")
    n=$((MAT_RECORDS * MAT_PARTITIONS))
    log "== materializer: $n records (tn-produce --gen, $MAT_NAMES names) into topic bench ($MAT_PARTITIONS partitions) at $bro"
    "$BIN/tn-produce" --brokers "$bro" --topic bench --gen 8 --count "$n" \
        --names "$MAT_NAMES" --partitions "$MAT_PARTITIONS" >/dev/null
    local batch key TIMEFORMAT="%3U %3S"
    for batch in 500 5000; do
        key=mat.b$batch
        for run in $(seq 1 "$RUNS"); do
            db="$WORK/sink.$batch.$run.db"
            out="$WORK/mat.$batch.$run.prom"
            t0=$(date +%s%N)
            if ! { time "$BIN/tenure-materializer" --brokers "$bro" --topic bench \
                --sink "sqlite:$db" --exit-at-end --batch "$batch" \
                --metrics-file "$out" >"$WORK/mat.$run.log" 2>&1; } 2>"$WORK/mat.$run.time"; then
                log "   WARNING mat: failed"
                tail -3 "$WORK/mat.$run.log" >&2
                continue
            fi
            t1=$(date +%s%N)
            adm=$(awk '$1 == "tenure_materializer_admitted_total" { print $2 }' "$out")
            s=$(log_ns "$WORK/mat.$run.log" started)
            e=$(log_ns "$WORK/mat.$run.log" stopped)
            s=${s:-$t0}
            e=${e:-$t1}
            cpu=$(awk -v n="$n" '{ printf "%.2f", ($1 + $2) * 1e6 / n }' "$WORK/mat.$run.time")
            record "$key.records_per_s" "$(awk -v n="$n" -v d=$((t1 - t0)) 'BEGIN { printf "%.0f", n * 1e9 / d }')"
            record "$key.steady_per_s" "$(awk -v n="$n" -v d=$((e - s)) 'BEGIN { printf "%.0f", n * 1e9 / d }')"
            record "$key.startup_ms" "$(((s - t0) / 1000000))"
            record "$key.cpu_us" "$cpu"
            record "$key.admitted_per_s" "$(awk -v n="$adm" -v d=$((e - s)) 'BEGIN { printf "%.0f", n * 1e9 / d }')"
            log "   --batch $batch run $run: $n records, $adm admitted in $(((t1 - t0) / 1000000)) ms (start-up $(((s - t0) / 1000000)) ms, steady $(((e - s) / 1000000)) ms), $cpu µs CPU/record"
        done
    done
    kill "$mpid" 2>/dev/null || true
    wait "$mpid" 2>/dev/null || true
}

# --------------------------------------------------------------------- run
START=$(date +%s)
MACHINE="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), kernel $(uname -r), $(awk '/MemTotal/ { printf "%.1f GB", $2 / 1048576 }' /proc/meminfo)"
log "== machine: $MACHINE, load $(cut -d' ' -f1-3 /proc/loadavg) (shared machine)"
# section NAME ARGS...: runs section_NAME when wanted; a failing section is
# reported and the others still run.
section() {
    local name=$1
    shift
    want "$name" || return 0
    "section_$name" "$@" || log "   WARNING: section $name failed (exit $?)"
}
if [ -z "${BENCH_TABLE:-}" ]; then
    for run in $(seq 1 "$RUNS"); do
        log "== run $run/$RUNS (wrk ${DUR}s per figure)"
        section tenured "$run"
        section redis "$run"
        section zk "$run"
        section etcd "$run"
    done
    section pg
    section latency
    section memory
    section mat
    log "== raw results in $RES (BENCH_TABLE=$RES $0 prints the table again)"
fi
END=$(date +%s)

# ------------------------------------------------------------------- table
fmt() { [ -n "$1" ] && awk -v v="$1" 'BEGIN { if (v >= 100) printf "%.0f", v; else printf "%.2f", v }' || echo "–"; }
ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "–" }' || echo "–"; }
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }

table() {
    local mode conns depth k r c p what
    echo "Medians of $RUNS runs, $(date -u +%Y-%m-%dT%H:%MZ), $MACHINE; load average at the end $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared with other test runs). wrk ${DUR}s per figure, 2 threads, 127.0.0.1."
    echo
    echo "| figure | median | p99 ms | server CPU µs/req | ratio | runs |"
    echo "|---|---|---|---|---|---|"
    for conns in 50 200; do
        for depth in 1 8; do
            for mode in acquire renew cycle; do
                k="tenured.$mode.c$conns.p$depth"
                r=$(median "$k.rps")
                [ -n "$r" ] || continue
                what="tenured $mode, $conns conns"
                [ "$depth" = 8 ] && what="$what, pipelined ×8"
                case $mode in
                acquire) p="vs Redis always $(ratio "$r" "$(median "redis.always.set.c$conns.rps")"), vs Redis default $(ratio "$r" "$(median "redis.default.set.c$conns.rps")")" ;;
                cycle)
                    what="$what (req/s; cycles = half)"
                    p="cycles vs Redis always SET then DEL $(ratio "$(awk -v r="$r" 'BEGIN { print r / 2 }')" "$(median redis.always.cycle2.c50.rps)"), vs one EVAL of both $(ratio "$(awk -v r="$r" 'BEGIN { print r / 2 }')" "$(median redis.always.cycle.c50.rps)")"
                    ;;
                renew) p="vs Redis always SET $(ratio "$r" "$(median "redis.always.set.c$conns.rps")")" ;;
                esac
                row "$what" "$(fmt "$r") req/s" "$(fmt "$(median "$k.p99")")" "$(fmt "$(median "$k.cpu")")" "$p" "$(count "$k.rps")"
            done
        done
    done
    for k in redis.default.set.c50 redis.default.set.c200 redis.always.set.c50 redis.always.set.c200 \
        redis.always.cycle.c50 redis.default.cycle.c50; do
        r=$(median "$k.rps")
        [ -n "$r" ] || continue
        row "$k (redis-benchmark)" "$(fmt "$r") op/s" "" "$(fmt "$(median "$k.cpu")")" "" "$(count "$k.rps")"
    done
    for k in redis.always.cycle2.c50 redis.default.cycle2.c50; do
        r=$(median "$k.rps")
        [ -n "$r" ] || continue
        row "$k (bench/redis-cycle.c: SET NX PX, then DEL)" "$(fmt "$r") cycles/s" "" "$(fmt "$(median "$k.cpu")")" "" "$(count "$k.rps")"
    done
    r=$(median tenured.acquire.c50.p1.rps)
    c=$(median tenured.cycle.c50.p1.rps)
    k=$(median zk.create.rps)
    [ -n "$k" ] && row "ZooKeeper ephemeral create, 50 in flight" "$(fmt "$k") op/s" "" "" "tenured acquire / ZK $(ratio "$r" "$k")" "$(count zk.create.rps)"
    k=$(median zk.cycle.rps)
    [ -n "$k" ] && row "ZooKeeper create+delete, 50 in flight" "$(fmt "$k") cycles/s" "" "" "tenured cycles / ZK $(ratio "$(awk -v c="${c:-0}" 'BEGIN { print c / 2 }')" "$k")" "$(count zk.cycle.rps)"
    k=$(median etcd.txn.rps)
    [ -n "$k" ] && row "etcd lock txn (HTTP gateway), 50 conns" "$(fmt "$k") txn/s" "" "" "tenured acquire / etcd $(ratio "$r" "$k")" "$(count etcd.txn.rps)"
    k=$(median pg.pgbench.rps)
    [ -n "$k" ] && row "pgbench one-statement acquire, 50 clients" "$(fmt "$k") stmt/s" "" "" "tenured (embedded) / pgbench $(ratio "$r" "$k")" "$(count pg.pgbench.rps)"
    k=$(median pg.tenured.rps)
    [ -n "$k" ] && row "tenured --store postgresql, 50 conns" "$(fmt "$k") req/s" "" "" "vs pgbench (median of per-run ratios) $(fmt "$(median pg.ratio)")" "$(count pg.tenured.rps)"
    k=$(median half.rps)
    [ -n "$k" ] && row "tenured acquire at about half of peak, 50 conns" "$(fmt "$k") req/s" "$(fmt "$(median half.p99)")" "" "" "$(count half.rps)"
    k=$(median mem.per_lease)
    [ -n "$k" ] && row "memory per live lease beyond name+owner ($(median mem.leases) leases)" "$k B" "" "" "RSS $(median mem.rss_before_kb) → $(median mem.rss_after_kb) kB, strings $(median mem.str_per_lease) B/lease" "1"
    k=$(median restart.ms)
    [ -n "$k" ] && row "restart (kill -9) to /readyz 200 with $(median mem.leases) leases" "$k ms" "" "" "" "$(count restart.ms)"
    for k in 500 5000; do
        r=$(median "mat.b$k.steady_per_s")
        [ -n "$r" ] && row "materializer → SQLite sink, offsets committed, --batch $k, steady state ($MAT_PARTITIONS × $MAT_RECORDS records)" "$(fmt "$r") records/s" "" "$(median "mat.b$k.cpu_us") µs/record" "admitted $(fmt "$(median "mat.b$k.admitted_per_s")")/s; exec to exit $(fmt "$(median "mat.b$k.records_per_s")")/s, start-up $(median "mat.b$k.startup_ms") ms" "$(count "mat.b$k.steady_per_s")"
    done
    echo
    echo "Whole suite: $((END - START)) s."
}

echo
table | tee "${BENCH_OUT:-/dev/null}"
