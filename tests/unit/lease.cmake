# SPDX-License-Identifier: MIT
tn_add_unit_test(test_lease SOURCES test_lease.c LIBS tn_lease)
