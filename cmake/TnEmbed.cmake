# SPDX-License-Identifier: MIT
# tn_embed(OUT TABLE FILES...): generate OUT, a C source holding FILES as the
# struct tn_embed table TABLE (see src/common/embed.h), rebuilt when any of
# them changes.
function(tn_embed out table)
    add_custom_command(OUTPUT ${out}
        COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DTABLE=${table}
            "-DFILES=${ARGN}" -P ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
        DEPENDS ${ARGN} ${CMAKE_SOURCE_DIR}/cmake/embed.cmake
        COMMENT "Embedding ${table}"
        VERBATIM)
endfunction()
