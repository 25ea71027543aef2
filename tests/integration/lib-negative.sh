#!/usr/bin/env bash
# Negative controls (docs/safety/negative-controls.md): build tenure with a
# planted bug (tests/plants/<name>.patch applied to a copy of the tree by
# tests/plants/plant-tree.sh), run the chaos profile that must catch it, and
# require tenure-check (or the crash test's verifier) to report a
# violation; then run the same profile against the build under test, which
# must pass.  Source after lib.sh.  Planted builds are cached in
# TN_PLANT_DIR (default: chaos-plants beside the build tree), so a second
# run only rebuilds what changed; with ccache the plants share one compiler
# cache with each other and the recipes' tree (tn_copy_cmake, lib.sh), so a
# fresh tree compiles the files no patch touches once, not once per plant.

TN_PLANT_DIR=${TN_PLANT_DIR:-$(cd "$TN_BIN/../.." && pwd)/chaos-plants}
IT=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# neg_plant NAME TARGET...: build TARGETs with the bug NAME planted; prints
# a bin directory that has the planted TARGETs and every other program of
# TN_BIN.
neg_plant() {
    local name=$1 b f
    shift
    b=$TN_PLANT_DIR/$name
    mkdir -p "$b"
    (
        flock 9
        # $b/src: the tree with the plant applied; $b/build: its build.
        [ -f "$b/build/CMakeCache.txt" ] || rm -rf "$b"/* # an older layout
        "$IT/../plants/plant-tree.sh" "$TN_SRC" "$name" "$b/src" || exit 1
        if [ ! -f "$b/build/CMakeCache.txt" ]; then
            tn_copy_cmake "$(dirname "$TN_PLANT_DIR")" -S "$b/src" -B "$b/build" \
                "${TN_COPY_FLAGS[@]}" >"$b/configure.log" 2>&1 ||
                { cat "$b/configure.log" >&2; exit 1; }
        fi
        tn_copy_cmake "$(dirname "$TN_PLANT_DIR")" --build "$b/build" -j2 --target "$@" \
            >"$b/build.log" 2>&1 ||
            { tail -30 "$b/build.log" >&2; exit 1; }
    ) 9>"$b.lock" || fail "cannot build the $name plant"
    grep -qx "$name" "$b/src/.tn-plant" || fail "$b is not a $name build"
    local pb=$T/bin-$name
    mkdir -p "$pb"
    for f in "$TN_BIN"/*; do ln -sf "$f" "$pb/"; done
    for f in "$@"; do
        [ -x "$b/build/bin/$f" ] || continue
        ln -sf "$b/build/bin/$f" "$pb/$f"
    done
    mkdir -p "$T/lib"
    ln -sf "$TN_BIN/../lib/"* "$T/lib/" 2>/dev/null || true
    echo "$pb"
}

# neg_caught PLANT_BIN SCRIPT TRIES CLASSES: run the profile SCRIPT against
# the planted binaries until tenure-check reports a violation of one of the
# classes CLASSES (an extended regex; at most TRIES runs: the faults land
# at random instants).  Prints the profile's line.
neg_caught() {
    local pb=$1 script=$2 tries=$3 classes=$4 i out
    for i in $(seq 1 "$tries"); do
        if out=$(TN_BIN=$pb TN_CHAOS_EXPECT=violation bash "$IT/$script" 2>&1) &&
            grep -qE "^ok - .*classes: .*\b($classes)\b" <<<"$out"; then
            echo "caught on run $i: $(grep '^ok - ' <<<"$out")"
            return 0
        fi
        echo "run $i: not caught: $(grep -E '^(FAIL|ok)' <<<"$out" | head -c 600)" >&2
    done
    return 1
}

# neg_clean SCRIPT: the same profile against the build under test passes.
neg_clean() {
    local out
    out=$(TN_CHAOS_EXPECT=clean bash "$IT/$1" 2>&1) ||
        fail "the profile $1 fails against the normal build: $(grep -E '^FAIL' <<<"$out" | head -c 600) $(grep -E '"(class|why)"' <<<"$out" | head -c 3000)"
    grep '^ok - ' <<<"$out"
}
