#!/usr/bin/env bash
# Input holes (issue 16): tenured decides "loopback" on the addresses its
# --listen host resolves to, not on how it is spelled (a name beginning
# with 127. that resolves to 0.0.0.0 must be refused without auth); a port
# outside 1..65535 (0 picks a free one) is a usage error, exit 2, nothing
# bound; tenure-materializer refuses an empty --brokers, --topic, --sink
# (and --dlq-topic, --clean-topic) with exit 2.  The name case runs in a
# private mount namespace whose /etc/hosts is a bind-mounted copy, so the
# machine's own file is never touched; where unshare is not allowed that
# case is reported as not run.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
[ -x "$TN_BIN/tenured" ] || fail "missing $TN_BIN/tenured (build it first)"

# usage_error WHAT CMD...: CMD exits 2 at once with a message on stderr.
usage_error() {
    local what=$1 rc=0
    shift
    timeout 10 "$@" >"$T/out" 2>"$T/err" || rc=$?
    [ "$rc" = 2 ] || fail "$what: exit $rc, want 2: $(cat "$T/out" "$T/err")"
    [ -s "$T/err" ] || fail "$what: exit 2 without a message"
}

# Ports outside 1..65535, and no port at all.
p=$(tn_free_port)
for bad in 127.0.0.1:99999 127.0.0.1:65536 127.0.0.1:-1 127.0.0.1:abc \
    127.0.0.1: 127.0.0.1 "[::1]:70000" "127.0.0.1:${p}x"; do
    usage_error "--listen $bad" "$TN_BIN/tenured" --listen "$bad" --data-dir "$T/d-port"
    grep -q 'listen' "$T/err" || fail "--listen $bad: message does not name the option: $(cat "$T/err")"
    ! ss -ltnH "sport = :34463" 2>/dev/null | grep -q tenured ||
        fail "--listen $bad bound a port"
done
# The same through the environment.
usage_error "TENURE_LISTEN=127.0.0.1:99999" env TENURE_LISTEN=127.0.0.1:99999 \
    "$TN_BIN/tenured" --data-dir "$T/d-port"
pass "a --listen port outside 1..65535 is a usage error (exit 2)"

# started ADDR URL: tenured --listen ADDR starts without auth; stop it.
started() {
    tn_server_start -H "$1" -d "$T/d-ok.$1" -l "$T/tenured.log" ||
        fail "--listen $1 (loopback) did not start without auth: $TN_SERVER_ERR"
    tn_main_vars
    [ "$URL" = "$2:$PORT" ] || fail "asked $URL, not $2:$PORT"
    acquire "lo:1" a 1000
    expect_code 201 "acquire on $1"
    tn_kill_server
}
started 127.0.0.2 http://127.0.0.2
started localhost http://127.0.0.1
PORT=$(tn_free_port)
usage_error "0.0.0.0 without auth" "$TN_BIN/tenured" --listen "0.0.0.0:$PORT" --data-dir "$T/d-any"
grep -q -- --insecure-no-auth "$T/out" "$T/err" || fail "0.0.0.0: refusal does not name the fix"
pass "loopback addresses by number (127.0.0.2) and by name (localhost) start without auth; 0.0.0.0 does not"

# A name spelled like loopback that resolves to every interface.
printf '0.0.0.0 127.internal.example\n127.0.0.1 localhost loop.example\n::1 localhost\n' >"$T/hosts"
if unshare -m true 2>/dev/null; then
    inns() {
        unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
            sh "$T/hosts" "$@"
    }
    [ "$(inns getent ahostsv4 127.internal.example | awk 'NR==1{print $1}')" = 0.0.0.0 ] ||
        fail "the private hosts file does not resolve 127.internal.example"
    PORT=$(tn_free_port)
    rc=0
    timeout 10 unshare -m sh -c 'mount --bind "$1" /etc/hosts && shift && exec "$@"' \
        sh "$T/hosts" "$TN_BIN/tenured" --listen "127.internal.example:$PORT" \
        --data-dir "$T/d-name" >"$T/out" 2>&1 || rc=$?
    [ "$rc" = 2 ] || fail "127.internal.example (0.0.0.0) without auth: exit $rc, want 2: $(cat "$T/out")"
    grep -q -- --insecure-no-auth "$T/out" || fail "127.internal.example: refusal does not name the fix: $(cat "$T/out")"
    ! ss -ltnH "sport = :$PORT" 2>/dev/null | grep -q . ||
        fail "something listens on $PORT after the refusal of 127.internal.example"
    # A name that resolves to loopback is loopback.
    cat >"$T/inns" <<EOF
#!/bin/sh
exec unshare -m sh -c 'mount --bind "\$1" /etc/hosts && shift && exec "\$@"' sh "$T/hosts" "\$@"
EOF
    chmod +x "$T/inns"
    TN_WRAP=$T/inns tn_server_start -H loop.example -d "$T/d-loopname" -l "$T/tenured.log" ||
        fail "loop.example (127.0.0.1) did not start without auth: $TN_SERVER_ERR"
    tn_main_vars
    tn_kill_server
    pass "a name is judged by what it resolves to: 127.internal.example -> 0.0.0.0 refused, loop.example -> 127.0.0.1 starts"
else
    echo "note: unshare -m is not allowed here; the resolved-name case did not run"
fi

# tenure-materializer: empty values are usage errors, before any broker.
M=$TN_BIN/tenure-materializer
[ -x "$M" ] || fail "missing $M"
usage_error "materializer --topic '' --brokers ''" "$M" --topic "" --brokers ""
usage_error "materializer --brokers ''" "$M" --topic raw --brokers ""
grep -q -- '--brokers: must not be empty' "$T/err" || fail "empty --brokers: $(cat "$T/err")"
usage_error "materializer --topic ''" "$M" --topic "" --brokers 127.0.0.1:1
grep -q -- '--topic: must not be empty' "$T/err" || fail "empty --topic: $(cat "$T/err")"
usage_error "materializer --sink ''" "$M" --topic raw --brokers 127.0.0.1:1 --sink ""
grep -q -- '--sink: must not be empty' "$T/err" || fail "empty --sink: $(cat "$T/err")"
usage_error "materializer --dlq-topic ''" "$M" --topic raw --brokers 127.0.0.1:1 --dlq-topic ""
usage_error "materializer --clean-topic ''" "$M" --topic raw --brokers 127.0.0.1:1 --clean-topic ""
pass "tenure-materializer refuses empty --brokers, --topic, --sink, --dlq-topic, --clean-topic (exit 2)"
