#!/usr/bin/env bash
# Podman for it/t982 (source after lib.sh): rootful podman on runc, as the
# machine allows it (explicit ulimits, RUN steps with --isolation chroot,
# --format docker so that HEALTHCHECK is kept), with the local base images
# of contrib/container/local-images.sh (no image registry is reached:
# --pull=never).  Every container, pod and secret made here is named
# tenure-t982-PID-* and removed on exit.

# Every podman of the test reads this: runc, and limits the machine lets a
# container set (the defaults raise nofile beyond what it may), for the
# pods' infra containers too.
CONTAINERS_CONF=$T/containers.conf
printf '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n' \
    >"$CONTAINERS_CONF"
export CONTAINERS_CONF

# ctr_engine: whether podman can run a container here; prints why not.
ctr_engine() {
    command -v podman >/dev/null || { echo "podman is not installed (scripts/deps.sh)"; return 1; }
    [ "$(id -u)" = 0 ] || { echo "podman needs root here (no subordinate ids are set up)"; return 1; }
    podman info >"$T/podman-info" 2>&1 || { echo "podman info failed: $(tail -3 "$T/podman-info")"; return 1; }
}

CTR_NAME=tenure-t982-$$
ctr_cleanup() {
    podman pod rm -f "$CTR_NAME-pod" >/dev/null 2>&1 || true
    podman rm -f "$CTR_NAME" >/dev/null 2>&1 || true
    local s
    for s in $(podman secret ls --format '{{.Name}}' 2>/dev/null | grep "^$CTR_NAME-"); do
        podman secret rm "$s" >/dev/null 2>&1 || true
    done
    tn_cleanup
}

# ctr_build TAG DOCKERFILE IGNOREFILE: build from the source tree.
ctr_build() {
    podman build --isolation chroot --format docker --pull=never \
        --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 \
        -t "$1" -f "$2" --ignorefile "$3" "$TN_SRC" >"$T/build.log" 2>&1
}

# ctr_secret NAME FILE: a podman secret (removed on exit); prints its name.
ctr_secret() {
    local s=$CTR_NAME-$1
    podman secret create "$s" "$2" >/dev/null || return 1
    echo "$s"
}

# ctr_wait_cmd SECONDS CMD...: until CMD succeeds.
ctr_wait_cmd() {
    local secs=$1 i
    shift
    for i in $(seq 1 $((secs * 5))); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.2
    done
    return 1
}
