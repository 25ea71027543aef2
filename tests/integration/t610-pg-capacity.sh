#!/usr/bin/env bash
# --max-leases and --max-names on the PostgreSQL store: the same refusals
# as on the embedded store (t190: 503 capacity with Retry-After, counted,
# nothing changed, what was granted unaffected, left again once a lease
# ends or a name is retired), and they count the whole database: a lease
# granted by one instance counts against the limit of another.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-capacity.sh"
need_tools
pg_need

pg_fresh_schema t610a
tn_start_server --store "$PG_URL" --max-leases 3 --max-names 100
for l in leases names; do
    [ "$(refused "$l")" = 0 ] || fail "counter of $l not exported as 0 at start"
done
capacity_leases
tn_kill_server

pg_fresh_schema t610b
SERVER_PID=
PORT=
tn_start_server --store "$PG_URL" --max-names 2 --retain-ms 3000
capacity_names
tn_kill_server
SERVER_PID=

# Two instances on one database, --max-leases 4 each: three leases on
# instance 1 leave one place for instance 2, once it has counted them.
pg_fresh_schema t610c
pg_start_instance 1 "$PG_URL" --max-leases 4
pg_start_instance 2 "$PG_URL" --max-leases 4
URL=${URLS[1]}
for i in 1 2 3; do
    acquire "db:l$i" o 60000
    expect_code 201 "lease $i on instance 1"
done
URL=${URLS[2]}
tn_wait_metric tenure_leases_live 3 "counted instance 1's three leases"
acquire "db:l4" o 60000
expect_code 201 "the fourth lease, on instance 2"
before=$(refused leases)
acquire "db:l5" o 60000
expect_capacity leases "a fifth lease in the database, on instance 2"
URL=${URLS[1]}
tn_wait_metric tenure_leases_live 4 "counted instance 2's lease"
before=$(refused leases)
acquire "db:l5" o 60000
expect_capacity leases "a fifth lease in the database, on instance 1"
pass "--max-leases counts the leases of every instance on the database"
