#!/usr/bin/env bash
# Install the Debian 12 packages tenure builds, runs and tests with.
# Idempotent: installs only what is missing.  Needs root (or sudo).
set -euo pipefail

pkgs=(build-essential cmake pkg-config clang clang-format clang-tidy
      libclang-rt-14-dev curl
      libhttp-parser-dev libssl-dev libjansson-dev libyajl-dev libsqlite3-dev sqlite3 libpq-dev
      libcurl4-openssl-dev openssl libsodium-dev librdkafka-dev libcmocka-dev
      libhiredis-dev postgresql-15 postgresql-contrib kcat faketime spin
      redis-server redis-tools valgrind
      chromium chromium-driver python3-selenium
      python3 python3-pytest python3-psycopg2 python3-setuptools python3-pip
      python3-pyflakes python3-yaml python3-hypothesis python3-jsonschema
      python3-confluent-kafka
      golang-go golang-github-mattn-go-sqlite3-dev golang-github-lib-pq-dev
      debhelper dpkg-dev fakeroot lintian help2man ccache
      etcd-server etcd-client zookeeper python3-redis python3-kazoo gnuplot-nox
      openjdk-17-jdk-headless junit5 libpostgresql-jdbc-java libxerial-sqlite-jdbc-java
      podman runc netavark aardvark-dns iptables catatonit uidmap slirp4netns debootstrap)
# ccache: the negative controls' planted builds share one compiler cache
# (tests/integration/lib-negative.sh).  valgrind: callgrind counts
# instructions per acquire for the perf/insn test (bench/insn.sh).
# etcd-server … gnuplot-nox are for the short comparison (it/t420-fence-compare,
# docs/COMPARE.md): its peers' servers and clients, and the chart.  Then the
# Java client's JDK, JUnit 5 and JDBC drivers (java/), and the container
# engine of it/t982 (podman on runc, its network, debootstrap for the local
# base image: contrib/container/local-images.sh).  The TypeScript client's
# npm packages are installed by scripts/npm-tools.sh js.
# make lint also needs Node.js >= 20.19 with npm (Debian 12's nodejs is 18,
# too old for the pinned @redocly/cli): see scripts/npm-tools.sh.
if [ "${1:-}" = "--bench" ]; then
    pkgs+=(wrk hyperfine linux-perf)
fi

exec "$(dirname "$0")/apt-install.sh" deps "${pkgs[@]}"
