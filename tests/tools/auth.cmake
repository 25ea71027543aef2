# SPDX-License-Identifier: MIT
# tn-auth-storm: the adversarial renew/release/force-release load of the
# t9xx security tests (curl multi over keep-alive connections).
add_executable(tn-auth-storm ${CMAKE_CURRENT_SOURCE_DIR}/auth/storm.c)
target_link_libraries(tn-auth-storm PRIVATE PkgConfig::CURL PkgConfig::JANSSON)
