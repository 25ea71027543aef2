#!/usr/bin/env bash
# Sessions with --auth-file (docs/SECURITY.md "Sessions"): 401 without a
# token; opening, renewing, ending, claiming and releasing are "acquire"
# actions of some prefix, reading sessions a "read" action of some
# prefix; every name of a batch must be permitted or the whole batch is
# 403 and nothing is done; a session is bound to the principal that
# opened it (another one gets 403 even with the secret; admins may);
# force end is for admins only, refused before the body is read.  Skips
# while the store answers the session routes 501 (after the checks that
# need none).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-security.sh"
. "$(dirname "$0")/lib-sessions.sh"
sec_need_auth_flag
need_tools
TOK_NOBODY=$(sec_new_token)
sec_write_auth "$T/auth.json"
# One more principal, with no rule at all.
/usr/bin/python3 - "$T/auth.json" "$(sec_sha "$TOK_NOBODY")" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["principals"].append({"name": "nobody", "token_sha256": sys.argv[2], "allow": []})
json.dump(d, open(sys.argv[1], "w"))
PY
tn_start_server --auth-file "$T/auth.json"
ID=0123456789abcdef0123456789abcdef

# --- what is decided before any store is asked
rq POST /v1/sessions application/json '{"owner_id":"a","ttl_ms":5000}'
expect_unauth "open without a token"
rq GET /v1/sessions -
expect_unauth "list without a token"
rq POST "/v1/sessions/$ID/leases" application/json '{"names":["shard:1"]}'
expect_unauth "claim without a token"
areq "$TOK_READER" POST /v1/sessions '{"owner_id":"r","ttl_ms":5000}'
expect_forbidden "a reader opens a session"
areq "$TOK_NOBODY" PATCH "/v1/sessions/$ID" "{\"session_secret\":\"$ID\"}"
expect_forbidden "a principal without rules renews"
areq "$TOK_NOBODY" POST "/v1/sessions/$ID/leases" "{\"session_secret\":\"$ID\",\"names\":[\"shard:1\"]}"
expect_forbidden "a principal without rules claims"
areq "$TOK_INDEXER" DELETE "/v1/sessions/$ID?force=true" ""
expect_forbidden "a force end by a non-admin"
grep -q "force end is for admins" <<<"$BODY" || fail "force end 403 message: $BODY"
# Refused at the headers: the body is never read.
st=$(/usr/bin/python3 - "$PORT" "$TOK_INDEXER" "$ID" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall((f"DELETE /v1/sessions/{sys.argv[3]}?force=true HTTP/1.1\r\nHost: 127.0.0.1\r\n"
           f"Authorization: Bearer {sys.argv[2]}\r\nContent-Length: 1000\r\n\r\n").encode())
try:
    print(s.recv(4096).split(b" ")[1].decode())
except socket.timeout:
    print("none")
PY
)
[ "$st" = 403 ] || fail "a non-admin's force end with a body: $st before the body, want 403"
pass "401 without a token; 403 for opening without acquire, for a principal without rules, for a force end by a non-admin (before the body)"

areq "$TOK_OPS" GET /v1/sessions
if [ "$CODE" = 501 ]; then
    echo "skip: this store has no sessions yet (501: $BODY)"
    exit 77
fi

# --- with a store that has sessions
areq "$TOK_INDEXER" POST /v1/sessions '{"owner_id":"idx","ttl_ms":30000}'
expect_code 201 "the indexer opens a session"
S=$(jget session_id) SEC=$(jget session_secret)
areq "$TOK_READER" GET "/v1/sessions?prefix=idx"
expect_code 200 "a reader lists sessions"
[ "$(jget sessions.0.session_id)" = "$S" ] || fail "the reader's list: $BODY"
areq "$TOK_CFG" GET "/v1/sessions/$S"
expect_code 200 "a reader of another prefix reads a session"
areq "$TOK_NOBODY" GET "/v1/sessions/$S"
expect_forbidden "a principal without rules reads a session"
areq "$TOK_NOBODY" GET /v1/sessions
expect_forbidden "a principal without rules lists sessions"

