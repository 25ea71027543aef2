#!/usr/bin/env bash
# The embedded store's file format across versions: a file written by the
# version-2 schema (rows keyed by name) is upgraded in place to version 6
# (rows keyed by an id, a journal next to the file, retired names, an
# incrementally vacuumed file, and sessions: a table of their own and the
# session of each lease row) with every lease, floor and secret intact; tokens
# continue above the file's highest; a file from a newer server is refused;
# two rows of one name (which only an older server writing a newer file
# could leave) resolve to the higher token.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
need_tools
command -v sqlite3 >/dev/null || fail "sqlite3 (the CLI) is not installed"

DB=$T/data/tenure.db
SECRET=00112233445566778899aabbccddeeff
mkdir -p "$T/data"
# A version-2 file as that server wrote it: up:a held (token 40, an expiry
# far ahead), up:b released (token 41, the file's highest).
sqlite3 "$DB" <<EOF
PRAGMA journal_mode=WAL;
CREATE TABLE meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE leases(name TEXT PRIMARY KEY, owner_id TEXT NOT NULL,
  request_id TEXT, token INTEGER NOT NULL, secret BLOB NOT NULL,
  ttl_ms INTEGER NOT NULL, held INTEGER NOT NULL,
  expires_at_ms INTEGER NOT NULL, lock_delay_ms INTEGER NOT NULL,
  principal TEXT) WITHOUT ROWID;
INSERT INTO meta VALUES('schema_version', 2), ('last_token', 41),
  ('alive_at_ms', 1), ('boot_id', 'another-boot');
INSERT INTO leases VALUES('up:a', 'old-owner', NULL, 40, X'$SECRET', 60000, 1,
  9000000000000, 0, NULL);
INSERT INTO leases VALUES('up:b', 'gone', NULL, 41, X'$SECRET', 60000, 0,
  1, 0, NULL);
EOF

# The server holds the file exclusively: read it only while it is stopped.
stop_server() {
    tn_server_stop main TERM
    [ "$TN_SERVER_RC" = 0 ] || fail "tenured exited $TN_SERVER_RC after SIGTERM"
}

tn_start_server
get_lease "up:a"
expect_code 200 "up:a after the upgrade"
expect_field token 40 "up:a keeps its token"
expect_field owner_id old-owner "up:a keeps its owner"
renew "up:a" 40 "$SECRET" 5000
expect_code 200 "renew up:a with the secret stored by the old version"
acquire "up:b" new 60000
expect_code 201 "acquire the released up:b"
expect_field token 42 "the next token is above the file's highest"
acquire "up:c" new 60000
expect_code 201 "a new name"
expect_field token 43 "tokens continue"
stop_server
[ "$(sqlite3 "$DB" "SELECT value FROM meta WHERE key='schema_version'")" = 6 ] ||
    fail "schema not upgraded to 6"
[ "$(sqlite3 "$DB" "PRAGMA auto_vacuum")" = 2 ] ||
    fail "the upgraded file cannot shrink (auto_vacuum is not incremental)"
sqlite3 "$DB" "PRAGMA table_info(leases)" | grep -q '|id|INTEGER|' ||
    fail "leases has no id column after the upgrade"
sqlite3 "$DB" "PRAGMA table_info(leases)" | grep -q '|session|INTEGER|' ||
    fail "leases has no session column after the upgrade"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM sessions")" = 0 ] ||
    fail "the upgraded file has no (empty) sessions table"
[ "$(sqlite3 "$DB" "SELECT count(*) FROM leases WHERE session IS NOT NULL")" = 0 ] ||
    fail "an upgraded lease names a session"
rows=$(sqlite3 "$DB" "SELECT count(*), count(DISTINCT name), count(DISTINCT id) FROM leases")
[ "$rows" = "3|3|3" ] || fail "rows after the upgrade (count|names|ids): $rows"
pass "a version-2 file is upgraded in place: leases, secrets and floors kept"

# Restart: the upgraded file loads; every name keeps its row.
tn_start_server
check_token "up:c" 43
expect_code 200 "up:c after a restart"
expect_field current true "up:c token 43 still current"
acquire "up:d" new 60000
expect_field token 44 "tokens continue after a restart"
stop_server
[ "$(sqlite3 "$DB" "SELECT count(*), count(DISTINCT name) FROM leases")" = "4|4" ] ||
    fail "a restart added rows: $(sqlite3 "$DB" "SELECT id, name, token FROM leases")"
pass "the upgraded file survives a restart without duplicate rows"

# Two rows of one name: the higher token wins, whatever the row order.
sqlite3 "$DB" "INSERT INTO leases(id, name, owner_id, token, secret, ttl_ms,
  held, expires_at_ms, lock_delay_ms) VALUES(1000, 'up:c', 'stale', 7,
  X'$SECRET', 60000, 1, 9000000000000, 0)"
sqlite3 "$DB" "INSERT INTO leases(id, name, owner_id, token, secret, ttl_ms,
  held, expires_at_ms, lock_delay_ms) VALUES(1001, 'up:a', 'newer', 45,
  X'$SECRET', 60000, 1, 9000000000000, 0);
  UPDATE meta SET value = 45 WHERE key = 'last_token'"
# Two rows of one token: the one that holds the grant wins, in either order.
sqlite3 "$DB" "INSERT INTO leases(id, name, owner_id, token, secret, ttl_ms,
  held, expires_at_ms, lock_delay_ms) VALUES(1002, 'up:d', 'new', 44,
  X'$SECRET', 60000, 0, 1, 0);
  UPDATE leases SET held = 0 WHERE name = 'up:b';
  INSERT INTO leases(id, name, owner_id, token, secret, ttl_ms,
  held, expires_at_ms, lock_delay_ms) VALUES(1003, 'up:b', 'new', 42,
  X'$SECRET', 60000, 1, 9000000000000, 0)"
tn_start_server
get_lease "up:c"
expect_field token 43 "a lower second row does not win"
get_lease "up:a"
expect_field token 45 "a higher second row wins"
expect_field owner_id newer "the higher row's owner"
check_token "up:d" 44
expect_field current true "up:d: a released twin of the held row does not end the grant"
check_token "up:b" 42
expect_field current true "up:b: a held twin after a released row keeps the grant"
grep -q "two rows of one lease" "$T/tenured.log" || fail "no warning about the duplicate rows"
pass "two rows of one name resolve to the later grant, and to the held row of one grant, with a warning"

# A file from a newer server is refused, with a message that says so.
stop_server
sqlite3 "$DB" "UPDATE meta SET value = 99 WHERE key = 'schema_version'"
rc=0
"$TN_BIN/tenured" --listen "127.0.0.1:$PORT" --data-dir "$T/data" >"$T/newer.log" 2>&1 || rc=$?
[ "$rc" != 0 ] || fail "tenured started on a file of schema version 99"
grep -q "schema version 99" "$T/newer.log" || fail "no clear message: $(cat "$T/newer.log")"
[ "$(sqlite3 "$DB" "SELECT value FROM meta WHERE key='schema_version'")" = 99 ] ||
    fail "the refused file was changed"
pass "a file from a newer server is refused and left as it is"
