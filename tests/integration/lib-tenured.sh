#!/usr/bin/env bash
# The one way a shell script starts tenured for a test, the comparison
# (compare/run.sh) or a bench (bench/lib.sh): on a free loopback port
# below the kernel's range for outgoing connections, with its data and
# its log in a folder of the caller's, ready once its own log says it
# listens on that port and /readyz answers 200 (so an answer from another
# process that holds the port is never taken for ours; a port taken
# between the pick and the bind is replaced by another).  Sourcing it sets
# no option and no trap: the caller's exit handler calls
# tn_server_kill_all (lib.sh and bench/lib.sh do).
#
#   tn_server_start [OPTIONS] [-- tenured args...]
#       -i ID      the instance (default "main"); its state is in
#                  TN_SRV_PID[ID] TN_SRV_PORT[ID] TN_SRV_URL[ID]
#                  TN_SRV_DATA[ID] TN_SRV_LOG[ID]
#       -d DIR     data dir (default $TN_SERVER_WORK/data-ID)
#       -l FILE    log, appended to (default $TN_SERVER_WORK/tenured-ID.log)
#       -p PORT    this port, no other (default: a free one)
#       -P PORT    try this port first, then free ones
#       -H HOST    listen on HOST (default 127.0.0.1; readiness is asked
#                  there when it is a 127.x address, else on 127.0.0.1)
#       -c CAFILE  the server speaks HTTPS (--tls-cert): ask with this CA
#       -N         no --listen/--data-dir: the arguments (a --config file,
#                  TENURE_* variables in TN_WRAP) name them; needs -p
#       -n         do not wait (an instance meant to refuse, or one the
#                  caller waits for with tn_server_wait)
#       -w SECS    wait at most SECS for readiness (default 30)
#     Returns 1, with the reason in TN_SERVER_ERR, when it did not become
#     ready (it exited, or never answered).
#   tn_server_wait ID [SECS]     until ready (after -n); 1 if it exited
#   tn_server_stop ID [SIGNAL]   send SIGNAL (TERM) and wait; the exit
#                                status is in TN_SERVER_RC
#   tn_server_kill ID            SIGCONT, SIGKILL, wait
#   tn_server_restart [-n] ID [SIGNAL [args...]]  stop with SIGNAL (KILL)
#                                and start again on the same port and data
#                                dir, with the same options and arguments
#                                (or with ARGS when given); -n: no wait
#   tn_server_alive ID           the process is running
#   tn_server_log ID [LINES]     the last LINES (20) lines of its log
#   tn_server_kill_all           kill every instance still running
#   tn_server_sanitizer_reports  print the sanitizer reports found in any
#                                instance's log (none: prints nothing)
#   tn_free_port                 a free loopback port (see above)
#
# Read before each start: TN_SERVER_BIN (the tenured to run; default
# $TN_BIN/tenured), TN_SERVER_WORK (the folder for data dirs and logs),
# TN_SERVER_STORE (a --store URL given to every instance whose arguments
# name none: a test run on either store sets it once, see tn_use_store in
# lib.sh), TN_WRAP (a command prefix: env VAR=..., faketime),
# TN_SERVER_POLL (seconds between two looks while it starts: 0.05).

declare -gA TN_SRV_PID=() TN_SRV_PORT=() TN_SRV_URL=() TN_SRV_DATA=() \
    TN_SRV_LOG=() TN_SRV_ARGS=() TN_SRV_HOST=() TN_SRV_CA=() TN_SRV_SINCE=() \
    TN_SRV_NOLISTEN=() TN_SRV_NOWAIT=() TN_SRV_WAITS=()
TN_SERVER_ERR=
TN_SERVER_RC=0

# tn_free_port: a random port in [10000, start of the ephemeral range)
# that no TCP socket uses in any state, as source or as destination.
tn_free_port() {
    local lo p
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    [ "${lo:-0}" -gt 12000 ] || lo=32768
    for _ in $(seq 1 200); do
        p=$((10000 + RANDOM % (lo - 10000)))
        ss -tanH "( sport = :$p or dport = :$p )" 2>/dev/null | grep -q . ||
            { echo "$p"; return 0; }
    done
    return 1
}

