# SPDX-License-Identifier: MIT
# The lease state machine (test_lease) and its long runs: the seeded random
# walk and retirement churn (test_lease_walk, also run by scripts/soak.sh).
tn_add_unit_test(test_lease SOURCES test_lease.c LIBS tn_lease)
tn_add_unit_test(test_lease_walk SOURCES test_lease_walk.c LIBS tn_lease)
# Sessions in the state machine: table-driven cases (test_session) and the
# seeded random walk against a shadow model (test_session_walk).
tn_add_unit_test(test_session SOURCES test_session.c LIBS tn_lease)
tn_add_unit_test(test_session_walk SOURCES test_session_walk.c LIBS tn_lease)
