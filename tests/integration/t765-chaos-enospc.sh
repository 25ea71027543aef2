#!/usr/bin/env bash
# Chaos, short profile: tenured's data directory on a small tmpfs, filled
# to ENOSPC by a filler file under the recording clients, then freed.
# While the disk is full tenured must answer 503 (never a success it could
# not persist); once the filler is gone it must take writes again by
# itself, without a restart.  The history must check clean.  Needs root
# (mount); the tmpfs is unmounted on exit.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-chaos.sh"
[ "$(id -u)" = 0 ] || { echo "skip: needs root to mount a tmpfs"; exit 77; }
secs=${TN_CHAOS_SECONDS:-8}
mnt=$T/mnt
mkdir -p "$mnt"
mount -t tmpfs -o size=4m tmpfs "$mnt" || { echo "skip: cannot mount a tmpfs here"; exit 77; }
trap 'set +e; tn_cleanup_mnt' EXIT
tn_cleanup_mnt() {
    local p
    for p in "${TN_PIDS[@]:-}"; do
        [ -n "$p" ] && { kill -CONT "$p"; kill -9 "$p"; } 2>/dev/null
    done
    tn_server_kill_all # the servers are the launcher's, not in TN_PIDS
    wait 2>/dev/null
    umount "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null
    tn_cleanup
}
export TN_DATA_DIR=$mnt/data

# fill: write zeros until the file system refuses.
fill() {
    dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null || true
    dd if=/dev/zero of="$mnt/filler2" bs=4k 2>/dev/null || true
}
# probe_acquire NAME: CODE of a fresh acquire.
probe_acquire() { acquire "$1" probe 1000; }

chaos_init enospc
chaos_server
chaos_clients 3 "$secs" --ttl-min 200 --ttl-max 800 --names 4
full_503=0
cycle=0
while chaos_running; do
    chaos_sleep_ms "$(chaos_rand 400 900)"
    chaos_running || break
    cycle=$((cycle + 1))
    CHAOS_FAULTS=$((CHAOS_FAULTS + 1))
    fill
    chaos_note "disk full (filler $(du -k "$mnt/filler" | cut -f1) KiB)"
    # Every fresh acquire must now be refused with 503.
    for i in $(seq 1 300); do
        probe_acquire "probe:$cycle:$i"
        [ "$CODE" = 503 ] && break
        [ "$CODE" = 201 ] || fail "acquire on a full disk: $CODE $BODY"
        # a success here is allowed only if it was persisted in space
        # the journal had already reserved (docs/ARCHITECTURE.md, "The
        # journal"); keep filling
        fill
        sleep 0.02
    done
    [ "$CODE" = 503 ] || fail "tenured kept answering 201 on a full disk"
    full_503=$((full_503 + 1))
    chaos_sleep_ms "$(chaos_rand 300 1000)"
    probe_acquire "probe:$cycle:full"
    [ "$CODE" = 503 ] || fail "acquire while the disk is still full: $CODE $BODY"
    rm -f "$mnt/filler" "$mnt/filler2"
    chaos_note "disk freed"
    ok=0
    for i in $(seq 1 200); do
        probe_acquire "probe:$cycle:back:$i"
        [ "$CODE" = 201 ] && { ok=1; break; }
        sleep 0.05
    done
    [ "$ok" = 1 ] || fail "tenured did not take writes again after the disk was freed: $CODE $BODY"
    chaos_note "tenured writable again"
done
chaos_finish
chaos_check
[ "$full_503" -ge 1 ] || fail "the disk was never full ($CHAOS_SUMMARY)"
pass "ENOSPC: $full_503 full-disk episodes, each answered 503 and recovered without a restart; $CHAOS_SUMMARY, no violation"
