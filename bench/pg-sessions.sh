#!/usr/bin/env bash
# pg-sessions.sh [ROUNDS]: what sessions cost on PostgreSQL
# (docs/PERFORMANCE.md "Sessions"), through the store with bench_pg_sessions,
# each measurement on a fresh database of the server TENURE_TEST_PG_URL
# names (run it under scripts/with-pg.sh):
#   - a claim of 1,000 names against 1,000 acquires one after another and
#     1,000 acquires sent at once (ROUNDS rounds, default 5);
#   - a session renew, the session holding 10 leases and 100,000 (2,000
#     renews each, twice, alternated);
#   - an unrelated client's acquires while a session of 100,000 leases
#     expires, and while one is ended by DELETE.
# Needs a built tree (cmake --build --preset dev --target bench_pg_sessions).
set -euo pipefail
rounds=${1:-5}
: "${TENURE_TEST_PG_URL:?run under scripts/with-pg.sh}"
src=$(cd "$(dirname "$0")/.." && pwd)
bin=${TN_BIN:-$src/build/dev/bin}
pgbin=${TENURE_TEST_PG_BINDIR:-/usr/lib/postgresql/15/bin}

# fresh: a new database tn_bench on the server; prints its URL.
fresh() {
    "$pgbin/psql" -X -q "$TENURE_TEST_PG_URL" -c "DROP DATABASE IF EXISTS tn_bench" \
        -c "CREATE DATABASE tn_bench" >/dev/null
    local base=${TENURE_TEST_PG_URL%%\?*}
    printf '%s/tn_bench' "${base%/*}"
}
run() { "$bin/bench_pg_sessions" "$(fresh)" "$@" 2>/dev/null; }

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
run claim 1000 "$rounds"
for _ in 1 2; do
    run renew 10 2000
    run renew 100000 2000
done
run expiry 100000
run end 100000
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
