#!/usr/bin/env bash
# Clients given two tenured over one PostgreSQL (docs/HA.md, "Clients"):
# 1. libtenure's keepalive thread, tenure run and the Python client's
#    hold() each keep their lease across the kill -9 of the instance they
#    talked to: the next renew lands on the other one within the TTL, with
#    the same token, and the lease is never lost.
# 2. An acquire whose grant was committed but answered 503 (a relay in
#    front of the first instance throws the answer away): the CLI and the
#    Python client move on to the second instance, which answers that same
#    grant (the request_id every acquire carries), not 409 held by its own
#    owner; one grant in the ledger.
# 3. An acquire whose answer never came (the relay closes the connection):
#    not sent again anywhere; the CLI reports an error, and the grant is
#    learned from GET and the history: one grant, by that owner.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema "t613_$$"
pg_start_instance 0 "$PG_URL"
pg_start_instance 1 "$PG_URL"
both="${URLS[0]},${URLS[1]}"
PY=${TN_PYTHON3:-/usr/bin/python3}
export PYTHONPATH=$TN_SRC/python

kill_first() { # the instance every client above talks to first; dead
    pg_kill_instance 0 # (and reaped) before MONO_KILL is taken
    MONO_KILL=$(mono)
}
# first_renew_after FILE MS: the first "renewed" log line after MS.
first_renew_after() {
    sed -n 's/^log at=\([0-9]*\) renewed lease.*/\1/p' "$1" | awk -v k="$2" '$1 > k { print; exit }'
}

# 1a. libtenure's keepalive thread (TTL 2 s, renewed every 2/3 s).
"$PROBE" keep "$both" ha:keep 2000 6000 >"$T/probe" 2>&1 &
P=$!
TN_CLIENT_PIDS+=("$P")
wait_grep "$T/probe" '^acquired' 1 10 || fail "probe did not acquire: $(cat "$T/probe")"
tok=$(kv "$(grep '^acquired' "$T/probe")" token)
sleep 1
kill_first
wait_exit "$P" 20 || fail "probe did not finish"
[ "$RC" = 0 ] || fail "probe failed: $(cat "$T/probe")"
grep -q '^held_until_hold=1' "$T/probe" || fail "lease not held to the end: $(cat "$T/probe")"
[ "$(kv "$(grep '^end ' "$T/probe")" reason)" = released ] || fail "end: $(cat "$T/probe")"
at=$(first_renew_after "$T/probe" "$MONO_KILL")
[ -n "$at" ] || fail "no renew after the kill: $(cat "$T/probe")"
# Within the TTL: held to the end means no renew came too late (the
# keepalive would have reported the lease lost); the delay is printed.
n=$(sed -n 's/^log at=\([0-9]*\) renewed lease.*token=\([0-9]*\).*/\2/p' "$T/probe" | sort -u)
[ "$n" = "$tok" ] || fail "renews with other tokens than $tok: $n"
pass "keepalive thread: renewed on the other instance $((at - MONO_KILL)) ms after the kill (TTL 2000), same token, held to the end"
pg_restart_instance 0
tn_wait_ready "${URLS[0]}" || fail "instance 0 did not come back"

# 1b. tenure run: it would exit 4 and kill the command had it lost the lease.
"$TENURE" --server "$both" run -v ha:run --ttl 2s -- \
    sh -c 'echo "$TENURE_TOKEN" >'"$T/run.tok"'; sleep 5' >"$T/run.out" 2>"$T/run.err" &
R=$!
TN_CLIENT_PIDS+=("$R")
pg_wait_for 10 test -s "$T/run.tok" || fail "tenure run did not start its command: $(cat "$T/run.err")"
sleep 1
kill_first
wait_exit "$R" 20 || fail "tenure run did not exit"
[ "$RC" = 0 ] || fail "tenure run exited $RC after the kill: $(cat "$T/run.err")"
expect_exit 5 "ha:run free after the command ended" \
    "$TENURE" --server "${URLS[1]}" --json get ha:run
pass "tenure run: kept its lease across the kill, released at the end"
pg_restart_instance 0
tn_wait_ready "${URLS[0]}" || fail "instance 0 did not come back"

# 1c. The Python client's hold(): told to kill between two renews.
"$PY" - "$both" "$T/py.kill" "$T/py.killed" >"$T/py.out" 2>&1 <<'PYEOF' &
import os, sys, time
from tenure import Client
urls, ask, done = sys.argv[1].split(","), sys.argv[2], sys.argv[3]
with Client(urls, owner_id="py") as c:
    with c.hold("ha:py", ttl_ms=2000) as lease:
        tok = lease.token
        open(ask, "w").close()
        while not os.path.exists(done):
            time.sleep(0.02)
        time.sleep(4)  # two TTLs after the kill
        lease.ensure_held()
        info = c.get("ha:py")
        print(f"token={tok} after={info.token} held={lease.is_held()}")
