#!/usr/bin/env bash
# The option table (issue 9, operations): `tenured --config-markdown` is the
# table in docs/CONFIG.md, byte for byte, and lists every option of --help;
# `--config FILE` (and TENURE_CONFIG) starts the server with the listen
# address and data dir of the file; an unknown option or a malformed line
# in the file stops it with exit 2 and a message naming the file and line;
# TENURE_* variables override the file and flags override both.  An
# unknown --store names every spelling of the store registry.
# `tenure migrate --help` prints its usage on stdout and exits 0 like every
# other command; its usage errors exit 2.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
for b in tenured tenure tn-json-get; do
    [ -x "$TN_BIN/$b" ] || fail "missing $TN_BIN/$b (build it first)"
done
doc=$TN_SRC/docs/CONFIG.md
[ -f "$doc" ] || fail "missing $doc"

# --- docs/CONFIG.md is generated from the option table ---
"$TN_BIN/tenured" --config-markdown >"$T/md" || fail "--config-markdown exited $?"
# The table is the first block of lines starting with "|".
awk '/^\|/ { p = 1; print; next } p { exit }' "$doc" >"$T/doc-table"
[ "$(wc -l <"$T/md")" -ge 10 ] || fail "--config-markdown printed only: $(cat "$T/md")"
diff -u "$T/doc-table" "$T/md" >"$T/diff" ||
    fail "docs/CONFIG.md's table differs from tenured --config-markdown (regenerate it):
