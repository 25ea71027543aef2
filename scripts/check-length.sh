#!/usr/bin/env bash
# Fail if a source file is too long to read as one piece: a C file or
# header of src/ over 500 lines, or any other C or Python file of the
# repository over 600.  Split a longer one along what its parts do, and
# name the new files for what they hold (docs/CONTRIBUTING.md).  A file of
# src/ that must stay one piece says why in its first ten lines, in a
# comment starting "One file:".  Generated files (a "generated" or "DO NOT
# EDIT" mark in their first five lines) are exempt; files git does not
# track are not looked at.  scripts/length-allow.txt lists the files of
# src/ still being split; a listed file that is back under the cap fails
# too, so that the list only shrinks.
set -euo pipefail
cd "$(dirname "$0")/.."
allow=scripts/length-allow.txt
status=0
allowed() { grep -qxF -- "$1" <(grep -v '^#' "$allow"); }
while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue
    if head -n 5 "$f" | grep -qiE 'generated|do not edit'; then
        continue
    fi
    max=600
    case "$f" in
    src/*.c | src/*.h)
        max=500
        if head -n 10 "$f" | grep -q 'One file:'; then
            max=1000000
        fi
        ;;
    esac
    n=$(wc -l <"$f")
    if [ "$n" -gt "$max" ]; then
        if [ "$max" -eq 500 ] && allowed "$f"; then
            continue
        fi
        echo "check-length: $f has $n lines (at most $max: split it along" \
            "what its parts do)" >&2
        status=1
    elif allowed "$f"; then
        echo "check-length: $f has $n lines now: remove it from $allow" >&2
        status=1
    fi
done < <(git ls-files -z -- '*.c' '*.h' '*.py')
exit $status