PYEOF
PYP=$!
TN_CLIENT_PIDS+=("$PYP")
pg_wait_for 10 test -e "$T/py.kill" || fail "python did not acquire: $(cat "$T/py.out")"
sleep 0.5
kill_first
touch "$T/py.killed"
wait_exit "$PYP" 20 || fail "python did not finish"
[ "$RC" = 0 ] || fail "python hold lost its lease across the kill: $(cat "$T/py.out")"
line=$(grep '^token=' "$T/py.out")
[ "$(kv "$line" token)" = "$(kv "$line" after)" ] && [ "$(kv "$line" held)" = True ] ||
    fail "python: $line"
pass "python hold(): kept across the kill, same token ($line)"
pg_restart_instance 0
tn_wait_ready "${URLS[0]}" || fail "instance 0 did not come back"

# 2. Committed, answered 503: the next instance answers the same grant.
relay() { # MODE: a lost-reply relay in front of instance 0; sets RELAY
    local port
    port=$(tn_free_port)
    "$PY" "$TN_SRC/tests/tools/ha/lost_reply_proxy.py" --mode "$1" \
        --pidfile "$T/relay.$1" "$port" "${PORTS[0]}" >>"$T/relay.log" 2>&1 &
    TN_PIDS+=($!)
    pg_wait_for 10 test -s "$T/relay.$1" || fail "relay did not start"
    RELAY="http://127.0.0.1:$port"
}
grants_of() { # NAME: grants in the ledger
    curl -s "${URLS[1]}/v1/leases/$1/history" | grep -o '"token":' | wc -l
}
relay 503
set +e
"$TENURE" --server "$RELAY,${URLS[1]}" --json acquire ha:r503 --ttl 30s --owner o1 >"$T/a503" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || fail "CLI acquire answered 503 after its commit: exit $rc: $(cat "$T/a503")"
BODY=$(cat "$T/a503")
tok=$(jget token)
BODY=$("$TENURE" --server "${URLS[1]}" --json get ha:r503)
expect_field token "$tok" "the grant the CLI got is the live one"
[ "$(grants_of ha:r503)" = 1 ] || fail "ha:r503 was granted $(grants_of ha:r503) times"
"$PY" - "$RELAY,${URLS[1]}" >"$T/py503" 2>&1 <<'PYEOF' || fail "python acquire answered 503 after its commit: $(cat "$T/py503")"
import sys
from tenure import Client
with Client(sys.argv[1].split(","), owner_id="o2") as c:
    lease = c.acquire("ha:p503", ttl_ms=30000)
    print(f"token={lease.token} live={c.get('ha:p503').token}")
PYEOF
line=$(cat "$T/py503")
[ "$(kv "$line" token)" = "$(kv "$line" live)" ] || fail "python: $line"
[ "$(grants_of ha:p503)" = 1 ] || fail "ha:p503 was granted $(grants_of ha:p503) times"
pass "committed but answered 503: the CLI and Python get that grant from the other instance (token $tok), one grant each"

# 3. The answer never came: no retry, the grant is found with GET.
relay drop
set +e
"$TENURE" --server "$RELAY,${URLS[1]}" acquire ha:drop --ttl 30s --owner o3 >"$T/adrop" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "an acquire without answer must be an error (outcome unknown), exit $rc: $(cat "$T/adrop")"
BODY=$("$TENURE" --server "${URLS[1]}" --json get ha:drop) || fail "the grant without answer is not live"
expect_field owner_id o3 "the unanswered grant"
[ "$(grants_of ha:drop)" = 1 ] || fail "an acquire without answer was sent again: $(grants_of ha:drop) grants"
"$PY" - "$RELAY,${URLS[1]}" "${URLS[1]}" >"$T/pydrop" 2>&1 <<'PYEOF' || fail "python: $(cat "$T/pydrop")"
import sys
from tenure import Client, Error
with Client(sys.argv[1].split(","), owner_id="o4") as c:
    try:
        c.acquire("ha:pdrop", ttl_ms=30000)
        print("granted")
    except Error as e:
        with Client(sys.argv[2]) as other:
            print(f"error={type(e).__name__} owner={other.get('ha:pdrop').owner_id}")
PYEOF
grep -q '^error=.* owner=o4$' "$T/pydrop" || fail "python, no answer: $(cat "$T/pydrop")"
[ "$(grants_of ha:pdrop)" = 1 ] || fail "python sent an unanswered acquire again: $(grants_of ha:pdrop) grants"
pass "no answer: an error, not sent again; the grant is learned from GET (CLI and Python: $(cat "$T/pydrop"))"
