#!/usr/bin/env bash
# Fail if a C file is not formatted as .clang-format says.
set -euo pipefail
cd "$(dirname "$0")/.."
files=$(git ls-files '*.c' '*.h' 2>/dev/null || find src include tests bench -name '*.[ch]')
[ -n "$files" ] || exit 0
# shellcheck disable=SC2086
clang-format --dry-run -Werror $files
