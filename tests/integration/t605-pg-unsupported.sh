#!/usr/bin/env bash
# What the PostgreSQL store does not do yet is refused, never silently
# ignored: wait_ms is a 400, the event stream and the grant history are
# 404, and --auth-file refuses to start (renew/release could not be bound
# to the acquiring principal).  A plain acquire still works.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
pg_need
pg_fresh_schema t605
tn_start_server --store "$PG_URL"

acquire "pg:1" a 5000
expect_code 201 "plain acquire on PostgreSQL"
acquire "pg:2" a 5000 '"wait_ms":1000'
expect_error 400 bad_request "wait_ms on the PostgreSQL store"
jget message | grep -q "not supported" || fail "message: $BODY"
rj GET "/v1/leases/pg:2"
expect_error 404 not_found "no lease after the refused wait_ms"
code=$(curl -s --max-time 2 -o "$T/ev" -w '%{http_code}' "$URL/v1/events" || true)
[ "$code" = 404 ] || fail "events on the PostgreSQL store: $code $(cat "$T/ev")"
rj GET "/v1/leases/pg:1/history"
expect_error 404 not_found "history on the PostgreSQL store"
pass "wait_ms 400, events and history 404 on the PostgreSQL store"

tn_kill_server
printf '{"principals":[{"name":"ops","token_sha256":"%s","admin":true}]}\n' \
    "$(printf %s tok | sha256sum | cut -d' ' -f1)" >"$T/auth.json"
chmod 600 "$T/auth.json"
if timeout 10 "$TN_BIN/tenured" --listen "127.0.0.1:$(tn_free_port)" \
    --data-dir "$T/d2" --store "$PG_URL" --auth-file "$T/auth.json" \
    >"$T/auth.log" 2>&1; then
    fail "tenured started with --auth-file on the PostgreSQL store"
fi
grep -q "not supported with the postgresql store" "$T/auth.log" ||
    fail "no clear message: $(cat "$T/auth.log")"
pass "--auth-file with the PostgreSQL store refuses to start, saying why"