areq "$TOK_INDEXER" POST "/v1/sessions/$S/leases" "{\"session_secret\":\"$SEC\",\"names\":[\"shard:1\",\"cfg/x\"]}"
expect_forbidden "a claim with one name outside the principal's prefixes"
grep -q 'cfg/x' <<<"$BODY" || fail "the 403 should name the refused name: $BODY"
# A refused name quoted in the message is cut at 64 bytes on a character
# boundary: 62 ASCII bytes, then a 4-byte character over the cut (issue #36
# follow-up, 2026-12-07: the body was not UTF-8).
long="cfg/$(printf 'x%.0s' $(seq 1 58))"$'\xf0\x9d\x84\x9e'"tail"
areq "$TOK_INDEXER" POST "/v1/sessions/$S/leases" "{\"session_secret\":\"$SEC\",\"names\":[\"$long\"]}"
expect_forbidden "a claim of a long name outside the prefixes"
printf '%s' "$BODY" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 ||
    fail "the 403 quoting a cut name is not UTF-8: $BODY"
areq "$TOK_OPS" GET /v1/leases/shard:1
expect_error 404 not_found "nothing of a refused batch was granted"
areq "$TOK_INDEXER" POST "/v1/sessions/$S/leases" "{\"session_secret\":\"$SEC\",\"names\":[\"shard:1\",\"shard:2\"]}"
expect_code 200 "a claim within the prefix"
T1=$(jget granted.0.token)
[ "$(jlen granted)" = 2 ] || fail "claim: $BODY"
areq "$TOK_INDEXER" DELETE "/v1/sessions/$S/leases" "{\"session_secret\":\"$SEC\",\"leases\":[{\"name\":\"shard:1\",\"token\":$T1},{\"name\":\"cfg/y\",\"token\":1}]}"
expect_forbidden "a batch release with a name outside the prefixes"
areq "$TOK_OPS" GET /v1/leases/shard:1
expect_field token "$T1" "a refused batch release released nothing"
pass "reads of sessions need read on some prefix; a batch with one name outside the principal's prefixes is 403 whole, nothing done"

areq "$TOK_OTHER" PATCH "/v1/sessions/$S" "{\"session_secret\":\"$SEC\"}"
expect_forbidden "another principal renews the session with its secret"
areq "$TOK_OTHER" POST "/v1/sessions/$S/leases" "{\"session_secret\":\"$SEC\",\"names\":[\"shard:3\"]}"
expect_forbidden "another principal claims under the session"
areq "$TOK_OTHER" DELETE "/v1/sessions/$S/leases" "{\"session_secret\":\"$SEC\",\"leases\":[{\"name\":\"shard:1\",\"token\":$T1}]}"
expect_forbidden "another principal releases under the session"
areq "$TOK_OTHER" DELETE "/v1/sessions/$S" "{\"session_secret\":\"$SEC\"}"
expect_forbidden "another principal ends the session"
areq "$TOK_OPS" GET "/v1/sessions/$S"
expect_field leases 2 "refusals changed nothing"
areq "$TOK_OPS" GET /v1/leases/shard:3
expect_error 404 not_found "another principal's claim granted nothing"
areq "$TOK_OPS" PATCH "/v1/sessions/$S" "{\"session_secret\":\"$SEC\"}"
expect_code 200 "an admin renews any session with its secret"
areq "$TOK_INDEXER" DELETE "/v1/sessions/$S" "{\"session_secret\":\"$SEC\"}"
expect_code 204 "the opener ends its session"
pass "a session is bound to its opener: another principal gets 403 with the right secret, an admin may"

areq "$TOK_INDEXER" POST /v1/sessions '{"owner_id":"idx","ttl_ms":30000}'
S2=$(jget session_id) SEC2=$(jget session_secret)
areq "$TOK_INDEXER" POST "/v1/sessions/$S2/leases" "{\"session_secret\":\"$SEC2\",\"names\":[\"shard:9\"]}"
expect_code 200 "claim before a force end"
areq "$TOK_OPS" DELETE "/v1/sessions/$S2?force=true" ""
expect_code 204 "an admin's force end"
areq "$TOK_OPS" GET /v1/leases/shard:9
expect_error 404 not_found "a force-ended session's lease"
areq "$TOK_INDEXER" PATCH "/v1/sessions/$S2" "{\"session_secret\":\"$SEC2\"}"
expect_error 409 lost "the force-ended session"
pass "force end by an admin ends the session and its leases"
