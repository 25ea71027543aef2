#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# local-cluster.sh: the Patroni recipe of docs/HA.md on one host, for
# trying it and for the tests: one etcd (v2 API enabled) and PostgreSQL 15
# nodes under Patroni 3.0.2, each node from patroni.yml.in beside this
# script, on its own ports and data directory.
#   local-cluster.sh up DIR BASE_PORT [N]   etcd + N nodes (default 3), wait
#                                           until a leader has a synchronous
#                                           standby; ports from BASE_PORT
#   local-cluster.sh etcd DIR CLIENT_PORT PEER_PORT   start etcd only
#   local-cluster.sh node DIR NAME PG_PORT API_PORT ETCD_HOSTS [PG_CONNECT]
#                                           render DIR/NAME/patroni.yml and
#                                           start that node's Patroni
#   local-cluster.sh wait DIR API_PORT [SECONDS]   a leader with a
#                                           synchronous standby (or, when
#                                           synchronous_mode is off, any
#                                           running replica)
#   local-cluster.sh cluster API_PORT       the cluster as Patroni sees it
#   local-cluster.sh down DIR               stop every node and etcd
# Settings (environment, defaults in brackets): TN_PATRONI_TTL [10],
# _LOOP_WAIT [1], _RETRY_TIMEOUT [4], _SYNC_MODE [true], _SYNC_STRICT
# [true], _SYNC_COUNT [1], _MAX_LAG [1048576], _USE_SLOTS [false],
# _WATCHDOG [off],
# _AUTH [trust], _SCOPE [tenure].  Runs Patroni and PostgreSQL as the
# postgres user when invoked as root.  Prints the ports it used for up:
#   etcd=PORT node=NAME:PG_PORT:API_PORT ...
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bindir=/usr/lib/postgresql/15/bin

as_pg() {
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=postgres --regid=postgres --init-groups "$@"
    else
        "$@"
    fi
}

own_dir() { # DIR: a directory the postgres user can use
    mkdir -p "$1"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$1"; fi
}

start_etcd() { # DIR CLIENT PEER
    local d=$1/etcd
    mkdir -p "$d"
    etcd --name e1 --data-dir "$d/data" \
        --listen-client-urls "http://127.0.0.1:$2" \
        --advertise-client-urls "http://127.0.0.1:$2" \
        --listen-peer-urls "http://127.0.0.1:$3" \
        --initial-advertise-peer-urls "http://127.0.0.1:$3" \
        --initial-cluster "e1=http://127.0.0.1:$3" \
        --enable-v2=true >>"$d/etcd.log" 2>&1 &
    echo $! >"$d/pid"
    for _ in $(seq 1 100); do
        curl -sf "http://127.0.0.1:$2/health" >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "local-cluster: etcd did not start: $(tail -3 "$d/etcd.log")" >&2
    return 1
}

render() { # NAME PG_PORT API_PORT ETCD_HOSTS PG_CONNECT DIR
    local n=$1 d=$6/$1
    local proxies=false
    [ -n "${TN_PATRONI_ETCD_PROXIES:-}" ] && proxies=$TN_PATRONI_ETCD_PROXIES
    sed -e "s|@SCOPE@|${TN_PATRONI_SCOPE:-tenure}|" \
        -e "s|@NAME@|$n|" \
        -e "s|@API_LISTEN@|127.0.0.1:$3|" -e "s|@API_CONNECT@|127.0.0.1:$3|" \
        -e "s|@ETCD_HOSTS@|$4|" -e "s|@ETCD_PROXIES@|$proxies|" \
        -e "s|@TTL@|${TN_PATRONI_TTL:-10}|" \
        -e "s|@LOOP_WAIT@|${TN_PATRONI_LOOP_WAIT:-1}|" \
        -e "s|@RETRY_TIMEOUT@|${TN_PATRONI_RETRY_TIMEOUT:-4}|" \
        -e "s|@SYNC_MODE@|${TN_PATRONI_SYNC_MODE:-true}|" \
        -e "s|@SYNC_STRICT@|${TN_PATRONI_SYNC_STRICT:-true}|" \
        -e "s|@SYNC_COUNT@|${TN_PATRONI_SYNC_COUNT:-1}|" \
        -e "s|@MAX_LAG@|${TN_PATRONI_MAX_LAG:-1048576}|" \
        -e "s|@USE_SLOTS@|${TN_PATRONI_USE_SLOTS:-false}|" \
        -e "s|@CLIENT_NET@|127.0.0.1/32|" \
        -e "s|@AUTH_METHOD@|${TN_PATRONI_AUTH:-trust}|" \
        -e "s|@POST_BOOTSTRAP@|$here/post_bootstrap.sh|" \
        -e "s|@PG_LISTEN@|127.0.0.1:$2|" -e "s|@PG_CONNECT@|$5|" \
        -e "s|@DATA_DIR@|$d/data|" -e "s|@PGPASS@|$d/pgpass|" \
        -e "s|@SUPERUSER_PASSWORD@|local-superuser|" \
        -e "s|@REPLICATION_PASSWORD@|local-replicator|" \
        -e "s|@REWIND_PASSWORD@|local-rewind|" \
        -e "s|@SOCKET_DIR@|$d|" \
        -e "s|@WATCHDOG@|${TN_PATRONI_WATCHDOG:-off}|" \
        "$here/patroni.yml.in"
}

