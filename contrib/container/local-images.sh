#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# local-images.sh CACHE_DIR: the two images the recipe starts from, made
# locally for podman where no image registry can be reached:
#  - debian:12-slim: a Debian 12 minbase root made by debootstrap from
#    Debian's archive, with the apt sources of the official image
#    (bookworm, bookworm-updates, bookworm-security); its tarball is cached
#    in CACHE_DIR, so podman's storage can be rebuilt without debootstrap;
#  - postgres:15: contrib/container/postgres/Dockerfile on it (Debian's
#    postgresql-15, an entrypoint honouring compose.yaml's variables).
# Both are tagged with the names the Dockerfile and compose.yaml use
# (docker.io/library/...), so builds and runs with --pull=never find them.
# An image already in podman's storage is kept.  Needs root, debootstrap,
# podman (runc, `--isolation chroot`) and Debian's mirror.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
cache=${1:?usage: local-images.sh CACHE_DIR}
mirror=${TN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$cache"
base=docker.io/library/debian:12-slim
pg=docker.io/library/postgres:15
have() { podman image exists "$1"; }
b() {
    podman build --isolation chroot --format docker --pull=never \
        --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 "$@"
}

if ! have "$base"; then
    tarball=$cache/debian-12-minbase.tar
    if [ ! -s "$tarball" ]; then
        root=$cache/rootfs
        rm -rf "$root"
        echo "local-images: debootstrap bookworm (minbase) into $root" >&2
        debootstrap --variant=minbase bookworm "$root" "$mirror" >"$cache/debootstrap.log" 2>&1 ||
            { tail -20 "$cache/debootstrap.log" >&2; exit 1; }
        rm -f "$root/etc/apt/sources.list"
        cat >"$root/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${mirror%/debian}/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
        # as the official slim image: no caches, no docs
        rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/usr/share/doc/*
        tar -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
        rm -rf "$root"
    fi
    podman import --change 'CMD ["bash"]' "$tarball" "$base" >/dev/null
    echo "local-images: $base imported from $tarball" >&2
fi
if ! have "$pg"; then
    echo "local-images: building $pg from Debian's postgresql-15" >&2
    b -f "$src/contrib/container/postgres/Dockerfile" -t "$pg" \
        --ignorefile "$src/contrib/container/postgres/Dockerfile.dockerignore" "$src" \
        >"$cache/postgres-build.log" 2>&1 || { tail -20 "$cache/postgres-build.log" >&2; exit 1; }
fi
