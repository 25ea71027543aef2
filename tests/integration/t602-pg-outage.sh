#!/usr/bin/env bash
# PostgreSQL goes down under tenured: readyz turns 503, every operation
# answers 503 with Retry-After (never a grant without a commit); when the
# database returns, tenured reconnects by itself, the lease granted before
# the outage renews with its token unchanged, and new tokens are higher.
# The capacity limits' count waits for the reconnect meanwhile.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_private_dir
db="$PGPRIV/db"
dbport=$(pg_cluster port)
pg_cluster init "$db" "$dbport"
tn_start_server --store "postgresql://postgres@127.0.0.1:$dbport/postgres"
pass "tenured ready over a private cluster"

reqh POST /v1/leases '{"name":"out/a","owner_id":"o1","ttl_ms":60000}'
expect_code 201 "acquire before the outage"
tok=$(jget token)
sec=$(jget lease_secret)

pg_cluster stop "$db"
wait_code /readyz 503 10 || fail "readyz still 200 with the database down"
pass "readyz 503 while the database is down"

reqh POST /v1/leases '{"name":"out/b","owner_id":"o1","ttl_ms":60000}'
expect_code 503 "acquire while down"
printf '%s\n' "$HDRS" | grep -qi '^retry-after: [0-9]' || fail "503 without Retry-After: $HDRS"
expect_field error unavailable
reqh PATCH /v1/leases/out%2Fa "{\"token\":$tok,\"lease_secret\":\"$sec\"}"
expect_code 503 "renew while down"
reqh DELETE /v1/leases/out%2Fa "{\"token\":$tok,\"lease_secret\":\"$sec\"}"
expect_code 503 "release while down"
reqh GET /v1/leases/out%2Fa
expect_code 503 "get while down"
reqh GET "/v1/leases/out%2Fa/check?token=$tok"
expect_code 503 "check while down"
reqh GET "/v1/leases?prefix=out"
expect_code 503 "list while down"
pass "every operation answers 503 with Retry-After while down"

# The count behind --max-leases and --max-names (on by default) does not
# look every so often while the database is down: the count that comes
# due waits for the reconnect.  A count due or in flight at the outage
# comes due once more within about a second (one more attempt allowed).
limits() { curl -s --max-time 5 "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }
sleep 2
a=$(limits tenure_pg_limit_count_attempts_total)
[ -n "$a" ] || fail "tenure_pg_limit_count_attempts_total not exported"
sleep 2
b=$(limits tenure_pg_limit_count_attempts_total)
[ "$b" -le $((a + 1)) ] ||
    fail "the limits' count came due $((b - a)) times in 2 s with the database down"
counted=$(limits tenure_pg_limit_counts_total)
pass "no count of the database is attempted while it is down"

pg_cluster start "$db"
wait_code /readyz 200 15 || fail "tenured did not reconnect"
pass "reconnected by itself"
for _ in $(seq 1 100); do
    [ "$(limits tenure_pg_limit_counts_total)" -gt "$counted" ] && break
    sleep 0.1
done
[ "$(limits tenure_pg_limit_counts_total)" -gt "$counted" ] ||
    fail "the limits' count did not start again after the reconnect"
pass "the limits' count starts again once the database is back"

reqh PATCH /v1/leases/out%2Fa "{\"token\":$tok,\"lease_secret\":\"$sec\"}"
expect_code 200 "renew after the outage"
expect_field token "$tok"
reqh POST /v1/leases '{"name":"out/b","owner_id":"o1","ttl_ms":60000}'
expect_code 201 "acquire after the outage"
[ "$(jget token)" -gt "$tok" ] || fail "token after the outage not above $tok"
reqh GET /v1/leases/out%2Fb
expect_code 200 "the grant made after the outage is there"

# a crash (SIGKILL of the postmaster) rather than a clean stop
pg_cluster kill "$db"
wait_code /readyz 503 10 || fail "readyz still 200 after the crash"
reqh POST /v1/leases '{"name":"out/c","owner_id":"o1","ttl_ms":60000}'
expect_code 503 "acquire after the crash"
pg_cluster start "$db"
wait_code /readyz 200 15 || fail "tenured did not reconnect after the crash"
reqh POST /v1/leases '{"name":"out/c","owner_id":"o1","ttl_ms":60000}'
expect_code 201 "acquire after the crash recovery"
pass "recovers from a database crash"
