#!/usr/bin/env bash
# Fail if a banned C function appears in the project's sources: unbounded
# copies and formatting, unchecked number parsing, non-reentrant calls.
set -euo pipefail
cd "$(dirname "$0")/.."
banned='\b(strcpy|strcat|sprintf|vsprintf|gets|atoi|atol|strtok|rand|localtime|gmtime)[[:space:]]*\('
if grep -rEn "$banned" --include='*.c' --include='*.h' src include tests bench 2>/dev/null \
        | grep -vE '^\S+:[0-9]+:\s*(/\*|\*)'; then
    echo "check-banned: banned function used: use the capped buffer, strtol-style parsers and the _r variants" >&2
    exit 1
fi
