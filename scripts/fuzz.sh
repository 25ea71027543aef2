#!/usr/bin/env bash
# fuzz.sh short|long: build the libFuzzer targets (clang, ASan+UBSan, the
# "fuzz" preset) and fuzz each one, starting from its committed corpus.
# short: 10 s per target (make check); long: 600 s per target (make fuzz),
# or FUZZ_SECONDS.  New inputs land in build/fuzz, never in the corpus.
# short runs with a fixed libFuzzer seed, so that make check's verdict on a
# given tree does not depend on the luck of the draw; long draws a new seed
# each run, to explore.  FUZZ_SEED=N overrides either.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-short}
secs=${FUZZ_SECONDS:-$([ "$mode" = long ] && echo 600 || echo 10)}
seed=${FUZZ_SEED:-$([ "$mode" = long ] && echo 0 || echo 1)}
cmake --preset fuzz -DTN_FUZZ_SECONDS="$secs" -DTN_FUZZ_SEED="$seed" >/dev/null
# Only the fuzz targets and their replays: the rest of the tree is built
# and tested by the dev and asan presets.
targets=$(cmake --build --preset fuzz --target help | sed -n 's/^\.\.\. \(fuzz_[a-z_]*\).*/\1/p')
# shellcheck disable=SC2086
cmake --build --preset fuzz -j2 --target $targets >/dev/null
# Two at a time: each target fuzzes for a fixed wall time on a core.
ctest --test-dir build/fuzz -L fuzz --output-on-failure -j2
