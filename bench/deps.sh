#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian 12 packages only `make bench` and `make compare` need: the
# peers (Redis, ZooKeeper, etcd), their load generators and clients (the
# comparison's Python ones too), the profilers, and gnuplot for the
# comparison's chart.
# Idempotent: installs only what is missing.  Needs root (or sudo).
# No service is enabled or started: the bench starts every server itself
# in a temp dir on a free port (policy-rc.d keeps the packages' own
# services from starting on install).
set -euo pipefail

pkgs=(wrk redis-server redis-tools hyperfine linux-perf
      zookeeper libzookeeper-mt-dev etcd-server etcd-client
      postgresql-15 postgresql-contrib libcurl4-openssl-dev time valgrind
      python3-redis python3-kazoo gnuplot-nox)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "bench deps: installing ${missing[*]}" >&2
# Keep postinst scripts from starting the packages' system services.
rc=/usr/sbin/policy-rc.d
made_rc=0
if [ ! -e "$rc" ]; then
    printf '#!/bin/sh\nexit 101\n' | $sudo tee "$rc" >/dev/null
    $sudo chmod 755 "$rc"
    made_rc=1
fi
status=0
{ $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null; } || status=$?
[ "$made_rc" = 1 ] && $sudo rm -f "$rc"
exit "$status"
