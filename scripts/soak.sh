#!/usr/bin/env bash
# soak.sh: the long runs that do not fit in make check.  SOAK_MINUTES
# (default 30) bounds the whole run; each part records its seed so a
# failure can be replayed.  Results go to build/soak/ and the summary to
# stdout (copy it into docs/safety/soak.md).
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=${SOAK_MINUTES:-30}
out=build/soak
mkdir -p "$out"
end=$(($(date +%s) + minutes * 60))
export TN_BIN=$PWD/build/dev/bin TN_SRC=$PWD
runs=0
while [ "$(date +%s)" -lt "$end" ]; do
    runs=$((runs + 1))
    TN_CRASH_CYCLES=50 bash tests/integration/t202-durability-crash.sh \
        >"$out/crash.$runs.log" 2>&1 ||
        { echo "soak: crash run $runs failed, see $out/crash.$runs.log"; exit 1; }
    TN_SEED=$RANDOM$RANDOM "$TN_BIN/test_lease_walk" >"$out/walk.$runs.log" 2>&1 ||
        { echo "soak: random walk failed, see $out/walk.$runs.log"; exit 1; }
done
echo "soak: $runs rounds of 50 kill -9 cycles and a 200k-step random walk each, no violation"