# tn__ready_once ID SINCE: 0 ready, 1 not yet, 2 exited.  SINCE is the
# log's size before this start: only this run's lines count.
tn__ready_once() {
    local id=$1 since=$2 code curl_tls=()
    kill -0 "${TN_SRV_PID[$id]}" 2>/dev/null || return 2
    [ -n "${TN_SRV_CA[$id]:-}" ] && curl_tls=(--cacert "${TN_SRV_CA[$id]}")
    # Our own process bound the port (its log says so, unless a
    # --log-level above info hides the line: then being alive after a 200
    # has to do).
    if ! [[ " ${TN_SRV_ARGS[$id]} " =~ --log-level[=\ ]+(warn|error) ]] &&
        ! tail -c +"$((since + 1))" "${TN_SRV_LOG[$id]}" |
        grep -q "msg=\"listening\" .*port=${TN_SRV_PORT[$id]} "; then
        return 1
    fi
    code=$(curl -s --max-time 2 "${curl_tls[@]}" -o /dev/null -w '%{http_code}' \
        "${TN_SRV_URL[$id]}/readyz" 2>/dev/null) || true
    [ "$code" = 200 ] || return 1
    kill -0 "${TN_SRV_PID[$id]}" 2>/dev/null || return 2
    return 0
}

tn_server_wait() {
    local id=$1 secs=${2:-30} poll=${TN_SERVER_POLL:-0.05} i rc
    for i in $(seq 1 "$(awk -v s="$secs" -v p="$poll" 'BEGIN { print int(s / p) }')"); do
        rc=0
        tn__ready_once "$id" "${TN_SRV_SINCE[$id]:-0}" || rc=$?
        case $rc in
        0) return 0 ;;
        2)
            wait "${TN_SRV_PID[$id]}" 2>/dev/null || true
            TN_SERVER_ERR="tenured ($id) exited: $(tail -5 "${TN_SRV_LOG[$id]}" 2>/dev/null)"
            return 1
            ;;
        esac
        sleep "$poll"
    done
    TN_SERVER_ERR="tenured ($id) was not ready on ${TN_SRV_URL[$id]} within $secs s"
    return 1
}

