#!/usr/bin/env bash
# GET /metrics (issue 9, operations): after known traffic against the real
# tenured (embedded store), every metric the issue names is there with the
# value that traffic implies: per-route request latency histograms, grants,
# renews, releases, expiries, live leases, waiters (1 while one acquire is
# queued), event subscribers (1 while a stream is open), the commit batch
# size and commit latency histograms, and the store sync histogram once the
# server exports it.  Every metric family exported is documented in
# docs/OPERATIONS.md with its type.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
for b in tenured tn-json-get; do
    [ -x "$TN_BIN/$b" ] || fail "missing $TN_BIN/$b (build it first)"
done
# A short heartbeat, so the server notices a closed event stream quickly.
tn_start_server --event-heartbeat-ms 200

# scrape: fetch /metrics into $T/m.
scrape() {
    curl -s --max-time 5 -o "$T/m" -w '%{http_code}' "$URL/metrics" >"$T/mcode" ||
        fail "GET /metrics failed"
    [ "$(cat "$T/mcode")" = 200 ] || fail "GET /metrics: HTTP $(cat "$T/mcode")"
}
# mval SERIES: the value of the series (name with its labels, exactly as
# exported) in the last scrape; fails when it is missing.
mval() {
    awk -v k="$1" '$1 == k { print $2; f = 1; exit } END { exit !f }' "$T/m" ||
        fail "metric $1 missing from /metrics: $(grep -c . "$T/m") lines"
}
# expect_metric SERIES OP VALUE [WHAT]: numeric comparison (OP: == >= > <=).
expect_metric() {
    local v
    v=$(mval "$1")
    awk -v a="$v" -v b="$3" -v op="$2" 'BEGIN {
        a += 0; b += 0; ok = 0
        if (op == "==") ok = a == b
        if (op == ">=") ok = a >= b
        if (op == ">") ok = a > b
        if (op == "<=") ok = a <= b
        exit !ok }' || fail "${4:-metric}: $1 = $v, expected $2 $3"
}
# wait_metric SERIES VALUE [SECONDS]: poll /metrics until SERIES == VALUE.
wait_metric() {
    for _ in $(seq 1 $((${3:-5} * 20))); do
        scrape
        [ "$(mval "$1")" = "$2" ] && return 0
        sleep 0.05
    done
    fail "$1 stayed at $(mval "$1"), expected $2"
}
# expect_type NAME TYPE: the exposition declares NAME with TYPE.
expect_type() {
    grep -qx "# TYPE $1 $2" "$T/m" || fail "no '# TYPE $1 $2' in /metrics"
}
# expect_hist NAME [LABELS]: NAME is a well-formed histogram: buckets in
# increasing le order with non-decreasing counts, a +Inf bucket equal to
# _count, and a _sum.  LABELS (e.g. route="acquire") select one series.
expect_hist() {
    local name=$1 lab=${2:-} sel
    sel=${lab:+$lab,}
    awk -v n="${name}_bucket{$sel" '
        index($1, n) == 1 {
            le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
            if (le == "+Inf") { inf = $2; next }
            if (seen && (le + 0 <= last_le || $2 + 0 < last_c)) bad = 1
            last_le = le + 0; last_c = $2 + 0; seen = 1
        }
        END { if (!seen || inf == "" || inf + 0 < last_c || bad) exit 1; print inf }
    ' "$T/m" >"$T/inf" || fail "histogram $name{$lab}: buckets malformed or missing"
    local suf=""
    [ -z "$lab" ] || suf="{$lab}"
    expect_metric "${name}_count$suf" == "$(cat "$T/inf")" "histogram $name$suf +Inf bucket"
    mval "${name}_sum$suf" >/dev/null
}

# A fresh server starts at zero.
scrape
expect_metric tenure_grants_total == 0 "fresh server"
expect_metric tenure_leases_live == 0 "fresh server"
expect_metric tenure_waiters == 0 "fresh server"
expect_metric tenure_event_subscribers == 0 "fresh server"
pass "fresh server: zero counters"

