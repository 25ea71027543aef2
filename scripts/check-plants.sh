#!/usr/bin/env bash
# The negative controls (docs/safety/negative-controls.md) live only in
# tests/plants/*.patch.  Fail if one of them no longer applies to the tree
# (a refactor moved the code it plants into: re-create it by hand, its
# header says what it changes) or if plant code crept back into the
# production sources.
set -euo pipefail
cd "$(dirname "$0")/.."
status=0
for p in tests/plants/*.patch; do
    if ! out=$(git apply --check "$p" 2>&1); then
        echo "check-plants: $p no longer applies: $out" >&2
        status=1
    fi
done
if grep -rn 'TN_PLANT_BUG' src include CMakeLists.txt CMakePresets.json cmake; then
    echo "check-plants: plant code in production files (use tests/plants/)" >&2
    status=1
fi
exit $status
