#!/usr/bin/env bash
# not under the sanitizers: a negative control of the HA profile's setup
#   (asynchronous replication); tenured's side is t777's, which runs under them
# Negative control of the HA profile (docs/HA.md): the same cluster,
# clients and failover as t777, on asynchronous replication (no
# synchronous_standby_names, tenured without --require-sync-standby).  On
# loopback an asynchronous standby is nearly never behind, so the failover
# cuts its replication stream silently for 1.5 s before the primary is
# killed (the cut never heals): the grants acknowledged meanwhile exist
# only on the dead primary.  The run must be caught: a grant a client was
# told of missing from the promoted primary's ledger, or tenure-check
# finding a token reissued or two holders.  The same cut before each kill
# is harmless in t777, where those commits wait for the standby and are
# never acknowledged.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/lib-server.sh"
. "$(dirname "$0")/lib-pg.sh"
. "$(dirname "$0")/lib-chaos.sh"
. "$(dirname "$0")/lib-ha.sh"
pg_need_server
pg_private_dir
SERVER_PID=""
HA_EXPECT_LOSS=1
HA_CUT_MS=1500
ha_setup async
chaos_init ha-async
URL=$HA_URLS
chaos_clients 3 12 --ttl-min 200 --ttl-max 2000 --names 16
chaos_sleep_ms 3000
ha_failover
chaos_finish
ha_caught "asynchronous replication" "$HA_LOST" "$(grep '^failover 1:' "$T/ledger.log")"
