#!/bin/sh
# SPDX-License-Identifier: MIT
# Patroni's post_bootstrap (contrib/patroni/patroni.yml.in): runs once, on
# the node that initialised the cluster, with a superuser connection
# string as $1.  Creates the role tenured connects as and its database:
# pg_monitor lets tenured read pg_stat_replication's sync_state, without
# which its synchronous standby check refuses every request
# (--require-sync-standby).  TENURE_DB_PASSWORD, when set, becomes the
# role's password (scram-sha-256); the tests run on trust.
set -eu
psql -X -q -v ON_ERROR_STOP=1 "$1" <<EOF
CREATE ROLE tenure LOGIN ${TENURE_DB_PASSWORD:+PASSWORD '$TENURE_DB_PASSWORD'};
GRANT pg_monitor TO tenure;
CREATE DATABASE tenure OWNER tenure;
EOF
