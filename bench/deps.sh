#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian 12 packages only `make bench` and `make compare` need: the
# peers (Redis, ZooKeeper, etcd), their load generators and clients (the
# comparison's Python ones too), the profilers, and gnuplot for the
# comparison's chart.
# Idempotent: installs only what is missing.  Needs root (or sudo).
# No service is enabled or started: the bench starts every server itself
# in a temp dir on a free port (scripts/apt-install.sh keeps the packages'
# own services from starting on install).
set -euo pipefail

pkgs=(wrk redis-server redis-tools hyperfine linux-perf
      zookeeper libzookeeper-mt-dev etcd-server etcd-client
      postgresql-15 postgresql-contrib libcurl4-openssl-dev time valgrind
      python3-redis python3-kazoo gnuplot-nox)

exec "$(dirname "$0")/../scripts/apt-install.sh" "bench deps" "${pkgs[@]}"
