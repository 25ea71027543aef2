#!/usr/bin/env bash
# plant-tree.sh SRC NAME DEST: make DEST a copy of the source tree SRC with
# the negative control NAME (tests/plants/<name>.patch,
# docs/safety/negative-controls.md) applied, for a build that must be
# caught by the checker.
# The production sources never contain a plant; this copy is the only
# place one exists.  Unchanged files keep their times, so a build directory
# kept beside DEST only recompiles what the patch or SRC changed.
set -euo pipefail
src=$1 name=$2 dest=$3
here=$(cd "$(dirname "$0")" && pwd)
patch=$here/$(tr 'A-Z_' 'a-z-' <<<"$name").patch
[ -f "$patch" ] || { echo "plant-tree: no plant $name ($patch)" >&2; exit 1; }
stage=$dest.new
rm -rf "$stage"
mkdir -p "$stage"
tar -C "$src" --exclude=./build --exclude=./.git --exclude=node_modules \
    -cf - . | tar -C "$stage" -xf -
# git apply as a plain patch tool: the ceiling keeps it from taking an
# enclosing repository (the copy often lives under build/) for this one.
GIT_CEILING_DIRECTORIES=$(dirname "$stage") git -C "$stage" apply \
    --whitespace=nowarn "$patch" ||
    { echo "plant-tree: $patch no longer applies to $src" >&2; exit 1; }
echo "$name" >"$stage/.tn-plant"
rm -rf "$dest"
mv "$stage" "$dest"
