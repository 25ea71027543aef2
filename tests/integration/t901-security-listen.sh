#!/usr/bin/env bash
# Secure default (CONTRACT §9): tenured refuses a non-loopback listen address
# without authentication, says what to do instead, and binds nothing;
# --insecure-no-auth overrides it; loopback needs no flag.  Once --auth-file
# is wired, a non-loopback address with an auth file starts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
[ -x "$TN_BIN/tenured" ] || fail "missing $TN_BIN/tenured (build it first)"
wired=0
help=$("$TN_BIN/tenured" --help 2>&1) || fail "tenured --help exited $?"
grep -q -- --auth-file <<<"$help" && wired=1

# refused ADDR: tenured --listen ADDR exits non-zero at once, with a
# message naming the ways out, and nothing listens on the port.
refused() {
    local addr=$1 port=$2 rc=0
    timeout 10 "$TN_BIN/tenured" --listen "$addr" --data-dir "$T/d-refused" \
        >"$T/out" 2>&1 || rc=$?
    [ "$rc" != 0 ] || fail "tenured --listen $addr without auth started and exited 0"
    [ "$rc" != 124 ] || fail "tenured --listen $addr without auth kept running"
    grep -q -- --insecure-no-auth "$T/out" ||
        fail "refusal for $addr does not name --insecure-no-auth: $(cat "$T/out")"
    grep -q '127\.0\.0\.1' "$T/out" ||
        fail "refusal for $addr does not suggest a loopback address: $(cat "$T/out")"
    if [ "$wired" = 1 ]; then
        grep -q -- --auth-file "$T/out" ||
            fail "refusal for $addr does not name --auth-file: $(cat "$T/out")"
    fi
    ! ss -ltnH "sport = :$port" 2>/dev/null | grep -q . ||
        fail "something listens on $port after the refusal"
}

p=$(tn_free_port)
refused "0.0.0.0:$p" "$p"
refused "[::]:$p" "$p"
refused "192.0.2.1:$p" "$p"
pass "non-loopback listen without auth refused with a message naming the fixes"

# --insecure-no-auth: starts on 0.0.0.0 and answers on loopback.
tn_server_start -H 0.0.0.0 -d "$T/d-insecure" -l "$T/tenured.log" -- --insecure-no-auth ||
    fail "--insecure-no-auth on 0.0.0.0 did not start: $TN_SERVER_ERR"
tn_main_vars
acquire "open:1" a 1000
expect_code 201 "acquire without auth under --insecure-no-auth"
tn_kill_server
pass "--insecure-no-auth starts on 0.0.0.0"

# Loopback needs neither flag.
PORT=
tn_start_server
pass "loopback starts without auth"
tn_kill_server

if [ "$wired" = 1 ]; then
    sec_write_auth "$T/auth.json"
    tn_server_start -H 0.0.0.0 -d "$T/d-auth" -l "$T/tenured.log" -- \
        --auth-file "$T/auth.json" || fail "0.0.0.0 with --auth-file did not start: $TN_SERVER_ERR"
    tn_main_vars
    acquire "shard:1" a 1000
    expect_unauth "acquire without credentials on 0.0.0.0 with auth"
    as_acquire "$TOK_INDEXER" "shard:1" a 1000
    expect_code 201 "acquire with credentials on 0.0.0.0 with auth"
    tn_kill_server
    # A bad auth file stops the start-up with the reason.
    printf '{"principals": [{"name": "x"}]}' >"$T/bad.json"
    rc=0
    timeout 10 "$TN_BIN/tenured" --listen "127.0.0.1:$PORT" --data-dir "$T/d-bad" \
        --auth-file "$T/bad.json" >"$T/out" 2>&1 || rc=$?
    if [ "$rc" = 0 ] || [ "$rc" = 124 ]; then
        fail "tenured started with a bad auth file (rc $rc)"
    fi
    grep -q token_sha256 "$T/out" || fail "bad auth file: reason not given: $(cat "$T/out")"
    pass "with --auth-file: 0.0.0.0 starts, a bad file is refused with its reason"
else
    echo "note: --auth-file not wired yet; its part of this test did not run"
fi
