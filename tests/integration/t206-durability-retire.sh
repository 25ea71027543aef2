#!/usr/bin/env bash
# Retiring names (--retain-ms, docs/safety/retired-names.md): after many
# unique short-lived names, memory and tenure.db follow the live leases,
# not the names ever seen; a retired name answers check with the retired
# floor (at least its last token, current:false), GET 404, renew 409 lost;
# a live lease is never retired; all of it survives kill -9; a new grant of
# a retired name gets a token above the floor.  The 2,000,000-name run
# with its RSS bound is bench/retire.sh names (docs/PERFORMANCE.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-retire.sh"
need_tools
command -v sqlite3 >/dev/null || fail "sqlite3 (the CLI) is not installed"
DB=$T/data/tenure.db
metric() { curl -s --max-time 5 "$URL/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

tn_start_server --retain-ms 1000 --journal-bytes 65536
retire_seed

N=20000
"$TN_BIN/tn-hammer" load --url "$URL" --out /dev/null --unique 1 --count "$N" \
    --ttl-min 100 --ttl-max 100 --conns 16 --duration-ms 100000 --prefix "job:a-name-as-long-as-a-uuid-0123456789abcdef/" ||
    fail "load of $N unique names failed"

# Within a few seconds every ended name older than 1 s is gone (the last
# of the load's names end up to a second after the others: wait for all).
for _ in $(seq 1 300); do
    known=$(metric tenure_leases_known)
    retired=$(metric tenure_names_retired_total)
    [ "${known:-99999}" -le 10 ] && [ "${retired:-0}" -ge "$N" ] && break
    sleep 0.1
done
[ "${known:-99999}" -le 10 ] || fail "names not retired: tenure_leases_known=$known after $N unique names"
[ "$retired" -ge "$N" ] || fail "tenure_names_retired_total=$retired, want >= $N"
floor=$(metric tenure_retired_floor)
[ "$floor" -ge $((N + 3)) ] || fail "tenure_retired_floor=$floor below the last token"
pass "$N unique names retired; the table holds only the live and recent names ($known)"

retire_answers "$floor"
pass "retired: check current:false with the retired floor, GET 404, renew 409 lost; live kept"

# The file follows: after a compaction the rows are gone and the pages
# given back (checked after a clean stop, which settles the journal).
kill -TERM "$SERVER_PID"
wait "$SERVER_PID" 2>/dev/null || true
rows=$(sqlite3 "$DB" "SELECT count(*) FROM leases")
size=$(stat -c %s "$DB")
[ "$rows" -le 10 ] || fail "tenure.db still holds $rows rows"
[ "$(sqlite3 "$DB" "SELECT value FROM meta WHERE key='retired_floor'")" -ge "$floor" ] ||
    fail "tenure.db does not keep the retired floor"
# Kept, the $N rows would take about 2 MB (--retain-ms 0).
[ "$size" -le $((512 * 1024)) ] || fail "tenure.db is $size bytes after $N names were retired"
tn_start_server --retain-ms 1000
pass "tenure.db holds the live names only ($rows rows, $size bytes)"

# After kill -9: the same answers, the floor never lower.
tn_restart_server KILL --retain-ms 1000
check_token "ret:a" "$atok"
expect_field current false "a retired name after kill -9"
f2=$(jget floor)
[ "$f2" -ge "$floor" ] || fail "the retired floor went down across a restart: $f2 < $floor"
renew "ret:b" "$btok" "$bsec"
expect_error 409 lost "renew of a retired grant after kill -9"
check_token "keep:live" "$ltok"
expect_field current true "the live lease after kill -9"
renew "keep:live" "$ltok" "$lsec"
expect_code 200 "the live lease renews after kill -9"
acquire "ret:a" o2 5000
expect_code 201 "a retired name granted again"
ntok=$(jget token)
[ "$ntok" -gt "$f2" ] || fail "new token $ntok not above the retired floor $f2"
check_token "ret:a" "$ntok"
expect_field current true "the new grant"
expect_field floor "$ntok" "the floor is the new token again"
pass "after kill -9: retired floor kept, old grants lost, live lease kept, new token above the floor"
