#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# apt-install.sh WHO PKG...: install those of the Debian 12 packages named
# that are missing (idempotent; needs root or sudo), with the packages'
# own system services kept from starting on install (policy-rc.d): the
# project's scripts start every server they need themselves, on free
# ports.  WHO names the caller in the one line it prints.
set -euo pipefail
who=$1
shift

missing=()
for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "$who: installing ${missing[*]}" >&2
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
