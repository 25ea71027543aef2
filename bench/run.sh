#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: the benchmarks of bench/, in one go.
set -euo pipefail
exec "$(dirname "$0")/bench-vs-redis.sh" "$@"