# An event subscriber, open during the traffic below.
curl -sN --max-time 30 "$URL/v1/events" >"$T/events" 2>/dev/null &
EV=$!
TN_PIDS+=("$EV")
wait_metric tenure_event_subscribers 1
pass "tenure_event_subscribers is 1 while a stream is open"

# Traffic: 3 grants, 1 refused acquire, 2 renews, 1 release, reads.
n_acq=0
declare -A TOK SEC
for n in a:1 a:2 a:3; do
    acquire "$n" ops 30000
    expect_code 201 "acquire $n"
    TOK[$n]=$(jget token)
    SEC[$n]=$(jget lease_secret)
    n_acq=$((n_acq + 1))
done
acquire a:1 other 30000
expect_code 409 "acquire of a held name"
n_acq=$((n_acq + 1))
renew a:1 "${TOK[a:1]}" "${SEC[a:1]}"
expect_code 200 "renew a:1"
renew a:3 "${TOK[a:3]}" "${SEC[a:3]}" 20000
expect_code 200 "renew a:3"
release a:2 "${TOK[a:2]}" "${SEC[a:2]}"
expect_code 204 "release a:2"
for _ in 1 2 3; do
    get_lease a:1
    expect_code 200 "get a:1"
done
get_lease a:2
expect_code 404 "get a:2 after release"
rj GET "/v1/leases?prefix=a:"
expect_code 200 "list"
check_token a:1 "${TOK[a:1]}"
expect_code 200 "check"

scrape
expect_metric tenure_grants_total == 3 "grants"
expect_metric tenure_renews_total == 2 "renews"
expect_metric tenure_releases_total == 1 "releases"
expect_metric tenure_leases_live == 2 "live leases (a:1, a:3)"
expect_metric tenure_leases_known == 3 "names known"
expect_metric tenure_last_token == "${TOK[a:3]}" "last token"
expect_metric 'tenure_http_requests_total{route="acquire",code="2xx"}' == 3 "acquires answered 2xx"
expect_metric 'tenure_http_requests_total{route="acquire",code="4xx"}' == 1 "acquires answered 4xx"
expect_metric 'tenure_http_request_seconds_count{route="acquire"}' == $n_acq "acquire latency count"
expect_metric 'tenure_http_request_seconds_count{route="renew"}' == 2 "renew latency count"
expect_metric 'tenure_http_request_seconds_count{route="release"}' == 1 "release latency count"
expect_metric 'tenure_http_request_seconds_count{route="get"}' == 4 "get latency count"
expect_metric 'tenure_http_request_seconds_count{route="list"}' == 1 "list latency count"
expect_metric 'tenure_http_request_seconds_count{route="check"}' == 1 "check latency count"
expect_metric 'tenure_http_request_seconds_count{route="events"}' == 1 "events latency count"
# Earlier scrapes count too (this one is answered after it is printed).
expect_metric 'tenure_http_request_seconds_count{route="metrics"}' '>=' 2 "metrics latency count"
expect_metric 'tenure_http_request_seconds_sum{route="acquire"}' '>' 0 "acquire latency sum"
# A grant is answered after its commit: it cannot take over 10 s here.
expect_metric 'tenure_http_request_seconds_sum{route="acquire"}' '<=' 10 "acquire latency sum"
for r in acquire list get renew release check history events healthz readyz metrics other; do
    expect_hist tenure_http_request_seconds "route=\"$r\""
done
expect_type tenure_http_request_seconds histogram
pass "per-route request latency histograms, grants, renews, releases, live leases"

