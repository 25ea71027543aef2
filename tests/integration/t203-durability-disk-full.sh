#!/usr/bin/env bash
# Disk full: with the data directory on a small tmpfs filled to ENOSPC,
# mutations get 503 unavailable with Retry-After, /readyz is 503, nothing
# acknowledged is lost, and once space returns the server comes back by
# itself, with its table reloaded from the file (tokens continue, the lease
# granted before the disk filled is still held).  Needs root for the mount.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: mounting a tmpfs needs root"
    exit 77
fi
mnt="$T/small"
mkdir -p "$mnt"
mount -t tmpfs -o size=4m tmpfs "$mnt" || fail "cannot mount a tmpfs"
trap 'kill -9 "${SERVER_PID:-0}" 2>/dev/null; umount -l "$mnt" 2>/dev/null; tn_cleanup' EXIT
TN_DATA_DIR="$mnt/data" tn_start_server

acquire "full:1" before 60000
expect_code 201 "acquire before the disk fills"
tok1=$(jget token)
# Fill the file system.  The journal still takes the records that fit in
# the space it already holds (at most 64 KiB, 128 one-row records, past
# its last record), then it must grow and cannot.
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null || true
dd if=/dev/zero of="$mnt/filler2" bs=4k 2>/dev/null || true
n201=0
for i in $(seq 1 300); do
    acquire "full:x$i" o 60000
    [ "$CODE" = 503 ] && break
    [ "$CODE" = 201 ] || fail "acquire on a full disk: $CODE $BODY"
    n201=$((n201 + 1))
done
[ "$CODE" = 503 ] || fail "no 503 with the disk full after $n201 grants"
[ "$n201" -le 130 ] || fail "$n201 grants on a full disk: more than the journal's reserve"
expect_error 503 unavailable "acquire on a full disk"
grep -qi '^retry-after:' <<<"$HDRS" || fail "503 without Retry-After: $HDRS"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$URL/readyz")" = 503 ] ||
    fail "/readyz not 503 with the disk full"
rj GET "/v1/leases/full:1"
expect_code 503 "reads refused while the store is failed"
pass "disk full: 503 unavailable with Retry-After, /readyz 503"

rm -f "$mnt/filler" "$mnt/filler2"
tn_wait_ready "$URL" 15 || fail "did not come back after space returned"
rj GET "/v1/leases/full:1"
expect_code 200 "the lease granted before the disk filled"
[ "$(jget token)" = "$tok1" ] || fail "lease changed: $BODY"
acquire "full:1" other 1000
expect_error 409 held "the old lease is still held after recovery"
acquire "full:after" o 60000
expect_code 201 "acquire after space returned"
[ "$(jget token)" -gt "$tok1" ] || fail "token did not continue: $BODY"
# Whatever was answered 201 while filling is still there after a restart.
tn_kill_server
TN_DATA_DIR="$mnt/data" tn_start_server
rj GET "/v1/leases/full:after"
expect_code 200 "acknowledged grant survives a restart"
pass "service came back by itself with the table reloaded; tokens continue"