$(cat "$T/diff")"
"$TN_BIN/tenured" --help >"$T/help" || fail "--help exited $?"
n=0
for f in $(grep -oE '^  --[a-z0-9-]+' "$T/help" | tr -d ' '); do
    case $f in --config | --help | --version) continue ;; esac
    grep -q "^| \`$f\` | \`TENURE_$(printf '%s' "${f#--}" | tr 'a-z-' 'A-Z_')\` |" "$T/md" ||
        fail "$f is in --help but not in the --config-markdown table"
    n=$((n + 1))
done
[ "$n" -ge 10 ] || fail "only $n options in --help"
pass "docs/CONFIG.md table equals --config-markdown ($n options, all in --help)"

# start_cfg PORT [env assignments...] -- [tenured args...]: start tenured
# with the environment and arguments given (no --listen/--data-dir added)
# and wait until it is ready on PORT.
start_cfg() {
    local port=$1 envs=()
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift
    TN_WRAP="env ${envs[*]}" tn_server_start -N -p "$port" -l "$T/tenured.log" -- "$@" ||
        fail "tenured $* on $port: $TN_SERVER_ERR"
    tn_main_vars
}
# stop_server: SIGTERM; tenured drains and exits 0 (under ASan, a leak
# report would make it exit non-zero).
stop_server() {
    tn_server_stop main TERM
    [ "$TN_SERVER_RC" = 0 ] || fail "tenured exited $TN_SERVER_RC after SIGTERM"
}
# closed PORT: nothing answers on PORT.
closed() {
    ! curl -s --max-time 2 -o /dev/null "http://127.0.0.1:$1/healthz" 2>/dev/null ||
        fail "something answers on port $1"
}

# --- a config file: listen address and data dir from the file ---
P1=$(tn_safe_port)
P2=$(tn_safe_port)
while [ "$P2" = "$P1" ]; do P2=$(tn_safe_port); done
P3=$(tn_safe_port)
while [ "$P3" = "$P1" ] || [ "$P3" = "$P2" ]; do P3=$(tn_safe_port); done
cat >"$T/tenured.conf" <<EOF
# tenured test config

listen = 127.0.0.1:$P1
   data-dir   =   $T/cfg-data
max-ttl-ms = 5000
EOF
start_cfg "$P1" -- --config "$T/tenured.conf"
[ -d "$T/cfg-data" ] || fail "data dir from the file not created"
[ -n "$(ls -A "$T/cfg-data")" ] || fail "data dir from the file is empty"
acquire cfg:1 ops 5000
expect_code 201 "acquire with ttl at the file's max-ttl-ms"
acquire cfg:2 ops 6000
expect_code 400 "acquire above the file's max-ttl-ms"
stop_server
closed "$P1"
# TENURE_CONFIG names the file too.
start_cfg "$P1" TENURE_CONFIG="$T/tenured.conf" --
get_lease cfg:1
expect_code 200 "lease kept in the file's data dir"
stop_server
pass "--config FILE and TENURE_CONFIG: listen address, data dir and max-ttl-ms from the file"

# --- errors in the file: exit 2, message names the file and line ---
# bad_file LINE3 WHAT PATTERN: a file whose third line is LINE3 is refused.
bad_file() {
    local rc=0
    printf '# bad\nlisten = 127.0.0.1:%s\n%s\n' "$P1" "$1" >"$T/bad.conf"
    timeout 10 "$TN_BIN/tenured" --config "$T/bad.conf" --data-dir "$T/bad-data" \
        >"$T/bad.out" 2>&1 || rc=$?
    [ "$rc" = 2 ] || fail "$2: expected exit 2, got $rc: $(cat "$T/bad.out")"
    grep -qF "$T/bad.conf:3:" "$T/bad.out" ||
        fail "$2: message does not name $T/bad.conf:3: $(cat "$T/bad.out")"
    grep -q -- "$3" "$T/bad.out" || fail "$2: message lacks '$3': $(cat "$T/bad.out")"
    closed "$P1"
}
bad_file "no-such-option = 1" "unknown option" "no-such-option"
bad_file "listen 127.0.0.1:1" "line without =" "name = value"
bad_file "max-ttl-ms = soon" "bad value" "max-ttl-ms\|soon"
bad_file "config = $T/tenured.conf" "config inside a config file" "config"
rc=0
timeout 10 "$TN_BIN/tenured" --config "$T/missing.conf" >"$T/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "missing config file: expected exit 2, got $rc"
grep -qF "$T/missing.conf" "$T/bad.out" || fail "missing config file not named: $(cat "$T/bad.out")"
rc=0
timeout 10 "$TN_BIN/tenured" --commit=fast --data-dir "$T/bad-data" >"$T/bad.out" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "--commit=fast: expected exit 2, got $rc: $(cat "$T/bad.out")"
grep -q -- "--commit: expected inline or thread, got 'fast'" "$T/bad.out" || fail "--commit=fast: $(cat "$T/bad.out")"
rc=0
timeout 10 "$TN_BIN/tenured" --store foo://x --listen 127.0.0.1:0 --data-dir "$T/bad-data" >"$T/bad.out" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "--store foo://x: expected a failure, got exit 0"
grep -qF 'unknown store "foo://x"; --store takes (empty) for embedded, postgresql://... or postgres://... for pg' \
    "$T/bad.out" || fail "--store foo://x does not list the registry's spellings: $(cat "$T/bad.out")"
pass "unknown option, malformed line, bad value, missing file, --commit=fast: exit 2 naming file:line or the option; an unknown --store lists every spelling of the registry"

# --- precedence: file < TENURE_* < flags ---
start_cfg "$P2" TENURE_LISTEN="127.0.0.1:$P2" TENURE_MAX_TTL_MS=60000 -- \
    --config "$T/tenured.conf"
closed "$P1"
acquire cfg:3 ops 10000
expect_code 201 "TENURE_MAX_TTL_MS over the file's max-ttl-ms"
get_lease cfg:1
expect_code 200 "data dir still from the file"
stop_server
pass "TENURE_LISTEN and TENURE_MAX_TTL_MS override the file"

start_cfg "$P3" TENURE_LISTEN="127.0.0.1:$P2" TENURE_MAX_TTL_MS=60000 -- \
    --config "$T/tenured.conf" --listen "127.0.0.1:$P3" --max-ttl-ms 7000
closed "$P1"
closed "$P2"
acquire cfg:4 ops 8000
expect_code 400 "--max-ttl-ms flag over TENURE_MAX_TTL_MS"
acquire cfg:4 ops 7000
expect_code 201 "acquire at the flag's max-ttl-ms"
stop_server
pass "flags override TENURE_* and the file"

# --- tenure migrate: --help and usage errors, without running a migration ---
rc=0
"$TN_BIN/tenure" migrate --help >"$T/mhelp" 2>"$T/mhelp.err" || rc=$?
[ "$rc" = 0 ] || fail "tenure migrate --help: exit $rc: $(cat "$T/mhelp" "$T/mhelp.err")"
grep -q '^Usage: tenure migrate ' "$T/mhelp" || fail "tenure migrate --help: no usage on stdout"
for o in --data-dir --to; do
    grep -q -- "$o" "$T/mhelp" || fail "tenure migrate --help does not name $o: $(cat "$T/mhelp")"
done
[ ! -s "$T/mhelp.err" ] || fail "tenure migrate --help wrote to stderr: $(cat "$T/mhelp.err")"
"$TN_BIN/tenure" migrate -h | grep -q '^Usage: tenure migrate ' || fail "tenure migrate -h"
for args in "" "--data-dir $T/none" "--to postgresql://127.0.0.1:1/x" \
    "--data-dir $T/none --to postgresql://127.0.0.1:1/x extra" "--no-such-flag"; do
    rc=0
    # shellcheck disable=SC2086 # split on purpose
    "$TN_BIN/tenure" migrate $args >"$T/mout" 2>&1 || rc=$?
    [ "$rc" = 2 ] || fail "tenure migrate $args: expected exit 2, got $rc: $(cat "$T/mout")"
    grep -q "tenure migrate --help" "$T/mout" || fail "tenure migrate $args: no hint: $(cat "$T/mout")"
done
[ ! -e "$T/none" ] || fail "a usage error touched the data dir"
pass "tenure migrate --help exits 0 with its usage; usage errors exit 2"
