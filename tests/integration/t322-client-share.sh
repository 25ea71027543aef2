#!/usr/bin/env bash
# The fair-share recipe (<tenure/share.h>) over a real tenured, with
# tn-share-worker processes writing every shard they hold through the
# fence into one SQLite sink:
# 1. three workers over 13 shards converge to 5/4/4 (shares differ by at
#    most one and add up to 13);
# 2. a fourth joins late and gets its share (4/3/3/3);
# 3. one is frozen (SIGSTOP) past its session's TTL: its shards go to the
#    others, each with a higher token, and the others write them;
# 4. resumed, the frozen worker first writes what it was writing when it
#    froze (with its old tokens): the fence refuses every one of those
#    writes (unfenced, in plain_writes, they land: the negative control),
#    its keepalive reports every one of its shards lost, no write of it
#    with an old token lands after the freeze, and the admitted tokens of
#    every shard never go down;
# 5. it rejoins with a new session and the group balances again; stopped,
#    every worker's session ends and every shard is free.
# TN_SHARE_FENCE=off runs the workers without the fence: step 4 must fail.
# SHARDS=1000 (default 13) is `make demo-shards`, which shows each step.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-client.sh"
WORKER=$TN_BIN/tn-share-worker
[ -x "$WORKER" ] || fail "missing $WORKER"
tn_start_server
need_sessions
G=grp$$
N=${SHARDS:-13}
TTL=1500
say() { printf '=== %s\n' "$*"; }
SINK=$T/sink.db
FENCE=()
[ "${TN_SHARE_FENCE:-on}" = off ] && FENCE=(--no-fence)
declare -A WPID

start_worker() { # NAME
    "$WORKER" "$URL" "$G" "$1" "$N" "$TTL" "$SINK" "${FENCE[@]}" >"$T/$1.out" 2>&1 &
    WPID[$1]=$!
    TN_CLIENT_PIDS+=($!)
}

# The leases of each live session of the group, sorted, e.g. "4 4 5".
shares() {
    "$TENURE" --server "$URL" --json session list --prefix "$G/" |
        sed -n 's/.*"leases":\([0-9]*\).*/\1/p' | sort -n | tr '\n' ' ' | sed 's/ $//'
}

# fair K: the shares of K workers over N shards, sorted ("4 4 5").
fair() {
    local i out=""
    for i in $(seq 1 "$1"); do
        out="$out $((N / $1 + (i > $1 - N % $1 ? 1 : 0)))"
    done
    echo "${out# }"
}

# wait_shares K SECONDS: until the group is K live sessions holding their
# fair shares.
wait_shares() {
    local i got="" want
    want=$(fair "$1")
    for i in $(seq 1 $(($2 * 10))); do
        got=$(shares)
        [ "$got" = "$want" ] && { say "shares of $1 workers: $got"; return 0; }
        sleep 0.1
    done
    fail "shares never became '$want' (last '$got'): $(tail -3 "$T"/w*.out)"
}

# held_by WORKER: "NAME TOKEN" of each shard the worker holds by its own
# account (gained and not lost since).
held_by() {
    awk '$1 == "gained" {t[$2] = $3} $1 == "lost" {delete t[$2]}
         END {for (n in t) {sub("token=", "", t[n]); print n, t[n]}}' "$T/$1.out" | sort
}

# wrote_all WORKER: true when the worker holds shards and has written each
# of them with its token since its last gain or loss (a whole round of
# what it holds now).
wrote_all() {
    awk '$1 == "gained" || $1 == "lost" {split("", w)}
         $1 == "gained" {t[$2] = $3} $1 == "lost" {delete t[$2]}
         $1 == "wrote" {w[$2 " " $3] = 1}
         END {n = 0; for (k in t) {n++; if (!((k " " t[k]) in w)) exit 1}
              exit n == 0}' "$T/$1.out"
}

# 1. Three workers.
say "three workers join group $G over $N shards"
for w in w1 w2 w3; do start_worker "$w"; done
wait_shares 3 30
# 2. A fourth, late.
say "a fourth worker joins late"
start_worker w4
wait_shares 4 30
[ "$(held_by w4 | wc -l)" -ge $((N / 4)) ] || fail "w4 holds $(held_by w4 | wc -l) shards"

# 3. w2 freezes past its TTL.
# Step 4 replays the writes w2 was making when it froze (its last round),
# so it must freeze with a round of what it holds behind it.  Its writer
# runs every 200 ms, but the group settles in well under a second, and on
# a loaded machine w2 had not written once when the freeze came: nothing
# to replay, "w2 made no zombie write".
for i in $(seq 1 100); do
    wrote_all w2 && break
    sleep 0.1
done
wrote_all w2 || fail "w2 has not written the shards it holds: $(cat "$T/w2.out")"
say "w2 freezes (SIGSTOP) past its session's TTL of $TTL ms"
kill -USR1 "${WPID[w2]}"
wait_grep "$T/w2.out" '^frozen' 1 10 || fail "w2 did not freeze"
grep -q '^T' <(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "/proc/${WPID[w2]}/status") ||
    fail "w2 is not stopped"
