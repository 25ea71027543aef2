#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gen-man.sh BIN NAME H2M VERSION OUT: the manual page of one installed
# binary, made by help2man from the binary's own --help (the one source of
# each option's text: tenured's comes from src/server/options.def) and the
# prose of man/NAME.h2m (NAME, DESCRIPTION, EXAMPLES, SEE ALSO...).  For
# the tenure CLI, every command listed by "tenure --help" is added as a
# COMMANDS subsection holding that command's own --help.  Run by the
# build (man/CMakeLists.txt); needs help2man.
set -euo pipefail
[ $# = 5 ] || { echo "usage: gen-man.sh BIN NAME H2M VERSION OUT" >&2; exit 2; }
bin=$1 name=$2 h2m=$3 version=$4 out=$5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# roff for a block of preformatted text: backslashes escaped, dashes as
# minus signs (so options read and copy as typed), no line taken for a
# request.
roff_nf() {
    printf '.nf\n'
    sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    printf '.fi\n'
}

includes=(-i "$h2m")
if [ "$name" = tenure ]; then
    {
        printf '[COMMANDS]\n'
        "$bin" --help | awk '/^Commands:/ {on = 1; next} on && /^$/ {exit}
            on && /^  [a-z]/ {print $1}' | while read -r cmd; do
            printf '.SS "tenure %s"\n' "$cmd"
            "$bin" "$cmd" --help | roff_nf
        done
    } >"$work/commands.h2m"
    grep -q '^\.SS' "$work/commands.h2m" || { echo "gen-man: no command in tenure --help" >&2; exit 1; }
    includes+=(-i "$work/commands.h2m")
fi
# help2man runs the program by its name: a wrapper of that name, which
# also gives help2man the "Usage:" it looks for where a binary prints
# "usage:".
mkdir "$work/bin"
printf '#!/bin/bash\nset -o pipefail\n"%s" "$@" | sed "1s/^usage:/Usage:/"\n' "$bin" \
    >"$work/bin/$name"
chmod +x "$work/bin/$name"
help2man --no-info --section 1 --version-string "$version" \
    "${includes[@]}" --output "$work/$name.1" "$work/bin/$name"
# No hyphenation: option and variable names are not words to split.
sed -i '/^\.TH /a .nh' "$work/$name.1"
# help2man dates the page by $SOURCE_DATE_EPOCH when it is set (as
# dpkg-buildpackage sets it), so package builds are reproducible.
mv "$work/$name.1" "$out"
