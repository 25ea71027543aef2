#!/usr/bin/env bash
# GET /v1/events on the PostgreSQL store, two tenured instances on one
# database: changes made on A reach watchers on A and on B (LISTEN/NOTIFY)
# as acquired/released/expired/revoked, in commit order, with the floor
# after each event; an expiry nobody acquires over is announced once by
# the sweep of one instance; an expiry taken over by an acquire is
# announced before it.  Cutting the stream (the LISTEN connection killed
# in PostgreSQL) changes nothing about tokens, floors or renewals, and
# the listener reconnects.  A stream open across the cut gets a reset
# once the listener is back (what happened meanwhile was not heard), and
# a Last-Event-ID from before the cut is answered with a reset too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema t607
pg_start_instance 1 "$PG_URL" --event-heartbeat-ms 200
pg_start_instance 2 "$PG_URL" --event-heartbeat-ms 200
A=${URLS[1]}
B=${URLS[2]}

curl -sN --max-time 4 "$A/v1/events?prefix=ev:" >"$T/streamA" &
wa=$!
curl -sN --max-time 4 "$B/v1/events?prefix=ev:" >"$T/streamB" &
wb=$!
sleep 0.4
URL=$A
acquire "ev:1" a 200
expect_code 201 "acquire ev:1"
t1=$(jget token)
acquire "zz:1" a 5000 # another prefix: never in the stream
sleep 0.6             # ev:1 expires; a sweep announces it
acquire "ev:1" b 5000
t2=$(jget token)
s2=$(jget lease_secret)
release "ev:1" "$t2" "$s2"
expect_code 204 "release"
acquire "ev:1" c 5000
t3=$(jget token)
rq DELETE "/v1/leases/ev:1?force=true" -
expect_code 204 "force release"
acquire "ev:2" d 150
t4=$(jget token)
sleep 0.4 # ev:2 expires and is taken over before any sweep may run
acquire "ev:2" e 5000
t5=$(jget token)
wait "$wa" || true
wait "$wb" || true

summary() { # FILE: type:owner:token:floor ...
    grep '^data: ' "$1" | sed 's/^data: //' | while read -r line; do
        for f in type owner_id token floor; do
            printf '%s' "$line" | "$TN_BIN/tn-json-get" "$f"
            printf ':'
        done
        printf ' '
    done
}
want="acquired:a:$t1:$t1: expired:a:$t1:$t1: acquired:b:$t2:$t2: released:b:$t2:$t2: acquired:c:$t3:$t3: revoked:c:$t3:$t3: acquired:d:$t4:$t4: expired:d:$t4:$t4: acquired:e:$t5:$t5: "
gotB=$(summary "$T/streamB")
[ "$gotB" = "$want" ] || fail "events on B: '$gotB', want '$want': $(cat "$T/streamB")"
gotA=$(summary "$T/streamA")
[ "$gotA" = "$want" ] || fail "events on A: '$gotA', want '$want'"
for f in "$T/streamA" "$T/streamB"; do
    prev=0
    for i in $(sed -n 's/^id: //p' "$f"); do
        [ "$i" -gt "$prev" ] || fail "ids not increasing in $f"
        prev=$i
    done
    grep -q '"name":"zz:1"' "$f" && fail "prefix filter let zz:1 through"
    grep -q '^: heartbeat' "$f" || fail "no heartbeat in $f"
done
pass "a watcher on B sees what A did, in order, with floors; each expiry once"

# Resume on the same instance: events after the given id come again.
first=$(grep -B1 '^data: ' "$T/streamB" | sed -n 's/^id: //p' | head -1)
curl -sN --max-time 1 -H "Last-Event-ID: $first" "$B/v1/events?prefix=ev:" >"$T/resume" || true
got=$(summary "$T/resume" | cut -d' ' -f1-8)
[ "$got " = "${want#* }" ] || fail "resume after id $first on B replayed '$got': $(cat "$T/resume")"
pass "Last-Event-ID resumes from the instance's backlog"

# Ids are per instance: B's id on A is answered with a reset, never
# replayed from an unrelated point of A's backlog.
curl -sN --max-time 1 -H "Last-Event-ID: $first" "$A/v1/events?prefix=ev:" >"$T/cross" || true
grep -q '"type":"reset"' "$T/cross" || fail "B's id $first on A: no reset: $(cat "$T/cross")"
grep -q '"type":"acquired"' "$T/cross" && fail "B's id $first on A replayed events: $(cat "$T/cross")"
pass "another instance's Last-Event-ID gets a reset"

