#!/usr/bin/env bash
# Session events through --publish (docs/SESSIONS.md, FENCING.md): a real
# Redis stream and a Kafka topic (librdkafka's mock cluster) get
# session_opened and session_ended (with how it ended: released, expired,
# revoked) in the event log's order, between the leases' own events and
# with no gap in ids; a session's records carry its id, owner and reason
# and none of a lease's fields; on Kafka they are keyed by the session id.
# After a kill -9 the log, session records and all, is read again: the
# publisher goes on with the next session.  Skips while the store answers
# the session routes 501.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-fence.sh"
. "$(dirname "$0")/lib-publish.sh"
. "$(dirname "$0")/lib-sessions.sh"
command -v kcat >/dev/null || { echo "SKIP: no kcat (scripts/deps.sh)"; exit 77; }
need_tools

pub_start_redis
fence_start_mock lease-events:1
S=tenure:events
PUB=(--publish "redis://127.0.0.1:$REDIS_PORT/$S" --publish-maxlen 0
    --publish "kafka://$BROKERS/lease-events" --publish-opt kafka.message.timeout.ms=1500)
fence_start_server "${PUB[@]}"
sessions_need

s_open pub/released 30000
A=$SID
s_claim "$A" "$SSEC" '["ps:1","ps:2"]'
expect_code 200 "claim"
s_end "$A" "$SSEC"
expect_code 204 "end"
s_open pub/expired 1500 # long enough for the acquire to land first
B=$SID
s_acquire "ps:3" w "$B" "$SSEC"
expect_code 201 "acquire under a short session"
for _ in $(seq 1 500); do
    s_get "$B"
    [ "$CODE" = 404 ] && break
    sleep 0.02
done
expect_error 404 not_found "the short session expired"
s_open pub/revoked 30000
C=$SID
s_claim "$C" "$SSEC" '["ps:4"]'
s_force "$C"
expect_code 204 "force end"
wait_gone "ps:3"

# until every target (both) has sent the whole log
all_caught_up() {
    local lags
    for _ in $(seq 1 600); do
        lags=$(curl -s --max-time 2 "$URL/metrics" | awk '$1 ~ /^tenure_publish_lag_events/ {print $2}' | sort -u | tr '\n' ' ')
        [ "$lags" = "0 " ] && return 0
        sleep 0.05
    done
    fail "the publisher never caught up on every target (lags: $lags)"
}

# Both targets as JSON lines of the records: Redis entries' fields, and
# Kafka values with the record's key beside them.
redis_records() {
    redis-cli -p "$REDIS_PORT" -2 --json XRANGE "$S" - + | /usr/bin/python3 -c '
import json, sys
for _, kv in json.load(sys.stdin):
    print(json.dumps(dict(zip(kv[0::2], kv[1::2]))))'
}
kafka_records() {
    kcat -C -b "$BROKERS" -t lease-events -e -q -f '%k\t%s\n' 2>/dev/null |
        /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    k, v = line.rstrip("\n").split("\t", 1)
    d = json.loads(v)
    d["_key"] = k
    print(json.dumps(d))'
}
all_caught_up
redis_records >"$T/redis.jsonl"
kafka_records >"$T/kafka.jsonl"

/usr/bin/python3 - "$T/redis.jsonl" "$T/kafka.jsonl" "$A" "$B" "$C" <<'EOF' || fail "published session events: see above"
import json, sys
redis = [json.loads(l) for l in open(sys.argv[1])]
kafka = [json.loads(l) for l in open(sys.argv[2])]
a, b, c = sys.argv[3:6]
reasons = {a: "released", b: "expired", c: "revoked"}
owners = {a: "pub/released", b: "pub/expired", c: "pub/revoked"}
bad = []
for target, recs in (("redis", redis), ("kafka", kafka)):
    seen = {}
    for r in recs:
        seen.setdefault(int(r["id"]), r)
    ids = sorted(seen)
    if ids != list(range(ids[0], ids[0] + len(ids))):
        bad.append(f"{target}: ids with a gap: {ids}")
    recs = [seen[i] for i in ids]
    def at(pred):
        return [i for i, r in enumerate(recs) if pred(r)]
    for sid, reason in reasons.items():
        mine = [r for r in recs if r.get("session_id") == sid]
        types = [r["type"] for r in mine]
        if types != ["session_opened", "session_ended"]:
            bad.append(f"{target}: {sid}: {types}")
            continue
        want_o = {"id", "type", "session_id", "owner_id", "at_ms"}
        for r in mine:
            keys = set(r) - {"_key"}
            want = want_o | ({"reason"} if r["type"] == "session_ended" else set())
            if keys != want:
                bad.append(f"{target}: {r['type']} has {sorted(keys)}, want {sorted(want)}")
            if r["owner_id"] != owners[sid]:
                bad.append(f"{target}: owner {r['owner_id']} of {sid}")
            if target == "kafka" and r["_key"] != sid:
                bad.append(f"kafka: {r['type']} keyed {r['_key']!r}, want the session id")
        if mine[1]["reason"] != reason:
            bad.append(f"{target}: {sid} ended {mine[1]['reason']}, want {reason}")
    # a's leases: acquired after its opening, ended (released) after its end
    o = at(lambda r: r.get("session_id") == a and r["type"] == "session_opened")[0]
    e = at(lambda r: r.get("session_id") == a and r["type"] == "session_ended")[0]
    for name in ("ps:1", "ps:2"):
        acq = at(lambda r: r.get("name") == name and r["type"] == "acquired")
        rel = at(lambda r: r.get("name") == name and r["type"] == "released")
        if not acq or not rel or not (o < acq[0] < e < rel[0]):
            bad.append(f"{target}: {name}: opened {o}, acquired {acq}, session ended {e}, released {rel}")
    for name, typ, sid in (("ps:3", "expired", b), ("ps:4", "revoked", c)):
        e = at(lambda r: r.get("session_id") == sid and r["type"] == "session_ended")
        end = at(lambda r: r.get("name") == name and r["type"] == typ)
        if not e or not end or e[0] > end[0]:
            bad.append(f"{target}: {name}: session ended at {e}, its {typ} at {end}")
for b_ in bad:
    print(b_, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
pass "Redis and Kafka: session_opened/session_ended with the reason, in order with the leases' events, no gap; no lease fields; Kafka keyed by the session id"

# kill -9: the log, session records included, is read again at the start.
kill -9 "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
fence_start_server "${PUB[@]}"
s_open pub/after 30000
D=$SID
s_end "$D" "$SSEC"
expect_code 204 "end after the restart"
all_caught_up
redis_records >"$T/redis2.jsonl"
grep -q "\"session_id\": \"$D\", \"owner_id\": \"pub/after\", \"reason\": \"released\"" "$T/redis2.jsonl" ||
    fail "the session ended after the restart is not in Redis: $(tail -3 "$T/redis2.jsonl")"
pass "after kill -9 the publisher reads its log, session records included, and goes on"
