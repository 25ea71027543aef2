#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# make deb: build the Debian packages (tenured, tenure-tools, libtenure0,
# libtenure-dev) with dpkg-buildpackage from a copy of the tree in
# build/deb/tenure-<version>/, so that the packages, .buildinfo and
# .changes land in build/deb/ and nothing is written outside build/.
set -euo pipefail
cd "$(dirname "$0")/.."
version=$(dpkg-parsechangelog -S Version)
out=build/deb
src=$out/tenure-$version
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
