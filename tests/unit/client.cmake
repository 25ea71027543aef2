# SPDX-License-Identifier: MIT
# Client library unit tests: safe-time arithmetic and the error table
# (test_client), transport failover against loopback sockets
# (test_client_http), and the keepalive thread against a scripted responder
# (test_client_keepalive, also run by `make tsan`), sessions, claims and
# the keepalive's concurrency against a scripted responder
# (test_client_session, test_client_multi, client_fixture.h), and the
# CLI's helpers
# (test_client_cli).
if(TARGET tn_client)
    tn_add_unit_test(test_client SOURCES test_client.c LIBS tenure_static)
    tn_add_unit_test(test_client_http SOURCES test_client_http.c
        LIBS tenure_static)
    tn_add_unit_test(test_client_keepalive SOURCES test_client_keepalive.c
        LIBS tenure_static)
    tn_add_unit_test(test_client_session SOURCES test_client_session.c
        LIBS tenure_static)
    tn_add_unit_test(test_client_multi SOURCES test_client_multi.c
        LIBS tenure_static)
    tn_add_unit_test(test_client_cli SOURCES test_client_cli.c
        ${CMAKE_SOURCE_DIR}/src/cli/util.c LIBS tenure_static)
    set_property(TEST unit/test_client_keepalive unit/test_client_http
        unit/test_client_session unit/test_client_multi
        APPEND PROPERTY LABELS tsan)
endif()
