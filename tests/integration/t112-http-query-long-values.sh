#!/usr/bin/env bash
# Two long query values in one request: GET /v1/leases?prefix=<200
# bytes>&after=<200 bytes> is answered correctly.  A front end that hands
# out pointers into a scratch buffer the next lookup reallocates reads
# freed memory here (a heap use-after-free: the asan preset runs this test
# under AddressSanitizer, which stops the server), or lists the wrong
# leases.  Both orders of the parameters, and a few lengths around 200.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-http.sh"
need_tools
tn_start_server

for len in 199 200 240; do
    p=$(head -c "$len" /dev/zero | tr '\0' 'p')
    other=$(head -c "$len" /dev/zero | tr '\0' 'o')
    for s in 1 2 3; do
        acquire "$p$s" o 600000
        expect_code 201 "acquire <$len bytes>$s"
    done
    acquire "${other}1" o 600000
    expect_code 201 "acquire <$len bytes of o>1"
    want="[\"${p}2\",\"${p}3\"]"
    for q in "prefix=$p&after=${p}1" "after=${p}1&prefix=$p"; do
        rj GET "/v1/leases?$q"
        expect_code 200 "list with two $len-byte values ($q)"
        kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured died on two $len-byte query values"
        got=$(printf '%s' "$BODY" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(json.dumps([l["name"] for l in d["leases"]], separators=(",", ":")), d["next"])')
        [ "$got" = "$want None" ] ||
            fail "list with two $len-byte values (${q:0:20}...): expected $want, next null; got $got"
    done
    # after= past every name with the prefix: an empty list.
    rj GET "/v1/leases?prefix=$p&after=${p}3"
    expect_code 200 "list after the last"
    [ "$BODY" = '{"leases":[],"next":null}' ] || fail "list after the last name: $BODY"
done
kill -0 "$SERVER_PID" 2>/dev/null || fail "tenured died"
grep -q 'AddressSanitizer\|runtime error' "$T/tenured.log" &&
    fail "the sanitizers reported an error: $(grep -m3 'AddressSanitizer\|runtime error' "$T/tenured.log")"
pass "prefix and after of 199-240 bytes each, in both orders: the right leases"
