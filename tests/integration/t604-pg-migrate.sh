#!/usr/bin/env bash
# tenure-migrate moves an embedded store into PostgreSQL: the live lease
# keeps its holder (renew with the same token and secret works over the
# PostgreSQL store), a released name keeps its floor, a retired name keeps
# the retired floor, and new tokens continue above every token the
# embedded store issued.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
[ -x "$TN_BIN/tenure-migrate" ] || fail "tenure-migrate is not built"
pg_fresh_schema "t604_$$"

# A name the embedded store retired: its floor is the retired floor.
tn_start_server --retain-ms 200
reqh POST /v1/leases '{"name":"mig/gone","owner_id":"o0","ttl_ms":60000}'
expect_code 201 "embedded acquire of the name to retire"
gone_tok=$(jget token)
reqh DELETE /v1/leases/mig%2Fgone "{\"token\":$gone_tok,\"lease_secret\":\"$(jget lease_secret)\"}"
expect_code 204 "embedded release of the name to retire"
tn_wait_metric tenure_names_retired_total 1 "the name retired"
reqh GET "/v1/leases/mig%2Fgone/check?token=$gone_tok"
gone_floor=$(jget floor)
[ "$gone_floor" -ge "$gone_tok" ] || fail "retired floor $gone_floor below $gone_tok"
tn_kill_server
PORT=

tn_start_server
reqh POST /v1/leases '{"name":"mig/live","owner_id":"o1","ttl_ms":60000}'
expect_code 201 "embedded acquire"
live_tok=$(jget token)
live_sec=$(jget lease_secret)
for i in 1 2 3; do
    reqh POST /v1/leases '{"name":"mig/old","owner_id":"o2","ttl_ms":60000}'
    expect_code 201 "embedded acquire $i"
    old_tok=$(jget token)
    reqh DELETE /v1/leases/mig%2Fold "{\"token\":$old_tok,\"lease_secret\":\"$(jget lease_secret)\"}"
    expect_code 204 "embedded release $i"
done
tn_kill_server
pass "embedded store with a live lease (token $live_tok) and a released name (floor $old_tok)"

"$TN_BIN/tenure" migrate --data-dir "$T/data" --to "$PG_URL" >"$T/migrate.out" 2>&1 ||
    fail "tenure-migrate failed: $(cat "$T/migrate.out")"
cat "$T/migrate.out"
"$TN_BIN/tenure-migrate" --data-dir "$T/data" --to "$PG_URL" >"$T/migrate2.out" 2>&1 &&
    fail "a second migration into a non-empty target was not refused"
pass "migrated; a second run is refused"

PORT=
TN_DATA_DIR="$T/data-pg" tn_start_server --store "$PG_URL"
reqh PATCH /v1/leases/mig%2Flive "{\"token\":$live_tok,\"lease_secret\":\"$live_sec\"}"
expect_code 200 "renew of the migrated live lease"
expect_field token "$live_tok"
reqh POST /v1/leases '{"name":"mig/live","owner_id":"o3","ttl_ms":60000}'
expect_code 409 "the migrated lease is still held"
reqh GET "/v1/leases/mig%2Fold/check?token=$old_tok"
expect_code 200 "check of the released name"
expect_field floor "$old_tok"
reqh GET "/v1/leases/mig%2Fgone/check?token=$gone_tok"
expect_code 200 "check of the name retired before the move"
expect_field floor "$gone_floor" "the retired floor carried over"
expect_field current false
reqh POST /v1/leases '{"name":"mig/new","owner_id":"o3","ttl_ms":60000}'
expect_code 201 "first acquire over PostgreSQL"
[ "$(jget token)" -gt "$old_tok" ] && [ "$(jget token)" -gt "$live_tok" ] ||
    fail "token $(jget token) is not above the embedded store's tokens"
pg_psql "$TENURE_TEST_PG_URL" "DROP SCHEMA t604_$$ CASCADE" 2>/dev/null || true
pass "holder kept, floor kept, tokens continue above"
