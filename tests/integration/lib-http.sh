#!/usr/bin/env bash
# Helpers for the t11x-http tests: hostile clients of the HTTP front end,
# driven by tests/tools/http/attack.py (Python 3 standard library).  Source
# after lib.sh and lib-server.sh:
#   . "$(dirname "$0")/lib.sh"; . "$(dirname "$0")/lib-server.sh"
#   . "$(dirname "$0")/lib-http.sh"

ATTACK="$TN_SRC/tests/tools/http/attack.py"
command -v python3 >/dev/null || fail "python3 is needed by $ATTACK"
[ -f "$ATTACK" ] || fail "missing $ATTACK"

# Many sockets per test: take the hard limit.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

# http_exchange FILE [WAIT_S]: send the bytes of FILE on one fresh
# connection and read until the server closes it or WAIT_S (default 5)
# seconds pass.  Sets EX (the tool's report), EX_N (complete responses),
# CODE and BODY (of the first response), EX_CLOSED (1 if the server closed
# the connection) and EX_MS (when the exchange ended, ms after the send).
http_exchange() {
    python3 "$ATTACK" exchange "$PORT" "$1" --wait "${2:-5}" >"$T/ex.out" 2>&1 ||
        fail "attack.py exchange failed: $(cat "$T/ex.out")"
    http_exchange_parse
}

# http_headers_only FILE [WAIT_S]: the same for a request head whose
# announced body is never sent.
http_headers_only() {
    python3 "$ATTACK" headers-only "$PORT" "$1" --wait "${2:-5}" >"$T/ex.out" 2>&1 ||
        fail "attack.py headers-only failed: $(cat "$T/ex.out")"
    http_exchange_parse
}
http_exchange_parse() {
    EX=$(cat "$T/ex.out")
    EX_N=$(grep -c '^response ' "$T/ex.out" || true)
    # shellcheck disable=SC2034 # CODE, BODY, EX_MS are read by the tests
    CODE=$(sed -n '1s/^response status=\([0-9]*\) .*/\1/p' "$T/ex.out")
    BODY=$(sed -n '1s/^response status=[0-9]* ms=[0-9]* body=//p' "$T/ex.out")
    EX_CLOSED=0
    grep -q '^closed ' "$T/ex.out" && EX_CLOSED=1
    # shellcheck disable=SC2034 # read by the tests
    EX_MS=$(sed -n 's/^\(closed\|open\) ms=\([0-9]*\)$/\2/p' "$T/ex.out")
    # shellcheck disable=SC2034 # read by the tests
    EX_FIRST_MS=$(sed -n '1s/^response status=[0-9]* ms=\([0-9]*\) .*/\1/p' "$T/ex.out")
    true
}

# expect_error_shape STATUS WHAT: the first response is STATUS with the
# documented error body {"error": non-empty code, "message": non-empty text}
# (for statuses whose code CONTRACT does not name, any code is taken).
expect_error_shape() {
    expect_code "$1" "$2"
    local e m
    e=$(jget error 2>/dev/null) || fail "$2: no \"error\" member in: $BODY"
    [ -n "$e" ] || fail "$2: empty error code in: $BODY"
    m=$(jget message 2>/dev/null) || fail "$2: no \"message\" in: $BODY"
    [ -n "$m" ] || fail "$2: empty message in: $BODY"
}

# expect_one_answer_then_close WHAT: exactly one response came, and the
# server closed the connection after it.
expect_one_answer_then_close() {
    [ "$EX_N" = 1 ] || fail "$1: expected exactly one response, got $EX_N:
$EX"
    [ "$EX_CLOSED" = 1 ] || fail "$1: the connection was left open after the answer:
$EX"
}

# rss_kib PID: the resident set of PID in KiB.
rss_kib() { awk '$1 == "VmRSS:" {print $2}' "/proc/$1/status"; }

# metric NAME: the value of NAME in $URL/metrics (empty if absent).
metric() { curl -s --max-time 5 "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

# close_wait_on PORT: sockets in CLOSE-WAIT whose local port is PORT (the
# server's side of connections its clients have closed).
close_wait_on() { ss -tanH state close-wait "( sport = :$1 )" | wc -l; }