held_by w2 >"$T/w2.held" # what it held when it froze
[ -s "$T/w2.held" ] || fail "w2 held nothing when it froze"
# Every write w2 makes from now on comes after this row of the sink.
r0=$(sqlite3 "$SINK" "SELECT COALESCE(MAX(rowid), 0) FROM writes")
# Three live sessions again (w2's expired), and they hold everything.
wait_shares 3 30
while read -r name tok; do
    for i in $(seq 1 100); do
        BODY=$("$TENURE" --server "$URL" --json get "$name" 2>/dev/null) && break
        sleep 0.1
    done
    now=$(jget token)
    [ "$now" -gt "$tok" ] || fail "$name went from w2's token $tok to $now"
    # The new holder has written with its token (so the sink's mark is it).
    for i in $(seq 1 100); do
        hw=$(sqlite3 "$SINK" "SELECT COALESCE(MAX(token), 0) FROM writes WHERE shard = '$name'")
        [ "$hw" -ge "$now" ] && break
        sleep 0.1
    done
    [ "$hw" -ge "$now" ] || fail "no write of $name with token $now"
done <"$T/w2.held"

say "its $(wc -l <"$T/w2.held") shards went to the others, each with a higher token"
# 4. w2 wakes up and finishes the writes it was making when it froze.
say "w2 wakes up (SIGCONT) and writes with its old tokens"
kill -CONT "${WPID[w2]}"
wait_grep "$T/w2.out" '^zombie ' 1 10 || fail "w2 made no zombie write: $(cat "$T/w2.out")"
for i in $(seq 1 50); do # each zombie write is answered (wrote or stale)
    z=$(grep -c '^zombie ' "$T/w2.out" || true)
    [ "$(sqlite3 "$SINK" "SELECT COUNT(*) FROM plain_writes WHERE worker = 'w2'")" -ge "$z" ] && break
    sleep 0.1
done
n_zombie=$(grep -c '^zombie ' "$T/w2.out")
control=$(sqlite3 "$SINK" "SELECT COUNT(*) FROM plain_writes WHERE worker = 'w2'")
[ "$control" = "$n_zombie" ] || fail "negative control: $control of $n_zombie zombie writes landed unfenced"
grep '^zombie ' "$T/w2.out" | while read -r _ name tok; do
    grep -q "^stale $name $tok" "$T/w2.out" ||
        fail "w2's zombie write of $name with $tok was not refused: $(grep " $name " "$T/w2.out")"
done
admitted=$(sqlite3 "$SINK" "SELECT COUNT(*) FROM writes WHERE zombie = 1")
[ "$admitted" = 0 ] || fail "the sink admitted $admitted stale writes of the frozen worker: $(sqlite3 "$SINK" 'SELECT * FROM writes WHERE zombie = 1')"
say "the fence refused all $n_zombie of them (unfenced, $control would have landed)"
# Its keepalive tells it every shard is lost, and nothing it wrote with
# a token of its old session landed, zombie or not.
while read -r name tok; do
    wait_grep "$T/w2.out" "^lost $name token=$tok " 1 15 ||
        fail "w2 was never told that $name (token $tok) was lost: $(grep " $name " "$T/w2.out")"
done <"$T/w2.held"
while read -r name tok; do
    late=$(sqlite3 "$SINK" "SELECT COUNT(*) FROM writes WHERE rowid > $r0 AND worker = 'w2' AND shard = '$name' AND token = $tok")
    [ "$late" = 0 ] || fail "$late write(s) of w2 with its old token $tok of $name were admitted after it froze"
done <"$T/w2.held"
say "resumed, w2 was told all $(wc -l <"$T/w2.held") shards were lost; none of its writes with their old tokens landed"
down=$(sqlite3 "$SINK" "SELECT COUNT(*) FROM writes a JOIN writes b ON a.shard = b.shard AND b.rowid > a.rowid AND b.token < a.token")
[ "$down" = 0 ] || fail "$down admitted writes went below a token already admitted"

# 5. w2 rejoins with a new session and higher tokens; then everyone leaves.
wait_shares 4 30
kill -TERM "${WPID[w1]}" "${WPID[w2]}" "${WPID[w3]}" "${WPID[w4]}"
for w in w1 w2 w3 w4; do wait_exit "${WPID[$w]}" 15 || fail "$w did not stop"; done
[ "$(shares)" = "" ] || fail "sessions left after every worker stopped: $(shares)"
left=$("$TENURE" --server "$URL" --json list --prefix "$G:" | wc -l)
[ "$left" = 0 ] || fail "$left shards still held after every worker stopped"
pass "fair share over $N shards: $(fair 3), a late joiner $(fair 4), a frozen worker's shards moved with higher tokens and its $n_zombie stale writes refused by the fence ($control landed unfenced), balanced again"