# Commits: every grant, renew and release is a row of a committed batch.
mutations=6
expect_metric tenure_commit_rows_total '>=' $mutations "rows committed"
expect_metric tenure_commits_total '>=' 1 "commits"
expect_metric tenure_commits_total '<=' "$(mval tenure_commit_rows_total)" "commits <= rows"
expect_metric tenure_commit_failures_total == 0 "commit failures"
expect_metric tenure_store_ready == 1 "store ready"
expect_hist tenure_commit_batch_rows
expect_type tenure_commit_batch_rows histogram
expect_metric tenure_commit_batch_rows_count == "$(mval tenure_commits_total)" "one batch-size sample per commit"
expect_metric tenure_commit_batch_rows_sum == "$(mval tenure_commit_rows_total)" "batch sizes add up to the rows"
expect_hist tenure_commit_seconds
expect_type tenure_commit_seconds histogram
expect_metric tenure_commit_seconds_count == "$(mval tenure_commits_total)" "one latency sample per commit"
expect_metric tenure_commit_seconds_sum '>' 0 "commit time"
expect_metric tenure_commit_seconds_sum '<=' 10 "commit time"
expect_hist tenure_store_sync_seconds
expect_type tenure_store_sync_seconds histogram
expect_metric tenure_store_sync_seconds_count '>' 0 "store syncs"
expect_metric tenure_store_sync_seconds_count '<=' "$(mval tenure_commits_total)" "store syncs <= commits"
pass "store sync histogram"
pass "commit batch size and commit latency histograms"

# A waiter: queued behind a:1 until a:1 is released.
curl -s --max-time 20 -X POST -H 'Content-Type: application/json' \
    --data-binary '{"name":"a:1","owner_id":"waiter","ttl_ms":30000,"wait_ms":15000}' \
    -w '\n%{http_code}' "$URL/v1/leases" >"$T/waiter" &
W=$!
TN_PIDS+=("$W")
wait_metric tenure_waiters 1
pass "tenure_waiters is 1 while an acquire waits"
release a:1 "${TOK[a:1]}" "${SEC[a:1]}"
expect_code 204 "release a:1 to the waiter"
wait "$W" || fail "waiting acquire failed"
[ "$(tail -1 "$T/waiter")" = 201 ] || fail "waiter: $(cat "$T/waiter")"
scrape
expect_metric tenure_waiters == 0 "waiter served"
expect_metric 'tenure_waits_total{outcome="granted"}' == 1 "waits granted"
expect_metric 'tenure_waits_total{outcome="timed_out"}' == 0 "waits timed out"
expect_metric tenure_grants_total == 4 "grants with the waiter"
expect_metric tenure_releases_total == 2 "releases"
expect_metric 'tenure_http_request_seconds_count{route="acquire"}' == $((n_acq + 1)) "acquire latency count with the waiter"
pass "waiter granted: waiters back to 0, waits_total{granted} 1"

# An expiry: a 200 ms lease left alone.
acquire e:1 ops 200
expect_code 201 "acquire e:1"
wait_metric tenure_expiries_total 1 5
expect_metric tenure_grants_total == 5 "grants"
expect_metric tenure_leases_live == 2 "live leases (a:1 by the waiter, a:3)"
pass "tenure_expiries_total counts an expired lease"

# Events: every grant, release and expiry was published to the stream.
expect_metric tenure_events_total '>=' 8 "events published (5 acquired, 2 released, 1 expired)"
for _ in $(seq 1 100); do
    n=$(grep -c '^data: ' "$T/events" || true)
    [ "$n" -ge 8 ] && break
    sleep 0.05
done
[ "$n" -ge 8 ] || fail "the subscriber saw only $n events"
expect_metric tenure_event_subscribers_cut_total == 0 "no stream cut"
kill "$EV" 2>/dev/null || true
wait "$EV" 2>/dev/null || true
wait_metric tenure_event_subscribers 0 5
pass "events published; tenure_event_subscribers back to 0 after the stream closed"

# Every exported family is documented in docs/OPERATIONS.md with its type.
doc=$TN_SRC/docs/OPERATIONS.md
[ -f "$doc" ] || fail "missing $doc"
grep '^# TYPE ' "$T/m" | while read -r _ _ name type; do
    grep -q "^| \`$name\` | $type |" "$doc" ||
        fail "$name ($type) is exported but not documented in docs/OPERATIONS.md"
done
pass "every exported metric is documented"

# A clean stop after all this (under ASan, a leak would make it non-zero).
rc=0
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || rc=$?
[ "$rc" = 0 ] || fail "tenured exited $rc after SIGTERM"
pass "tenured exits 0 on SIGTERM"
