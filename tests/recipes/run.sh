#!/usr/bin/env bash
# The extension recipes of docs/CONTRIBUTING.md, built and run.  Each
# tests/recipes/RECIPE/ holds what a contributor writes: tree/ (the new
# files, at their paths in the repository) and recipe.patch (the registry
# line, and for an option or a route the few lines beside it), with
# check.sh, which says what the result must do.  This script copies the
# source tree, adds every recipe to the copy, builds it as the dev preset
# does (warnings are errors), checks the copy's layering and exports, and
# runs each recipe's check against what it built.  It also holds the code
# docs/CONTRIBUTING.md quotes to the recipes' files (quotes.py).
#
#   tests/recipes/run.sh [RECIPE...]     check these (default: every one)
#
# TN_BIN is the build under test (its test tools: the Kafka mock, the
# producer); the copy and its build are kept in TN_RECIPE_DIR (default:
# recipes/ beside the build tree), so that a second run rebuilds only what
# changed.  TN_KEEP=1 keeps the temp dir of the checks.
# shellcheck source=tests/integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"
# shellcheck source=tests/integration/lib-server.sh
. "$TN_SRC/tests/integration/lib-server.sh"
# shellcheck source=tests/integration/lib-fence.sh
. "$TN_SRC/tests/integration/lib-fence.sh"

HERE=$TN_SRC/tests/recipes
# shellcheck disable=SC2034 # read by the recipes' check.sh
MAIN_BIN=$TN_BIN
R=${TN_RECIPE_DIR:-$(cd "$TN_BIN/../.." && pwd)/recipes}
ALL=(store sink fence option route)
if [ $# -gt 0 ]; then CHECK=("$@"); else CHECK=("${ALL[@]}"); fi

/usr/bin/python3 "$HERE/quotes.py" "$TN_SRC" || fail "docs/CONTRIBUTING.md quotes code the recipes do not hold"
pass "docs/CONTRIBUTING.md quotes the recipes' own code"

# stage DEST: DEST is a copy of the tree with every recipe added; each
# recipe's files must be new, and its patch must apply to the tree alone.
stage() {
    local dest=$1 r f
    rm -rf "$dest"
    mkdir -p "$dest"
    tar -C "$TN_SRC" --exclude=./build --exclude=./.git --exclude=node_modules \
        --exclude=./tenure-data --exclude=.hypothesis --exclude=__pycache__ \
        -cf - . | tar -C "$dest" -xf -
    for r in "${ALL[@]}"; do
        if [ -d "$HERE/$r/tree" ]; then
            while IFS= read -r f; do
                [ ! -e "$dest/$f" ] || fail "recipe $r: $f is already in the tree"
            done < <(cd "$HERE/$r/tree" && find . -type f | sed 's|^\./||')
            cp -r "$HERE/$r/tree/." "$dest/"
        fi
        # git apply as a plain patch tool: the ceiling keeps it from taking
        # an enclosing repository (the copy often lives under build/).
        GIT_CEILING_DIRECTORIES=$(dirname "$dest") git -C "$dest" apply \
            "$HERE/$r/recipe.patch" ||
            fail "recipe $r: $r/recipe.patch no longer applies to the tree"
    done
}

# digest DIR: a hash of DIR's names and contents (not of its times).
digest() {
    tar -C "$1" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
        -cf - . | sha256sum | cut -d' ' -f1
}

targets=()
for r in "${CHECK[@]}"; do
    [ -f "$HERE/$r/check.sh" ] || fail "no recipe $r (one of: ${ALL[*]})"
    # shellcheck source=/dev/null
    . "$HERE/$r/check.sh"
    read -r -a more <<<"${recipe_targets:?}"
    targets+=("${more[@]}")
done
read -r -a targets <<<"$(printf '%s\n' "${targets[@]}" | sort -u | tr '\n' ' ')"

mkdir -p "$R"
(
    flock 9
    stage "$R/src.new"
    # An unchanged copy keeps its files' times: nothing to rebuild.  In a
    # changed one, every file that differs from the last copy is touched:
    # the copy's times are the tree's, which may be older than the build.
    if [ -d "$R/src" ] && [ "$(digest "$R/src.new")" = "$(digest "$R/src")" ]; then
        rm -rf "$R/src.new"
    else
        if [ -d "$R/src" ]; then
            while IFS= read -r -d '' f; do
                cmp -s "$R/src.new/$f" "$R/src/$f" || touch "$R/src.new/$f"
            done < <(cd "$R/src.new" && find . -type f -print0)
        fi
        rm -rf "$R/src"
        mv "$R/src.new" "$R/src"
    fi
    if [ ! -f "$R/build/CMakeCache.txt" ]; then
        tn_copy_cmake "$(dirname "$R")" -S "$R/src" -B "$R/build" "${TN_COPY_FLAGS[@]}" \
            >"$R/configure.log" 2>&1 || { cat "$R/configure.log" >&2; exit 1; }
    fi
    TN_NICE=5 tn_copy_cmake "$(dirname "$R")" --build "$R/build" -j2 --target "${targets[@]}" \
        >"$R/build.log" 2>&1 || { grep -E 'error|Error' "$R/build.log" | head -30 >&2; exit 1; }
) 9>"$R.lock" || fail "the tree with the recipes does not build (log: $R/build.log)"
pass "the tree with every recipe builds with warnings as errors (${targets[*]})"

# The copy's own lint: layering stays downward, public headers exported.
/usr/bin/python3 "$R/src/scripts/check-includes.py" >"$T/includes.log" 2>&1 ||
    fail "the recipes break the layering: $(cat "$T/includes.log")"
pass "the recipes keep the layering (scripts/check-includes.py on the copy)"

# From here on the copy is the tree under test: its openapi.yaml checks
# the answers recorded by rq, its binaries answer.
TN_SRC=$R/src
TN_BIN=$R/build/bin
# shellcheck disable=SC2034 # read by the recipes' check.sh
RB=$TN_BIN
for r in "${CHECK[@]}"; do
    # shellcheck source=/dev/null
    . "$HERE/$r/check.sh"
    recipe_check
done
