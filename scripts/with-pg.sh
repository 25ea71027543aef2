#!/usr/bin/env bash
# with-pg.sh CMD ARGS...: start a throw-away PostgreSQL 15 cluster on a free
# loopback port, run CMD with TENURE_TEST_PG_URL pointing at it, remove the
# cluster afterwards, and exit with CMD's status.
set -euo pipefail

bindir=$(ls -d /usr/lib/postgresql/15/bin 2>/dev/null || true)
[ -x "$bindir/initdb" ] || { echo "with-pg: PostgreSQL 15 is not installed (run scripts/deps.sh)" >&2; exit 1; }

dir=$(mktemp -d /tmp/tenure-pg.XXXXXX)
chown postgres: "$dir" 2>/dev/null || true
cleanup() {
    runuser -u postgres -- "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT

port=$("$(dirname "$0")/pg-cluster.sh" port)
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
as_pg "$bindir/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 >/dev/null
as_pg "$bindir/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
    -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=on" start >/dev/null
export TENURE_TEST_PG_URL="postgresql://postgres@127.0.0.1:$port/postgres"
export TENURE_TEST_PG_BINDIR="$bindir"
echo "with-pg: PostgreSQL on 127.0.0.1:$port" >&2
set +e
"$@"
rc=$?
set -e
exit $rc
