#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make deb: build the Debian packages (tenured, tenure-tools, libtenure0,
# libtenure-dev) with dpkg-buildpackage from a copy of the tree in
# build/deb/tenure-<version>/, so that the packages, .buildinfo and
# .changes land in build/deb/ and nothing is written outside build/.
#   scripts/deb.sh --if-stale: only when a package of debian/control is
#   missing from build/deb/ or a file they are made from is newer (the
#   tests that use the packages, it/t980 and it/t982, call it: a tree
#   builds them once, whichever test comes first).
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(dpkg-parsechangelog -S Version)
out=build/deb
src=$out/tenure-$version
mkdir -p "$out"
exec 9>build/deb.lock
flock 9 # one build at a time; a second caller then finds it fresh

# fresh: every package is there, and no source file is newer than the
# oldest of them.
fresh() {
    local pkg arch f oldest=""
    while read -r pkg arch; do
        [ "$arch" = all ] || arch=$(dpkg --print-architecture)
        f=$out/${pkg}_${version}_${arch}.deb
        [ -f "$f" ] || return 1
        [ -n "$oldest" ] && [ "$oldest" -ot "$f" ] || oldest=$f
    done < <(awk '/^Package:/ { p = $2 } /^Architecture:/ { print p, $2 }' debian/control)
    [ -n "$oldest" ] || return 1
    while IFS= read -r f; do
        [ "$f" -nt "$oldest" ] && { echo "deb: $f is newer than the packages" >&2; return 1; }
    done < <(git ls-files -co --exclude-standard -- src include debian contrib man java CMakeLists.txt)
    return 0
}
if [ "${1:-}" = --if-stale ] && fresh; then
    ls "$out"/*.deb
    exit 0
fi
rm -rf "$src" "$out"/*.deb "$out"/*.buildinfo "$out"/*.changes
mkdir -p "$src"
# The files git knows (committed or not), minus deleted ones.
git ls-files -z --cached --others --exclude-standard |
    while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
    tar --null -T - -cf - | tar -xf - -C "$src"
(cd "$src" && DEB_BUILD_OPTIONS="nocheck parallel=${TN_DEB_JOBS:-2} ${DEB_BUILD_OPTIONS:-}" \
    dpkg-buildpackage -b -us -uc >../build.log 2>&1) ||
    { tail -40 "$out/build.log" >&2; echo "deb: dpkg-buildpackage failed (log: $out/build.log)" >&2; exit 1; }
rm -rf "$src"
ls "$out"/*.deb
