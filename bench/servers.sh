# SPDX-License-Identifier: MIT
# Sourced after bench/lib.sh by the scripts that start the peers (the
# bench suite and compare/run.sh): the one way each peer is started in its
# own folder on a given port.  Each appends the server's PID to PIDS (so
# lib.sh's cleanup kills it), sets SRV_PID, and returns once the server
# answers (1 if it exited, e.g. on a port taken meanwhile, or never did).
#   start_redis DIR PORT [redis-server args...]
#   start_zookeeper DIR PORT TICK_MS      (sessions from 2 to 20 ticks)
#   start_etcd DIR CLIENT_PORT PEER_PORT [etcd args...]

# srv_wait TRIES CMD...: until CMD succeeds (0), or the server started
# last (SRV_PID) exits or TRIES times 50 ms pass (1).
srv_wait() {
    local tries=$1
    shift
    for _ in $(seq 1 "$tries"); do
        "$@" && return 0
        kill -0 "$SRV_PID" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}
redis_up() { redis-cli -p "$1" ping 2>/dev/null | grep -q PONG; }
zookeeper_up() {
    [ "$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && echo ruok >&3 && timeout 1 cat <&3) 2>/dev/null)" = imok ]
}
etcd_up() { curl -s "http://127.0.0.1:$1/health" 2>/dev/null | grep -q true; }

start_redis() {
    local dir=$1 port=$2
    shift 2
    mkdir -p "$dir"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" \
        --daemonize no "$@" >"$dir/log" 2>&1 &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    srv_wait 200 redis_up "$port"
}

start_zookeeper() {
    local dir=$1 port=$2 tick=$3
    mkdir -p "$dir/data"
    printf 'tickTime=%s\ndataDir=%s/data\nclientPort=%s\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\n' \
        "$tick" "$dir" "$port" >"$dir/zoo.cfg"
    printf 'log4j.rootLogger=WARN, C\nlog4j.appender.C=org.apache.log4j.ConsoleAppender\nlog4j.appender.C.layout=org.apache.log4j.PatternLayout\n' \
        >"$dir/log4j.properties"
    java -cp "$dir:/usr/share/java/zookeeper.jar" -Dzookeeper.log.dir="$dir" \
        org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" >"$dir/log" 2>&1 &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    srv_wait 600 zookeeper_up "$port"
}

start_etcd() {
    local dir=$1 cport=$2 pport=$3
    shift 3
    mkdir -p "$dir"
    etcd --name b --data-dir "$dir/data" --listen-client-urls "http://127.0.0.1:$cport" \
        --advertise-client-urls "http://127.0.0.1:$cport" \
        --listen-peer-urls "http://127.0.0.1:$pport" \
        --initial-advertise-peer-urls "http://127.0.0.1:$pport" \
        --initial-cluster "b=http://127.0.0.1:$pport" --log-level error "$@" >"$dir/log" 2>&1 &
    SRV_PID=$!
    PIDS+=("$SRV_PID")
    srv_wait 200 etcd_up "$cport"
}
