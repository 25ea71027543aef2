#!/usr/bin/env bash
# Fail if a C or Python source file of the repository is over 600 lines:
# past that, split it by topic (docs/CONTRIBUTING.md).  Generated files
# (a "generated" or "DO NOT EDIT" mark in their first five lines) are
# exempt; files git does not track are not looked at.
set -euo pipefail
cd "$(dirname "$0")/.."
max=600
status=0
while IFS= read -r -d '' f; do
    [ -f "$f" ] || continue
    if head -n 5 "$f" | grep -qiE 'generated|do not edit'; then
        continue
    fi
    n=$(wc -l <"$f")
    if [ "$n" -gt "$max" ]; then
        echo "check-length: $f has $n lines (at most $max: split it by topic)" >&2
        status=1
    fi
done < <(git ls-files -z -- '*.c' '*.h' '*.py')
exit $status
