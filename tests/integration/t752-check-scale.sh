#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tenure-check is O(N log N): a clean history of 8x the operations (all on
# one name, so per-name rules see every lease; each lease renewed, every
# write admitted) must take well under the 64x a pairwise check would, and
# the verdict must stay clean; the same for a history of sessions (one
# session of many leases, many sessions handing one name on).
. "$(dirname "$0")/lib.sh"

CHECK=$TN_BIN/tenure-check
[ -x "$CHECK" ] || fail "no $CHECK"

# gen N: N acquire+renew pairs and N sink admits, leases 1 ms long, 2 ms
# apart, so nothing overlaps.  Integers printed with %.0f (awk's %d is 32-bit).
gen() {
    awk -v n="$1" 'BEGIN {
        t = 0; tok = 0
        for (i = 0; i < n; i++) {
            name = "shard"; p = "p" (i % 50)
            t += 1000; tok++
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"acquire\",\"phase\":\"invoke\",\"name\":\"%s\",\"ttl_ms\":1}\n", t, p, name
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"acquire\",\"phase\":\"ok\",\"token\":%.0f}\n", t, p, tok
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"renew\",\"phase\":\"invoke\",\"name\":\"%s\",\"token\":%.0f,\"ttl_ms\":1}\n", t, p, name, tok
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"renew\",\"phase\":\"ok\",\"token\":%.0f}\n", t, p, tok
            t += 1000
            printf "{\"t\":%.0f,\"src\":\"sink\",\"resource\":\"%s\",\"token\":%.0f,\"decision\":\"admit\"}\n", t, name, tok
            t += 2000000
        }
    }'
}

# gen_sessions N: the session rules' worst case: one session holds N
# leases (a claim each, every name its own) and is renewed after each;
# every eighth round another session takes the name "shard" from the one
# before (each ended first), with a sink admit, and a lease of the long
# session is checked.
gen_sessions() {
    awk -v n="$1" 'BEGIN {
        t = 0; tok = 0
        printf "{\"t\":%.0f,\"proc\":\"w\",\"op\":\"session_open\",\"phase\":\"invoke\",\"ttl_ms\":1000000}\n", t
        t += 1000
        printf "{\"t\":%.0f,\"proc\":\"w\",\"op\":\"session_open\",\"phase\":\"ok\",\"session\":\"S\"}\n", t
        for (i = 0; i < n; i++) {
            t += 1000; tok++
            printf "{\"t\":%.0f,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"invoke\",\"name\":\"n%d\",\"session\":\"S\"}\n", t, i
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"w\",\"op\":\"acquire\",\"phase\":\"ok\",\"token\":%.0f}\n", t, tok
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"w\",\"op\":\"session_renew\",\"phase\":\"invoke\",\"session\":\"S\",\"ttl_ms\":1000000}\n", t
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"w\",\"op\":\"session_renew\",\"phase\":\"ok\"}\n", t
            if (i % 8 != 0)
                continue
            p = "p" (i % 50); s = "s" i
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"session_open\",\"phase\":\"invoke\",\"ttl_ms\":1}\n", t, p
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"session_open\",\"phase\":\"ok\",\"session\":\"%s\"}\n", t, p, s
            t += 1000; tok++
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"acquire\",\"phase\":\"invoke\",\"name\":\"shard\",\"session\":\"%s\"}\n", t, p, s
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"acquire\",\"phase\":\"ok\",\"token\":%.0f}\n", t, p, tok
            printf "{\"t\":%.0f,\"src\":\"sink\",\"resource\":\"shard\",\"token\":%.0f,\"decision\":\"admit\"}\n", t, tok
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"session_end\",\"phase\":\"invoke\",\"session\":\"%s\"}\n", t, p, s
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"%s\",\"op\":\"session_end\",\"phase\":\"ok\"}\n", t, p
            printf "{\"t\":%.0f,\"proc\":\"c\",\"op\":\"check\",\"phase\":\"invoke\",\"name\":\"n%d\",\"token\":%.0f}\n", t, i, tok - 1
            t += 1000
            printf "{\"t\":%.0f,\"proc\":\"c\",\"op\":\"check\",\"phase\":\"ok\",\"current\":true}\n", t
            t += 2000000
        }
    }'
}

# run_ms FILE: milliseconds tenure-check takes on FILE, the best of two
# runs (other tests share the machine); it must exit 0.
run_ms() {
    local start end ms best=
    for _ in 1 2; do
        start=$(date +%s%N)
        "$CHECK" "$1" >"$T/out.json" || fail "$(basename "$1"): not clean"
        end=$(date +%s%N)
        ms=$(((end - start) / 1000000))
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    done
    echo "$best"
}

gen 4000 >"$T/small.jsonl"
gen 32000 >"$T/large.jsonl"
small=$(run_ms "$T/small.jsonl")
large=$(run_ms "$T/large.jsonl")
[ "$small" -ge 1 ] || small=1
ratio=$((large / small))
echo "20k lines: ${small} ms, 160k lines: ${large} ms, ratio $ratio"
[ "$ratio" -le 24 ] || fail "8x the input took ${ratio}x the time: not O(N log N)"
pass "8x the input took ${ratio}x the time"

# The same bound with sessions (docs/safety/sessions.md).
gen_sessions 4000 >"$T/s-small.jsonl"
gen_sessions 32000 >"$T/s-large.jsonl"
small=$(run_ms "$T/s-small.jsonl")
large=$(run_ms "$T/s-large.jsonl")
[ "$small" -ge 1 ] || small=1
ratio=$((large / small))
echo "sessions: $(wc -l <"$T/s-small.jsonl") lines: ${small} ms, $(wc -l <"$T/s-large.jsonl") lines: ${large} ms, ratio $ratio"
[ "$ratio" -le 24 ] || fail "sessions: 8x the input took ${ratio}x the time: not O(N log N)"
pass "sessions: 8x the input took ${ratio}x the time"
