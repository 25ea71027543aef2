#!/usr/bin/env bash
# not under the sanitizers: the packages, built by dpkg-buildpackage without
#   the sanitizers
# The Debian packages (make deb): each .deb is extracted with dpkg-deb -x
# into a temp root and used from there: every binary answers --help,
# tenured from the extracted tree serves an acquire made by the extracted
# CLI, a program builds against libtenure-dev's headers and tenure.pc and
# runs on libtenure0's shared library alone (no libpq, no librdkafka), one
# builds against tenure-pg.pc and runs on libtenure-pg0, the unit and the maintainer scripts
# say what docs/GETTING-STARTED.md and docs/OPERATIONS.md promise, every binary has its
# manual page, and lintian reports no error and no missing or faulty manual page (other
# warnings are printed).  The packages of build/deb/ are reused when
# no source file is newer than them; else scripts/deb.sh builds them
# (a few minutes on a busy machine; --if-stale, as it/t982 does).
. "$(dirname "$0")/lib.sh"
cd "$TN_SRC"
for tool in dpkg-deb dpkg-buildpackage lintian fakeroot; do
    command -v "$tool" >/dev/null || fail "$tool is missing (scripts/deps.sh installs it)"
done
version=$(dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
deb() { echo "build/deb/${1}_${version}_${arch}.deb"; }
pkgs="tenured tenure-tools libtenure0 libtenure-pg0 libtenure-kafka0 libtenure-dev"
jdeb=build/deb/libtenure-java_${version}_all.deb
nice -n 5 scripts/deb.sh --if-stale >/dev/null || fail "make deb failed"

R=$T/root
for p in $pkgs; do
    dpkg-deb -x "$(deb $p)" "$R" || fail "dpkg-deb -x $p"
    dpkg-deb -e "$(deb $p)" "$T/ctl-$p" || fail "dpkg-deb -e $p"
done
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in usr/bin/tenured usr/bin/tenure usr/bin/tenure-materializer usr/bin/tenure-check \
    usr/bin/tenure-migrate usr/lib/$ma/libtenure.so.0 usr/lib/$ma/libtenure.so \
    usr/lib/$ma/libtenure.a usr/lib/$ma/pkgconfig/tenure.pc usr/include/tenure/client.h \
    usr/include/tenure/fence.h lib/systemd/system/tenured.service etc/tenure/tenured.env \
    usr/lib/$ma/libtenure-pg.so.0 usr/lib/$ma/libtenure-kafka.so.0 usr/include/tenure/fence_pg.h \
    usr/include/tenure/fence_kafka.h usr/lib/$ma/pkgconfig/tenure-pg.pc \
    usr/lib/$ma/pkgconfig/tenure-kafka.pc usr/share/man/man1/tenured.1.gz \
    usr/share/man/man1/tenure.1.gz usr/share/man/man1/tenure-materializer.1.gz \
    usr/share/man/man1/tenure-check.1.gz usr/share/man/man1/tenure-migrate.1.gz \
    usr/share/man/man1/tenure-keygen.1.gz; do
    [ -e "$R/$f" ] || fail "no /$f in the packages"
done
pass "the packages hold the server, the tools, the library, headers, tenure.pc, the unit and the manual pages"

for b in tenured tenure tenure-materializer tenure-check tenure-migrate; do
    "$R/usr/bin/$b" --help >"$T/help" 2>&1 || fail "$b --help exited $?: $(cat "$T/help")"
    grep -qi usage "$T/help" || fail "$b --help: $(cat "$T/help")"
done
TN_SERVER_BIN=$R/usr/bin/tenured tn_server_start -d "$T/data" -l "$T/tenured.log" ||
    fail "the packaged tenured did not become ready: $TN_SERVER_ERR"
tn_main_vars
"$R/usr/bin/tenure" --server "127.0.0.1:$PORT" --json acquire deb:1 --ttl 30s --owner pkg \
    >"$T/acq" || fail "acquire through the packaged CLI: $(cat "$T/acq")"
BODY=$(cat "$T/acq"); expect_field token 1 "packaged acquire"; expect_field owner_id pkg "owner"
pass "the extracted binaries run; the packaged tenured serves an acquire"

# libtenure-java: the jar alone (the JDK's java.net.http) takes a lease
# from the packaged tenured.
dpkg-deb -x "$jdeb" "$R" || fail "dpkg-deb -x libtenure-java"
[ -L "$R/usr/share/java/tenure.jar" ] && [ -f "$R/usr/share/java/tenure-$version.jar" ] ||
    fail "libtenure-java holds no /usr/share/java/tenure.jar -> tenure-$version.jar"
cat >"$T/Deb.java" <<'JAVA'
public class Deb {
    public static void main(String[] a) throws Exception {
        tenure.Lease l = tenure.Client.builder().url(a[0]).build().acquire("deb:java", 30000);
        System.out.println(l.token() > 0 && l.held());
        l.release();
    }
}
JAVA
out=$(java -cp "$R/usr/share/java/tenure.jar" "$T/Deb.java" "127.0.0.1:$PORT" 2>&1) && [ "$out" = true ] ||
    fail "the packaged jar: $out"
pass "libtenure-java's jar takes and releases a lease from the packaged tenured"

# libtenure-dev + libtenure0: build with tenure.pc, run on the .so.
cat >"$T/prog.c" <<'C'
#include <stdio.h>
#include <tenure/client.h>
int main(void)
{
    struct tn_client_options o;
    tn_client_options_init(&o);
    printf("%s\n", tn_errname(TN_ELOST));
    return 0;
}
C
pc=$R/usr/lib/$ma/pkgconfig/tenure.pc
grep -qx 'prefix=/usr' "$pc" || fail "tenure.pc prefix: $(cat "$pc")"
grep -qx "libdir=\${prefix}/lib/$ma" "$pc" || fail "tenure.pc libdir: $(cat "$pc")"
# The same file with the prefix moved to the extracted root.
mkdir -p "$T/pc"
sed "s|^prefix=.*|prefix=$R/usr|" "$pc" >"$T/pc/tenure.pc"
cflags=$(PKG_CONFIG_PATH="$T/pc" pkg-config --cflags tenure) || fail "pkg-config --cflags tenure"
libs=$(PKG_CONFIG_PATH="$T/pc" pkg-config --libs tenure) || fail "pkg-config --libs tenure"
grep -q -- "-I$R/usr/include" <<<"$cflags" || fail "tenure.pc cflags: $cflags"
cc $cflags -o "$T/prog" "$T/prog.c" $libs || fail "cannot build against libtenure-dev"
out=$(LD_LIBRARY_PATH="$R/usr/lib/$ma" "$T/prog") || fail "prog exited $?"
[ "$out" = TN_ELOST ] || fail "prog printed '$out'"
# Whole output first: grep -q may stop reading early, and under pipefail
# ldd's SIGPIPE would fail the pipeline even on a match.
deps=$(LD_LIBRARY_PATH="$R/usr/lib/$ma" ldd "$T/prog") || fail "ldd prog failed"
grep -q "$R/usr/lib/$ma/libtenure.so.0" <<<"$deps" ||
    fail "prog does not use the packaged libtenure.so.0: $deps"
# A program that only takes leases needs libtenure alone, and libtenure
# needs neither libpq nor librdkafka (they are behind libtenure-pg and
# libtenure-kafka).
needed=$(readelf -d "$T/prog" | awk '/NEEDED/ {print $NF}' | tr '\n' ' ')
grep -q 'libtenure.so.0' <<<"$needed" || fail "prog needs: $needed"
if grep -Eq 'libpq|librdkafka|libtenure-' <<<"$needed"; then fail "prog needs: $needed"; fi
needed=$(readelf -d "$R/usr/lib/$ma/libtenure.so.0" | awk '/NEEDED/ {print $NF}' | tr '\n' ' ')
if grep -Eq 'libpq|librdkafka' <<<"$needed"; then fail "libtenure.so.0 needs: $needed"; fi
deps=$(grep '^Depends:' "$T/ctl-libtenure0/control")
if grep -Eq 'libpq|librdkafka' <<<"$deps"; then fail "libtenure0 $deps"; fi
pass "a program builds with tenure.pc and runs on libtenure0 alone (no libpq, no librdkafka)"

# The PostgreSQL fence: tenure-pg.pc, run on libtenure-pg0.
cat >"$T/pgprog.c" <<'C'
#include <stdio.h>
#include <tenure/fence_pg.h>
int main(void)
{
    printf("%s\n", tn_fence_pg_ops.name);
    return 0;
}
C
sed "s|^prefix=.*|prefix=$R/usr|" "$R/usr/lib/$ma/pkgconfig/tenure-pg.pc" >"$T/pc/tenure-pg.pc"
pglibs=$(PKG_CONFIG_PATH="$T/pc" pkg-config --libs tenure-pg) || fail "pkg-config --libs tenure-pg"
cc $cflags -o "$T/pgprog" "$T/pgprog.c" $pglibs || fail "cannot build against tenure-pg.pc"
out=$(LD_LIBRARY_PATH="$R/usr/lib/$ma" "$T/pgprog") || fail "pgprog exited $?"
[ "$out" = pg ] || fail "pgprog printed '$out'"
pass "a program builds with tenure-pg.pc and runs on libtenure-pg0"

# The service as packaged: /usr/bin/tenured as the tenure user, data in
# /var/lib/tenure, settings in /etc/tenure; the user and the first auth
# file are made by postinst; purge removes them.
unit=$R/lib/systemd/system/tenured.service
grep -q '^ExecStart=/usr/bin/tenured$' "$unit" || fail "unit ExecStart: $(grep ExecStart "$unit")"
grep -q '^User=tenure$' "$unit" || fail "unit user"
grep -q '^StateDirectory=tenure$' "$unit" || fail "unit state dir"
grep -q '^EnvironmentFile=-/etc/tenure/tenured.env$' "$unit" || fail "unit env file"
grep -q '/etc/tenure/tenured.env' "$T/ctl-tenured/conffiles" || fail "tenured.env is not a conffile"
grep -q 'adduser --system' "$T/ctl-tenured/postinst" || fail "postinst makes no system user"
grep -q 'auth.json' "$T/ctl-tenured/postinst" || fail "postinst writes no auth file"
grep -q 'systemctl\|deb-systemd' "$T/ctl-tenured/postinst" || fail "postinst does not enable the unit"
sh -n "$T/ctl-tenured/postinst" && sh -n "$T/ctl-tenured/postrm" || fail "maintainer script syntax"
pass "unit, conffile and maintainer scripts"

rc=0
debs=()
for p in $pkgs; do debs+=("$(deb $p)"); done
lintian --tag-display-limit 0 "${debs[@]}" >"$T/lintian" 2>&1 || rc=$?
grep -v '^running with root' "$T/lintian" | sed 's/^/  lintian: /' || true
if grep -q '^E: ' "$T/lintian"; then fail "lintian reports errors"; fi
# Every binary has its page (man/), and the pages are clean.
if grep -E ' (no-manual-page|manpage-[a-z-]+|groff-message|binary-without-manpage) ' "$T/lintian"; then
    fail "lintian reports a missing or faulty manual page"
fi
[ "$rc" = 0 ] || fail "lintian exited $rc"
pass "lintian: no errors, no manual-page tag ($(grep -c '^W: ' "$T/lintian" || true) warnings)"
