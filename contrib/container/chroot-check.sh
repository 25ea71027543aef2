#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# chroot-check.sh DIR: the Dockerfile's steps without a container engine.
# Makes DIR a Debian 12 minbase root with debootstrap (unless it is one
# already), copies into it what the Dockerfile COPYs (the packages of
# `make deb`), runs its RUN line there as root, then starts tenured as its
# USER with its ENV (on a free loopback port instead of 0.0.0.0:7300) and
# an auth file at TENURE_AUTH_FILE, and checks its HEALTHCHECK command,
# an acquire with the bearer token, one without (401) and /ui.  What it
# does not prove: the image's layers, VOLUME, EXPOSE, the engine's
# networking and compose.  Needs root, debootstrap and the package mirror;
# takes minutes, so ctest does not run it (docs/OPERATIONS.md).
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
root=${1:?usage: chroot-check.sh DIR}
df=$src/contrib/container/Dockerfile
[ -x "$root/bin/sh" ] ||
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$root.log"
# The Dockerfile with continuation lines joined, comments dropped.
steps=$(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$df" | grep -v '^#')
arg() { grep "^$1 " <<<"$steps" | sed "s/^$1 //"; }

mkdir -p "$root/proc" "$root/run/secrets"
mount -t proc proc "$root/proc"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; umount "$root/proc"' EXIT
cp /etc/resolv.conf "$root/etc/resolv.conf"
read -r -a copy <<<"$(arg COPY)"
dest=${copy[-1]}
mkdir -p "$root$dest"
for s in "${copy[@]:0:${#copy[@]}-1}"; do
    # shellcheck disable=SC2086 # the Dockerfile's glob
    cp "$src"/$s "$root$dest"
done
chroot "$root" /bin/sh -c "$(arg RUN)"
echo "ok - the Dockerfile's RUN installed $(ls "$src"/build/deb/tenured_*.deb | xargs -n1 basename) and its packages"

user=$(arg USER)
declare -A env
for kv in $(arg ENV); do env[${kv%%=*}]=${kv#*=}; done
[ ! -e "$root/etc/tenure/auth.json" ] || { echo "FAIL: the package's auth file is still there" >&2; exit 1; }
token=chroot-check-token
printf '{"principals": [{"name": "admin", "token_sha256": "%s", "admin": true}]}\n' \
    "$(printf '%s' "$token" | sha256sum | cut -d' ' -f1)" >"$root${env[TENURE_AUTH_FILE]}"
chmod 0644 "$root${env[TENURE_AUTH_FILE]}"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
chroot --userspec="$user:$user" "$root" /usr/bin/env -C "$(arg WORKDIR)" \
    TENURE_DATA_DIR="${env[TENURE_DATA_DIR]}" TENURE_AUTH_FILE="${env[TENURE_AUTH_FILE]}" \
    TENURE_LISTEN="127.0.0.1:$port" tenured >"$root.tenured.log" 2>&1 &
pid=$!
hc=$(arg HEALTHCHECK | sed -e 's/.*CMD //' -e "s/7300/$port/")
for _ in $(seq 1 100); do chroot "$root" /bin/sh -c "$hc" 2>/dev/null && break; sleep 0.1; done
chroot "$root" /bin/sh -c "$hc" || { cat "$root.tenured.log" >&2; exit 1; }
echo "ok - tenured runs as $user with the image's environment; its HEALTHCHECK passes"
body='{"name":"chroot:1","owner_id":"c","ttl_ms":30000}'
code=$(curl -s -o /dev/null -w '%{http_code}' -d "$body" "http://127.0.0.1:$port/v1/leases")
[ "$code" = 401 ] || { echo "FAIL: acquire without a token: $code" >&2; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" -d "$body" \
    "http://127.0.0.1:$port/v1/leases")
[ "$code" = 201 ] || { echo "FAIL: acquire with the token: $code" >&2; exit 1; }
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/ui")
[ "$code" = 200 ] || { echo "FAIL: /ui: $code" >&2; exit 1; }
echo "ok - 401 without the bearer token, 201 with it, /ui 200"
