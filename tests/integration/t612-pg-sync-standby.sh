#!/usr/bin/env bash
# --require-sync-standby (docs/HA.md): tenured on a PostgreSQL primary
# without a synchronous standby warns (log line, tenure_pg_sync_standby 0)
# and serves; with the flag it refuses (503 on /readyz and on requests)
# until a synchronous standby is attached, serves then, and refuses again
# once the standby is gone.  A role that may not read
# pg_stat_replication's sync_state is refused with a log line naming
# pg_monitor, and served once granted it.  Real clusters (scripts/pg-cluster.sh).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_private_primary
pa=$PG_PA pb=$PG_PB
db="postgresql://postgres@127.0.0.1:$pa/postgres"

expect_code_of() { # URL METHOD PATH BODY CODE WHAT
    local c
    c=$(curl -s --max-time 5 -o "$T/out" -w '%{http_code}' -X "$2" -d "$4" "$1$3")
    [ "$c" = "$5" ] || fail "$6: expected $5, got $c: $(cat "$T/out")"
}

# 1. Without the flag: a warning, the metric, and the instance serves.
pg_start_instance 0 "$db"
pg_wait_for 10 grep -q 'without a synchronous standby.*synchronous_standby_names is empty' "$T/tenured0.log" ||
    fail "no warning about the missing synchronous standby: $(tail -5 "$T/tenured0.log")"
[ "$(pg_metric "${URLS[0]}" tenure_pg_sync_standby)" = 0 ] || fail "tenure_pg_sync_standby is not 0"
[ "$(pg_metric "${URLS[0]}" tenure_pg_sync_required)" = 0 ] || fail "tenure_pg_sync_required is not 0"
expect_code_of "${URLS[0]}" POST /v1/leases '{"name":"s:0","owner_id":"o","ttl_ms":60000}' 201 "acquire without the flag"
pass "no synchronous standby: warned, tenure_pg_sync_standby 0, still serving"

# 2. With it: not ready, every request refused with 503.
pg_spawn_instance 1 "$db" --require-sync-standby
pg_wait_for 10 grep -q 'without a synchronous standby.*required=true' "$T/tenured1.log" ||
    fail "no log line of the refusal: $(tail -5 "$T/tenured1.log")"
pg_is "${URLS[1]}" 503 || fail "/readyz is not 503 without a synchronous standby"
expect_code_of "${URLS[1]}" POST /v1/leases '{"name":"s:1","owner_id":"o","ttl_ms":60000}' 503 "acquire with the flag"
expect_code_of "${URLS[1]}" GET /v1/leases/s:0 "" 503 "a read with the flag"
pass "--require-sync-standby: /readyz 503, acquire and get 503, logged"

# 3. A synchronous standby attaches: both see it, the refusing one serves.
pg_cluster sql "$pa" "ALTER SYSTEM SET synchronous_standby_names = 'tn_standby'" >/dev/null
pg_cluster sql "$pa" "SELECT pg_reload_conf()" >/dev/null
pg_cluster standby "$PGPRIV/b" "$pb" "$pa" tn_standby >>"$T/pg.log" 2>&1 || fail "cannot start the standby"
pg_cluster wait-sync "$pa" tn_standby || fail "the standby is not synchronous"
pg_wait_for 10 pg_is "${URLS[1]}" 200 || fail "not ready with a synchronous standby"
for n in 0 1; do
    pg_wait_for 5 pg_metric_is "${URLS[$n]}" tenure_pg_sync_standby 1 ||
        fail "instance $n: tenure_pg_sync_standby is not 1"
done
grep -q 'primary has a synchronous standby' "$T/tenured0.log" || fail "instance 0 did not log the standby"
expect_code_of "${URLS[1]}" POST /v1/leases '{"name":"s:1","owner_id":"o","ttl_ms":60000}' 201 "acquire with a standby"
pass "a synchronous standby attached: ready within seconds, grants"

# 4. The standby dies: refused again.
pg_cluster kill "$PGPRIV/b"
pg_wait_for 10 pg_is "${URLS[1]}" 503 || fail "still ready after the standby died"
expect_code_of "${URLS[1]}" GET /v1/leases/s:1 "" 503 "a read after the standby died"
pass "the standby died: /readyz 503 again"

# 5. A role that cannot see sync_state: refused, told why; served once
# granted pg_monitor.
pg_cluster start "$PGPRIV/b" >>"$T/pg.log" 2>&1 || fail "cannot restart the standby"
pg_cluster wait-sync "$pa" tn_standby || fail "the standby is not synchronous again"
pg_cluster sql "$pa" "CREATE ROLE tn_plain LOGIN" >/dev/null
pg_cluster sql "$pa" "CREATE DATABASE tn_plain OWNER tn_plain" >/dev/null
pg_spawn_instance 2 "postgresql://tn_plain@127.0.0.1:$pa/tn_plain" --require-sync-standby
pg_wait_for 15 grep -q 'may not see .*grant it pg_monitor' "$T/tenured2.log" ||
    fail "no log line naming pg_monitor: $(tail -5 "$T/tenured2.log")"
pg_is "${URLS[2]}" 503 || fail "an unprivileged role was served"
pg_cluster sql "$pa" "GRANT pg_monitor TO tn_plain" >/dev/null
pg_wait_for 10 pg_is "${URLS[2]}" 200 || fail "not ready after GRANT pg_monitor"
pass "a role without pg_monitor: refused and told so; ready once granted"

# 6. The flag needs the PostgreSQL store.
set +e
"$TN_BIN/tenured" --listen "127.0.0.1:$(tn_free_port)" --data-dir "$T/emb" \
    --require-sync-standby >"$T/emb.log" 2>&1
rc=$?
set -e
[ "$rc" != 0 ] && grep -q -- '--require-sync-standby: needs --store postgresql://' "$T/emb.log" ||
    fail "the embedded store took --require-sync-standby (exit $rc): $(cat "$T/emb.log")"
pass "--require-sync-standby without --store postgresql:// is refused"
