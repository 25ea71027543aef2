#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tenure-check is O(N log N): a clean history of 8x the operations (all on
# one name, so per-name rules see every lease; each lease renewed, every
# write admitted) must take well under the 64x a pairwise check would, and
# the verdict must stay clean.
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