# Cut the stream: kill B's LISTEN connection inside PostgreSQL (its last
# query is LISTEN, or its heartbeat, src/store/pg/events.c).  Safety
# never depended on it: grants, renewals, releases and floors are right on
# both instances while it is down, and B listens again afterwards.  Only
# B's: the cluster is shared with tests running beside this one, whose
# events would be lost if their LISTEN connections were cut too.
curl -sN --max-time 20 "$B/v1/events?prefix=after:" >"$T/across" &
wx=$!
sleep 0.3
ports=$(pg_client_ports "${PIDS[2]}")
[ -n "$ports" ] || fail "no TCP connections of instance B (pid ${PIDS[2]}) found"
cut=$("$PG_BINDIR/psql" -X -q -At -v ON_ERROR_STOP=1 "$TENURE_TEST_PG_URL" -c \
    "SELECT count(pg_terminate_backend(pid)) FROM (SELECT pid
     FROM pg_stat_activity
     WHERE (query LIKE 'DO \$\$ BEGIN EXECUTE format(''LISTEN%'
            OR query LIKE 'SELECT pg_is_in_recovery()%')
       AND client_port IN ($ports) OFFSET 0) l" 2>&1) ||
    fail "cannot cut B's LISTEN connection: $cut"
[ "$cut" = 1 ] || fail "expected to cut B's one LISTEN connection, cut $cut"
URL=$B
acquire "cut:1" x 5000
expect_code 201 "acquire on B with the stream cut"
c1=$(jget token)
c1s=$(jget lease_secret)
URL=$A
acquire "cut:1" y 5000
expect_code 409 "A sees B's grant while the stream is cut"
[ "$(jget holder.token)" = "$c1" ] || fail "holder token on A: $BODY"
URL=$B
renew "cut:1" "$c1" "$c1s"
expect_code 200 "renew with the stream cut"
release "cut:1" "$c1" "$c1s"
expect_code 204 "release with the stream cut"
URL=$A
acquire "cut:1" y 5000
expect_code 201 "A acquires after B's release"
[ "$(jget token)" -gt "$c1" ] || fail "token did not increase: $BODY"
URL=$B
[ "$(floor_of cut:1)" -gt "$c1" ] || fail "floor on B did not move past $c1"
for _ in $(seq 1 60); do
    n=$(curl -s "$B/metrics" | sed -n 's/^tenure_pg_listen_connects_total //p')
    [ "${n:-0}" -ge 2 ] && break
    sleep 0.1
done
[ "${n:-0}" -ge 2 ] || fail "B's listener did not reconnect (connects=$n)"
curl -sN --max-time 2 "$B/v1/events?prefix=after:" >"$T/after" &
wc=$!
sleep 0.3
URL=$A
acquire "after:1" z 5000
wait "$wc" || true
grep -q '"type":"acquired","name":"after:1"' "$T/after" || fail "no event after the listener came back: $(cat "$T/after")"
pass "with the stream cut, tokens, floors, renew and release are unaffected; the listener reconnects"

kill "$wx" 2>/dev/null || true
wait "$wx" 2>/dev/null || true
r=$(grep -n '"type":"reset"' "$T/across" | cut -d: -f1)
a=$(grep -n '"type":"acquired","name":"after:1"' "$T/across" | cut -d: -f1)
[ "$(printf '%s\n' "$r" | grep -c .)" = 1 ] && [ -n "$a" ] && [ "$r" -lt "$a" ] ||
    fail "stream across the cut: want one reset, then after:1: $(cat "$T/across")"
gap=$(grep -B1 '"type":"reset"' "$T/across" | sed -n 's/^id: //p')
[ -n "$gap" ] || fail "the reset has no id: $(cat "$T/across")"
curl -sN --max-time 1 -H "Last-Event-ID: $first" "$B/v1/events?prefix=ev:" >"$T/old" || true
grep -q '"type":"reset"' "$T/old" || fail "id $first from before the cut: no reset: $(cat "$T/old")"
grep -q '"type":"acquired"' "$T/old" && fail "id $first from before the cut replayed across the gap: $(cat "$T/old")"
curl -sN --max-time 1 -H "Last-Event-ID: $gap" "$B/v1/events?prefix=after:" >"$T/past" || true
grep -q '"type":"acquired","name":"after:1"' "$T/past" || fail "resume from the reset's id $gap did not replay after:1: $(cat "$T/past")"
grep -q '"type":"reset"' "$T/past" && fail "resume from the reset's id $gap got another reset: $(cat "$T/past")"
pass "a stream across the cut gets a reset; ids from before it are answered with a reset, the reset's own id resumes"
