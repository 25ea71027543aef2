#!/usr/bin/env bash
# The keepalive thread holds a lease past five TTLs with the same token,
# release ends it with exactly one "released" callback, and a client whose
# first URL refuses connections fails over to the second.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
tn_start_server

# 1. Kept alive for 4.2 s with a 600 ms TTL (seven TTLs).  (A 300 ms TTL
# leaves a renewal 200 ms to come back, which a loaded machine running
# two sanitizer builds at once does not always give it.)
"$PROBE" keep "$URL" keep:1 600 4200 >"$T/probe" 2>&1 &
P=$!
TN_CLIENT_PIDS+=("$P")
wait_grep "$T/probe" '^acquired' 1 5 || fail "probe did not acquire: $(cat "$T/probe")"
tok=$(kv "$(grep '^acquired' "$T/probe")" token)
sleep 3.3 # past five TTLs: the lease must still be the same grant
"$TENURE" --server "$URL" --json get keep:1 >"$T/get" || fail "lease gone after 5 TTLs"
BODY=$(cat "$T/get")
expect_field token "$tok" "token after five TTLs"
wait_exit "$P" 10 || fail "probe did not finish"
[ "$RC" = 0 ] || fail "probe failed: $(cat "$T/probe")"
grep -q '^held_until_hold=1' "$T/probe" || fail "not held at the end: $(cat "$T/probe")"
n=$(grep -c 'renewed lease "keep:1"' "$T/probe")
[ "$n" -ge 14 ] || fail "expected a renew every third of the TTL, saw $n"
end=$(grep '^end ' "$T/probe")
[ "$(kv "$end" reason)" = released ] || fail "end reason: $end"
[ "$(kv "$end" calls)" = 1 ] || fail "callback must run exactly once: $end"
[ "$(kv "$end" held_after)" = -1 ] || fail "held after release: $end"
expect_exit 5 "get after release" "$TENURE" --server "$URL" get keep:1
pass "lease kept alive past five TTLs, released once"

# 2. Failover: the first URL refuses connections.
dead="http://127.0.0.1:$(closed_port)"
"$PROBE" keep "$dead,$URL" keep:2 600 1400 >"$T/probe2" 2>&1 || fail "failover probe: $(cat "$T/probe2")"
grep -q '^held_until_hold=1' "$T/probe2" || fail "failover keepalive: $(cat "$T/probe2")"
[ "$(kv "$(grep '^end ' "$T/probe2")" reason)" = released ] || fail "failover end: $(cat "$T/probe2")"
pass "keepalive fails over to the second URL"