start_node() { # DIR NAME PG_PORT API_PORT ETCD_HOSTS [PG_CONNECT]
    local dir=$1 n=$2 d=$1/$2
    own_dir "$dir"
    own_dir "$d"
    render "$n" "$3" "$4" "$5" "${6:-127.0.0.1:$3}" "$dir" >"$d/patroni.yml"
    # one simple command in the background: $! is Patroni itself (setpriv
    # and env exec it), so that signals reach it
    if [ "$(id -u)" -eq 0 ]; then
        setpriv --reuid=postgres --regid=postgres --init-groups \
            env PATH="$bindir:/usr/bin:/bin" HOME="$d" \
            /usr/bin/patroni "$d/patroni.yml" >>"$d/patroni.log" 2>&1 &
    else
        env PATH="$bindir:/usr/bin:/bin" HOME="$d" \
            /usr/bin/patroni "$d/patroni.yml" >>"$d/patroni.log" 2>&1 &
    fi
    echo $! >"$d/patroni.pid"
}

cluster() { # API_PORT: members as "name role state" lines
    curl -sf --max-time "${TN_PATRONI_CURL_TIMEOUT:-2}" "http://127.0.0.1:$1/cluster" | /usr/bin/python3 -c '
import json, sys
try:
    members = json.load(sys.stdin).get("members", [])
except ValueError:
    sys.exit(1)
for m in members:
    print(m["name"], m["role"], m.get("state", "?"), m.get("port", "?"))'
}

wait_ready() { # DIR API_PORT SECONDS
    local want=sync_standby
    [ "${TN_PATRONI_SYNC_MODE:-true}" = true ] || want=replica
    local end=$(($(date +%s) + $3)) c
    while [ "$(date +%s)" -lt "$end" ]; do
        c=$(cluster "$2" 2>/dev/null || true)
        if grep -q ' leader running' <<<"$c" && grep -q " $want " <<<"$c"; then
            return 0
        fi
        sleep 0.2
    done
    echo "local-cluster: no leader with a $want within $3 s:" >&2
    cluster "$2" >&2 || true
    return 1
}

stop_all() { # DIR
    local f pid
    for f in "$1"/*/patroni.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill -CONT "$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
    for f in "$1"/*/patroni.pid; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -9 "$pid" 2>/dev/null || true
        rm -f "$f"
    done
    for f in "$1"/*/data/postmaster.pid; do
        [ -f "$f" ] || continue
        as_pg "$bindir/pg_ctl" -D "${f%/postmaster.pid}" -m immediate stop >/dev/null 2>&1 || true
    done
    if [ -f "$1/etcd/pid" ]; then
        kill -9 "$(cat "$1/etcd/pid")" 2>/dev/null || true
        rm -f "$1/etcd/pid"
    fi
}

cmd=${1:-}
case "$cmd" in
up)
    dir=$2 base=$3 n=${4:-3}
    mkdir -p "$dir"
    start_etcd "$dir" "$base" $((base + 1))
    line="etcd=$base"
    for i in $(seq 1 "$n"); do
        start_node "$dir" "n$i" $((base + 10 + i)) $((base + 20 + i)) "127.0.0.1:$base"
        line+=" node=n$i:$((base + 10 + i)):$((base + 20 + i))"
    done
    wait_ready "$dir" $((base + 21)) 120
    echo "$line"
    ;;
etcd) start_etcd "$2" "$3" "$4" ;;
node) start_node "$2" "$3" "$4" "$5" "$6" "${7:-}" ;;
wait) wait_ready "$2" "$3" "${4:-120}" ;;
cluster) cluster "$2" ;;
down) stop_all "$2" ;;
*)
    sed -n '3,26p' "$0" >&2
    exit 2
    ;;
esac
