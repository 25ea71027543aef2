#!/usr/bin/env bash
# not under the sanitizers: the manual pages, made at build time from --help
# The manual pages (man/, made by help2man from each binary's --help at
# build time): the build tree is installed into a temp prefix as `make
# install` does, and every binary it installs has a section 1 page there
# that groff renders without a warning (-ww), whose whatis line (lexgrog,
# as lintian reads it) is "NAME - ...", and that names every option its
# --help prints (for the tenure CLI, every command's options too), so a new
# option cannot be missing from its page.
. "$(dirname "$0")/lib.sh"
for tool in groff lexgrog; do
    command -v "$tool" >/dev/null || fail "$tool is missing (man-db and groff-base)"
done
build=$(cd "$TN_BIN/.." && pwd)
[ -d "$build/man" ] && ls "$build/man"/*.1 >/dev/null 2>&1 ||
    fail "no pages in $build/man: is help2man installed (scripts/deps.sh)?"
cmake --install "$build" --prefix "$T/inst" >"$T/install.log" 2>&1 ||
    fail "cmake --install: $(tail -5 "$T/install.log")"
man1=$T/inst/share/man/man1

# options FILE: every --flag a help text names, one per line.
options() { grep -oE -- '--[a-z][a-z0-9-]*[a-z0-9]' "$1" | sort -u; }

n=0
for exe in "$T/inst"/bin/* "$T/inst"/sbin/*; do
    [ -f "$exe" ] && [ -x "$exe" ] || continue
    b=$(basename "$exe")
    page=$man1/$b.1
    [ -f "$page" ] || fail "$b is installed without a manual page ($page)"
    groff -man -Tutf8 -ww -z "$page" 2>"$T/groff.$b" || fail "groff failed on $b.1"
    [ ! -s "$T/groff.$b" ] || fail "groff warns on $b.1: $(cat "$T/groff.$b")"
    whatis=$(lexgrog "$page") || fail "lexgrog cannot read $b.1"
    grep -q ": \"$b - ." <<<"$whatis" || fail "$b.1's whatis line: $whatis"
    groff -man -Tascii -P-cbou -rLL=400n "$page" 2>/dev/null >"$T/page.$b"
    "$exe" --help >"$T/help.$b" 2>&1 || fail "$b --help exited $?"
    if [ "$b" = tenure ]; then
        for cmd in $(awk '/^Commands:/ {on = 1; next} on && /^$/ {exit}
                on && /^  [a-z]/ {print $1}' "$T/help.$b"); do
            grep -q "tenure $cmd" "$T/page.$b" || fail "tenure.1 has no section for '$cmd'"
            "$exe" "$cmd" --help >>"$T/help.$b" 2>&1 || fail "tenure $cmd --help exited $?"
        done
    fi
    for o in $(options "$T/help.$b"); do
        grep -qe "$o" "$T/page.$b" || fail "$b.1 does not mention $o (from $b --help)"
    done
    n=$((n + 1))
done
[ "$n" -ge 6 ] || fail "only $n binaries installed"
pass "each of the $n installed binaries has a page: no groff warning, a whatis line, every option of its --help"