# tn__quote ARGS...: ARGS as one string that eval gives back.
tn__quote() { [ $# = 0 ] || printf '%q ' "$@"; }

# tn__spawn ID: start the process of instance ID as recorded.
tn__spawn() {
    local id=$1 args=() nolisten=${TN_SRV_NOLISTEN[$1]:-0}
    eval "args=(${TN_SRV_ARGS[$id]})"
    if [ -n "${TN_SERVER_STORE:-}" ] && [[ " ${args[*]} " != *" --store "* ]]; then
        args=(--store "$TN_SERVER_STORE" "${args[@]}")
    fi
    if [ "$nolisten" = 0 ]; then
        mkdir -p "${TN_SRV_DATA[$id]}"
        args=(--listen "${TN_SRV_HOST[$id]}:${TN_SRV_PORT[$id]}"
            --data-dir "${TN_SRV_DATA[$id]}" "${args[@]}")
    fi
    TN_SRV_SINCE[$id]=$(stat -c %s "${TN_SRV_LOG[$id]}" 2>/dev/null || echo 0)
    # shellcheck disable=SC2086 # TN_WRAP is a command prefix, split on purpose
    ${TN_WRAP:-} "${TN_SERVER_BIN:-$TN_BIN/tenured}" "${args[@]}" \
        >>"${TN_SRV_LOG[$id]}" 2>&1 &
    TN_SRV_PID[$id]=$!
}

tn_server_start() {
    local id=main data="" log="" port="" host=127.0.0.1 ca="" nolisten=0 \
        nowait=0 secs=30 first="" try scheme=http
    OPTIND=1
    while getopts "i:d:l:p:P:H:c:Nnw:" o; do
        case $o in
        i) id=$OPTARG ;; d) data=$OPTARG ;; l) log=$OPTARG ;;
        p) port=$OPTARG ;; P) first=$OPTARG ;; H) host=$OPTARG ;;
        c) ca=$OPTARG ;;
        N) nolisten=1 ;; n) nowait=1 ;; w) secs=$OPTARG ;;
        *) TN_SERVER_ERR="tn_server_start: bad option"; return 1 ;;
        esac
    done
    shift $((OPTIND - 1)) # getopts took the "--"
    local work=${TN_SERVER_WORK:?TN_SERVER_WORK is not set}
    TN_SRV_DATA[$id]=${data:-$work/data-$id}
    TN_SRV_LOG[$id]=${log:-$work/tenured-$id.log}
    TN_SRV_HOST[$id]=$host TN_SRV_CA[$id]=$ca TN_SRV_NOLISTEN[$id]=$nolisten
    TN_SRV_NOWAIT[$id]=$nowait TN_SRV_WAITS[$id]=$secs
    TN_SRV_ARGS[$id]=$(tn__quote "$@")
    [ -n "$ca" ] && scheme=https
    local ask=127.0.0.1 # where readiness is asked: loopback, by number
    [[ $host =~ ^127\.[0-9.]+$ ]] && ask=$host
    for try in 1 2 3 4 5; do
        TN_SRV_PORT[$id]=${port:-${first:-$(tn_free_port)}}
        first=""
        TN_SRV_URL[$id]="$scheme://$ask:${TN_SRV_PORT[$id]}"
        tn__spawn "$id"
        [ "$nowait" = 1 ] && return 0
        tn_server_wait "$id" "$secs" && return 0
        # A port taken between the pick and the bind: another one.
        [ -z "$port" ] && tail -c +"$((${TN_SRV_SINCE[$id]} + 1))" "${TN_SRV_LOG[$id]}" |
            grep -q 'cannot listen on' || break
        tn_server_kill "$id"
    done
    tn_server_kill "$id"
    return 1
}

tn_server_alive() { [ -n "${TN_SRV_PID[$1]:-}" ] && kill -0 "${TN_SRV_PID[$1]}" 2>/dev/null; }

tn_server_stop() {
    local id=$1 sig=${2:-TERM} pid=${TN_SRV_PID[$1]:-}
    TN_SERVER_RC=0
    [ -n "$pid" ] || return 0
    kill "-$sig" "$pid" 2>/dev/null || true
    [ "$sig" = KILL ] || kill -CONT "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || TN_SERVER_RC=$?
    TN_SRV_PID[$id]=
}

tn_server_kill() {
    local pid=${TN_SRV_PID[$1]:-}
    [ -n "$pid" ] || return 0
    kill -CONT "$pid" 2>/dev/null || true
    tn_server_stop "$1" KILL
}

tn_server_restart() {
    local nowait=0
    [ "$1" = -n ] && { nowait=1; shift; }
    local id=$1 sig=${2:-KILL}
    [ "${TN_SRV_NOWAIT[$id]:-0}" = 1 ] && nowait=1
    tn_server_stop "$id" "$sig"
    if [ $# -gt 2 ]; then
        shift 2
        TN_SRV_ARGS[$id]=$(tn__quote "$@")
    fi
    tn__spawn "$id"
    [ "$nowait" = 1 ] && return 0
    tn_server_wait "$id" "${TN_SRV_WAITS[$id]}"
}

tn_server_log() { tail -"${2:-20}" "${TN_SRV_LOG[$1]}" 2>/dev/null || true; }

tn_server_kill_all() {
    local id
    for id in "${!TN_SRV_PID[@]}"; do
        tn_server_kill "$id"
    done
}

tn_server_sanitizer_reports() {
    local id
    for id in "${!TN_SRV_LOG[@]}"; do
        grep -hE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' \
            "${TN_SRV_LOG[$id]}" 2>/dev/null | head -5 | sed "s/^/tenured ($id): /" || true
    done
}
