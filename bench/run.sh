#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# `make bench`: installs the bench-only packages (bench/deps.sh), then runs
# the whole suite (bench/suite.sh: tenured and every peer, one after the
# other, medians of RUNS runs).  The older two-way comparison with durable
# Redis is still there as bench/bench-vs-redis.sh.
set -euo pipefail
here=$(dirname "$0")
"$here/deps.sh"
exec "$here/suite.sh" "$@"
